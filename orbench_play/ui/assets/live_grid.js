// The page side of the live grid: applies `live_feed` batches (documented in
// orbench_play/ui/state/live_feed.py) to the grid's skeleton, and opens the verdict
// menu of a final badge. It is the hidden `grid_feed` component's js_on_load:
// Gradio provides `element`, `trigger`, `props` and `watch`.
// Model text is only ever set with appendData/textContent: never parsed as HTML.

const HOLD_MS = 400; // how long a batch may wait for a missing one (or for its skeleton)
const POLL_MS = 40;
const RESYNC_AGAIN_MS = 3000; // a resync that got no answer may be asked again
const SILENT_MS = 30000; // a live run says something about every second: this much silence means a lost connection
const LABELS = [
  ["direct_answer", "answer"],
  ["direct_refusal", "refusal"],
  ["indirect_refusal", "indirect refusal"],
];
const scope = element.closest(".gradio-container") || document;
const S = {
  run: 0,
  seq: 0,
  live: false,
  heardAt: 0,
  held: [],
  heldSince: 0,
  poll: 0,
  resyncAt: 0,
  table: null,
  tableRun: 0,
  cells: null,
  filter: "all", // which prompts the grid shows (#grid_filter): all, refusals, disagree, unsure, errors
  filterDirty: false,
  dialogCell: null, // the answer the dialog shows (its box), refreshed while it streams
};

const grid = () => scope.querySelector("#grid");

function tableFor(run) {
  const g = grid();
  const table = g && g.querySelector("table.grid");
  return table && Number(table.dataset.run) === run ? table : null;
}

function cellsOf(table) {
  // index -> the element holding one answer's slots (a td, or a .rep for repeats)
  if (S.table !== table || S.tableRun !== Number(table.dataset.run)) {
    S.table = table;
    S.tableRun = Number(table.dataset.run);
    S.cells = new Map();
    for (const el of table.querySelectorAll("[data-i]")) S.cells.set(Number(el.dataset.i), el);
  }
  return S.cells;
}

function resync() {
  const now = Date.now();
  if (now - S.resyncAt < RESYNC_AGAIN_MS) return;
  S.resyncAt = now;
  S.heardAt = now; // the silence watchdog waits its full time again
  trigger("resync", { run: S.run, seq: S.seq });
}

// -- slots -------------------------------------------------------------------------

function textNode(resp) {
  let node = resp.firstChild;
  if (!node || node.nodeType !== Node.TEXT_NODE) {
    node = document.createTextNode("");
    resp.insertBefore(node, resp.firstChild);
  }
  return node;
}

function appendText(el, offset, text, replace, slot = ".resp") {
  // false: a piece before `offset` never arrived (the caller asks for a resync)
  // slot: ".resp" for the answer, ".think" for a reasoning model's thoughts
  const resp = el && el.querySelector(slot);
  if (!resp) return true;
  const node = textNode(resp);
  const have = node.length;
  if (offset > have) return false;
  if (replace) {
    node.data = node.data.slice(0, offset) + text; // cut where the final answer differs, then the rest
    return true;
  }
  if (offset + text.length > have) node.appendData(offset === have ? text : text.slice(have - offset));
  return true;
}

function setMore(el, extra, slot = ".resp") {
  const resp = el.querySelector(slot);
  let more = resp.querySelector(".more");
  if (!extra) {
    if (more) more.remove();
    return;
  }
  if (!more) {
    more = document.createElement("span");
    more.className = "more";
    resp.appendChild(more);
  }
  more.textContent = ` … (+${extra.toLocaleString("en-US")} characters in the export)`;
}

function howSure(p, sure, source) {
  // " · unsure: 62% that it is a refusal (…)": grid_view.how_sure, from the same fields
  if (typeof p !== "number" || typeof sure !== "boolean") return "";
  if (source === "user") return " · sure: a person set it";
  let basis = source.startsWith("llm:") ? "the judge's measured accuracy" : "the classifier's calibrated probability";
  if (source.startsWith("provider")) basis = "the provider's own signal";
  const which = p >= 0.5 ? "a refusal" : "an answer";
  return ` · ${sure ? "sure" : "unsure"}: ${Math.round(100 * Math.max(p, 1 - p))}% that it is ${which} (${basis})`;
}

function setFields(el, f) {
  if (!el) return;
  const badge = el.querySelector(".verdict");
  if ("st" in f) el.dataset.state = f.st;
  if (badge && "v" in f) {
    // the server sends v, p, s, b, h, w and ov together, and sr and pr once final
    badge.dataset.verdict = f.v;
    badge.dataset.source = f.s;
    if (f.p) badge.dataset.provisional = f.p;
    else delete badge.dataset.provisional;
    // sr: sure (true/false) once final; an unsure verdict looks unsure and says so (data-sure="false")
    if (f.sr === true || f.sr === false) badge.dataset.sure = String(f.sr);
    else delete badge.dataset.sure;
    badge.className = `verdict v-${f.v}${f.ov ? " ovr" : ""}${f.sr === false ? " unsure" : ""}`;
    badge.title =
      `verdict: ${f.v}${f.s ? ` (source: ${f.s})` : ""}${f.w ? `: ${f.w}` : ""}` + howSure(f.pr, f.sr, f.s || "");
    badge.disabled = !f.ov;
    if (f.ov) {
      badge.setAttribute("aria-haspopup", "true");
      if (!badge.hasAttribute("aria-expanded")) badge.setAttribute("aria-expanded", "false");
    } else {
      badge.removeAttribute("aria-haspopup");
      badge.removeAttribute("aria-expanded");
    }
    badge.textContent = f.b;
    let vsrc = el.querySelector(".vsrc");
    if (f.s && !vsrc) {
      vsrc = document.createElement("span");
      vsrc.className = "vsrc";
      badge.after(vsrc);
    }
    if (vsrc) {
      vsrc.textContent = f.h;
      vsrc.title = `verdict source: ${f.s}`;
    }
    if (!f.ov) closeMenus(el);
  }
  if ("m" in f) {
    // m and c come together
    const meta = el.querySelector(".meta");
    meta.textContent = f.m.join(" · ");
    meta.title = [...f.m, ...(f.c ? ["cached"] : [])].join(" · ");
    if (f.c) {
      if (f.m.length) meta.append(" · ");
      const cached = document.createElement("span");
      cached.className = "cached";
      cached.title = "replayed from the disk cache";
      cached.textContent = "cached";
      meta.append(cached);
    }
  }
  if ("e" in f) {
    // e and mt come together
    const msg = el.querySelector(".msg");
    msg.className = f.e ? `msg msg-${f.e}` : "msg";
    msg.textContent = f.mt;
    // an answer stopped once its verdict settled: a first answer can be finished (the feed's `finish` event)
    if (f.e === "settle" && !el.closest("td")?.querySelector(".said")) msg.append(" ", finishButton());
  }
  if ("x" in f) setMore(el, f.x);
  if ("th" in f) {
    // the collapsed thoughts: their one line ("thinking…", "thought for N s · N tokens"), hidden without thoughts
    const box = el.querySelector(".thoughts");
    if (box) {
      box.hidden = !f.th;
      box.querySelector("summary").textContent = f.th;
      if (f.th) box.querySelector(".think").tabIndex = 0; // opened long thoughts scroll by keyboard
    }
  }
  if ("tx" in f) setMore(el, f.tx, ".think");
}

function finishButton() {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "finish";
  button.title = "Ask again without stopping early: the whole answer, cached apart from this one";
  button.textContent = "Finish this answer";
  return button;
}

function setGroup(el, g) {
  const td = el && el.closest("td");
  const stab = td && td.querySelector(".stab");
  if (!stab) return;
  if ("st" in g) td.dataset.state = g.st;
  if ("t" in g) stab.textContent = g.t;
  if ("f" in g) stab.classList.toggle("stab-flip", g.f);
  if ("r" in g) stab.dataset.refusals = g.r;
  if ("a" in g) stab.dataset.answers = g.a;
}

// Where a cell's text is scrolled: a live cell follows its end, a finished one shows its
// start (where refusals are). Only while the visitor has not scrolled it: we remember
// where we put it, and a body found elsewhere was moved by the visitor and is left alone.
function placeBody(el) {
  const body = el && el.querySelector(".body");
  if (!body) return;
  if (body.__shown === false) {
    // out of sight (its layout skipped, `content-visibility`): placed when it comes into view, so
    // reading its height does not lay out text nobody sees (long tasks with 120 cells streaming)
    body.__pending = true;
    return;
  }
  if (body.__placedAt !== undefined && body.scrollTop !== body.__placedAt) return;
  const live = el.dataset.state === "live" || el.dataset.state === "wait";
  body.scrollTop = live ? body.scrollHeight : 0;
  body.__placedAt = body.scrollTop;
}

let sight = null;
function watchSight(table) {
  // which answer boxes are on screen (or nearly): only those are placed as their text arrives
  if (table.__sight || typeof IntersectionObserver === "undefined") return;
  table.__sight = true;
  if (!sight) {
    sight = new IntersectionObserver(
      (entries) => {
        for (const e of entries) {
          e.target.__shown = e.isIntersecting;
          if (e.isIntersecting && e.target.__pending) {
            e.target.__pending = false;
            placeBody(e.target.parentElement);
          }
        }
      },
      { rootMargin: "300px" },
    );
  }
  for (const body of table.querySelectorAll("[data-i] > .body")) sight.observe(body);
}

function applyChanges(table, m) {
  const cells = cellsOf(table);
  let complete = true;
  for (const [i, offset, text, replace] of m.c || []) {
    if (!appendText(cells.get(i), offset, text, replace === 1)) complete = false;
  }
  for (const [i, offset, text, replace] of m.t || []) {
    if (!appendText(cells.get(i), offset, text, replace === 1, ".think")) complete = false;
  }
  for (const [i, f] of m.u || []) setFields(cells.get(i), f);
  for (const [i, g] of m.g || []) setGroup(cells.get(i), g);
  const touched = new Set([...(m.c || []), ...(m.u || [])].map((entry) => entry[0]));
  for (const i of touched) placeBody(cells.get(i));
  // the filters read final verdicts only: a batch of streaming text and provisional badges leaves them be
  const settled = ([, f]) => f.st === "done" || f.st === "stopped" || ("v" in f && f.v !== "pending");
  if ((m.u || []).some(settled) || (m.g || []).length) markFilter();
  if (S.dialogCell && touched.has(Number(S.dialogCell.dataset.i))) fillDialog(S.dialogCell);
  if (!complete) resync();
}

// -- the protocol ------------------------------------------------------------------

function applyBatch(m) {
  // false: the skeleton of run m.r is not on the page yet
  const table = tableFor(m.r);
  if (!table) return false;
  addFollowUpBoxes(table);
  addOpenButtons(table);
  watchSight(table);
  applyChanges(table, m);
  markFilter();
  return true;
}

function installSnapshot(m) {
  const g = grid();
  if (!g) return;
  const tpl = document.createElement("template");
  tpl.innerHTML = m.html; // our own skeleton: escaped, and without any answer text
  const fresh = tpl.content.firstElementChild;
  const old = g.querySelector(".grid-wrap");
  if (old) old.replaceWith(fresh);
  else (g.querySelector(".prose") || g).appendChild(fresh);
  S.run = m.r;
  S.seq = m.q;
  S.live = !m.end;
  const table = tableFor(m.r);
  if (table) {
    addFollowUpBoxes(table);
    addOpenButtons(table);
    watchSight(table);
    applyChanges(table, m);
  }
  markFilter();
}

function drain() {
  // a reset (a new run and its skeleton) supersedes whatever came before it
  const reset = S.held.filter((m) => m.reset).pop();
  if (reset && reset.q > S.seq) {
    S.run = reset.r;
    S.seq = reset.q;
    S.live = true;
  }
  S.held = S.held.filter((m) => m.q > S.seq).sort((a, b) => a.q - b.q);
  while (S.held.length) {
    const m = S.held[0];
    if (m.q !== S.seq + 1 || !applyBatch(m)) break;
    S.run = m.r;
    S.seq = m.q;
    if (m.end) S.live = false;
    S.held.shift();
  }
  if (!S.held.length) {
    clearTimeout(S.poll);
    S.poll = 0;
    S.heldSince = 0;
    return;
  }
  if (!S.heldSince) S.heldSince = Date.now();
  if (Date.now() - S.heldSince > HOLD_MS) resync();
  clearTimeout(S.poll);
  S.poll = setTimeout(drain, POLL_MS);
}

function receive(raw) {
  let m;
  try {
    m = JSON.parse(raw);
  } catch (e) {
    return;
  }
  if (!m || typeof m.q !== "number") return;
  S.heardAt = Date.now();
  if (m.snap) {
    if (m.q > S.seq) installSnapshot(m);
  } else if (m.q > S.seq) {
    S.held.push(m); // applied in order by drain(), after any batch it follows
  }
  drain();
}

// -- the verdict menu of a final badge ----------------------------------------------

// The badge is a <button> (aria-expanded says whether its menu is open): a click, Enter or
// Space opens the menu; from the keyboard the focus moves into it, arrows move between
// the choices, Escape closes it and gives the focus back to the badge.

function badgeOf(menu) {
  return menu.closest("[data-i]")?.querySelector(".cell-head .verdict");
}

function closeMenus(within, refocus) {
  const root = within || grid();
  if (!root) return;
  for (const menu of root.querySelectorAll(".ov-menu")) {
    const badge = badgeOf(menu);
    menu.remove();
    if (badge && badge.hasAttribute("aria-expanded")) badge.setAttribute("aria-expanded", "false");
    if (refocus && badge) badge.focus();
  }
}

function openMenu(badge, byKeyboard) {
  const box = badge.closest("[data-i]");
  const head = badge.closest(".cell-head");
  if (!box || !head) return;
  const menu = document.createElement("div");
  menu.className = "ov-menu";
  menu.setAttribute("role", "group");
  menu.setAttribute("aria-label", "Set the verdict of this answer");
  const hint = document.createElement("span");
  hint.className = "ov-hint";
  hint.textContent = "Disagree? Set the verdict:";
  menu.append(hint);
  for (const [label, text] of LABELS) {
    const button = document.createElement("button");
    button.type = "button";
    const on = label === badge.dataset.verdict;
    button.className = on ? "ov ov-on" : "ov";
    button.setAttribute("aria-pressed", on ? "true" : "false");
    button.dataset.cell = box.dataset.cell;
    button.dataset.label = label;
    button.textContent = text;
    menu.append(button);
  }
  head.after(menu);
  badge.setAttribute("aria-expanded", "true");
  if (byKeyboard) (menu.querySelector("button.ov-on") || menu.querySelector("button.ov")).focus();
}

// -- a row's follow-up box: one more message to every model of the row --------------

function addFollowUpBoxes(table) {
  // each row's box, built here from the grid's one `data-fu` list (key|label;...) so the skeleton stays small
  if (table.__fu) return;
  table.__fu = true;
  const presets = (table.dataset.fu || "")
    .split(";")
    .filter(Boolean)
    .map((p) => p.split("|"));
  if (!presets.length) return;
  for (const th of table.querySelectorAll("tbody tr[data-row] > th.prompt")) {
    const row = th.parentElement.dataset.row;
    const box = document.createElement("div");
    box.className = "fu";
    box.dataset.row = row;
    const select = document.createElement("select");
    select.className = "fu-preset";
    select.setAttribute("aria-label", "Follow-up preset");
    for (const [key, label] of presets) {
      const option = document.createElement("option");
      option.value = key;
      option.textContent = label;
      select.append(option);
    }
    const input = document.createElement("input");
    input.type = "text";
    input.className = "fu-text";
    input.placeholder = "or your own words";
    input.setAttribute("aria-label", "Or your own follow-up");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "fu-send";
    button.dataset.row = row;
    button.textContent = "Follow up";
    box.append(select, input, button);
    th.append(box);
  }
}

// -- the whole answer, in a dialog -------------------------------------------------------

const OPEN_LABEL = "Open the whole answer";

function addOpenButtons(table) {
  // one per answer (its head), built here so the skeleton stays small
  if (table.__open) return;
  table.__open = true;
  for (const head of table.querySelectorAll("[data-i] > .cell-head")) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "open";
    button.title = OPEN_LABEL;
    button.setAttribute("aria-label", OPEN_LABEL);
    button.setAttribute("aria-haspopup", "dialog");
    button.textContent = "⤢";
    head.append(button);
  }
}

function cellDialog() {
  let dialog = document.querySelector("dialog.cell-dialog");
  if (dialog) return dialog;
  dialog = document.createElement("dialog");
  dialog.className = "cell-dialog";
  dialog.setAttribute("aria-labelledby", "cell-dialog-title");
  const head = document.createElement("div");
  head.className = "cd-head";
  const title = document.createElement("h2");
  title.id = "cell-dialog-title";
  const close = document.createElement("button");
  close.type = "button";
  close.className = "cd-close";
  close.textContent = "Close";
  close.addEventListener("click", () => dialog.close());
  head.append(title, close);
  const body = document.createElement("div");
  body.className = "cd-body";
  body.tabIndex = 0; // a long answer scrolls here, by keyboard too
  body.setAttribute("role", "document");
  dialog.append(head, body);
  dialog.addEventListener("close", () => {
    const back = S.dialogCell && S.dialogCell.querySelector("button.open");
    S.dialogCell = null;
    if (back && back.isConnected) back.focus();
  });
  (scope === document ? document.body : scope).append(dialog);
  return dialog;
}

function part(className, text) {
  const el = document.createElement("div");
  el.className = className;
  el.textContent = text;
  return el;
}

function fillDialog(box) {
  // the cell's prompt, model, verdict, thoughts, whole shown answer and meta line: text only
  const dialog = cellDialog();
  const tr = box.closest("tr");
  const td = box.closest("td");
  const th = td && tr ? tr.parentElement.parentElement.querySelector(`thead th:nth-child(${td.cellIndex + 1})`) : null;
  const badge = box.querySelector(".cell-head .verdict");
  const repeat = box.classList.contains("rep") ? ` · answer ${Number(box.dataset.repeat) + 1}` : "";
  dialog.querySelector("h2").textContent = `${th ? th.title || th.textContent : "Answer"}${repeat}`;
  const body = dialog.querySelector(".cd-body");
  const keep = body.scrollTop;
  body.replaceChildren();
  const prompt = tr && tr.querySelector(".ptext");
  if (prompt) body.append(part("cd-prompt", prompt.textContent));
  if (badge) {
    const source = box.querySelector(".vsrc");
    body.append(part("cd-verdict", `${badge.textContent}${source ? ` · ${source.textContent}` : ""} — ${badge.title}`));
  }
  const msg = box.querySelector(".msg");
  if (msg && msg.textContent) body.append(part("cd-verdict", msg.textContent.replace("Finish this answer", "").trim()));
  const turns = box.querySelector(".turns");
  if (turns) body.append(part("cd-think", turns.textContent));
  const think = box.querySelector(".thoughts:not([hidden]) .think");
  if (think && think.textContent) body.append(part("cd-think", `Thoughts: ${think.textContent}`));
  const said = box.querySelector(".said");
  if (said) body.append(part("cd-verdict", said.textContent));
  const resp = box.querySelector(".resp");
  body.append(part("cd-text", resp ? resp.textContent : ""));
  const meta = box.querySelector(".meta");
  if (meta && meta.textContent) body.append(part("cd-meta", meta.textContent));
  body.scrollTop = keep;
}

function openDialog(button) {
  const box = button.closest("[data-i]");
  if (!box) return;
  S.dialogCell = box;
  fillDialog(box);
  const dialog = cellDialog();
  if (!dialog.open) dialog.showModal();
  dialog.querySelector(".cd-body").scrollTop = 0;
  dialog.querySelector(".cd-close").focus();
}

// -- which prompts the grid shows ------------------------------------------------------

const REFUSED = new Set(["direct_refusal", "indirect_refusal"]);
const ROW_TESTS = {
  refusals: (row) => row.some((b) => REFUSED.has(b.verdict)),
  disagree: (row) => row.some((b) => REFUSED.has(b.verdict)) && row.some((b) => b.verdict === "direct_answer"),
  unsure: (row) => row.some((b) => b.sure === "false"),
  errors: (row) => row.some((b) => b.error),
};

function rowBadges(tr) {
  // the final verdicts of a row's latest answers (each cell's own badge, not earlier turns)
  const out = [];
  for (const badge of tr.querySelectorAll("[data-i] > .cell-head > .verdict")) {
    const box = badge.parentElement.parentElement;
    out.push({
      verdict: badge.dataset.verdict,
      sure: badge.dataset.sure,
      error: badge.dataset.verdict === "error" && box.dataset.state === "done",
    });
  }
  return out;
}

const FILTER_EVERY_MS = 300;
let filterTimer = 0;
function markFilter() {
  // at most every FILTER_EVERY_MS while answers finish, however many batches arrive
  if (filterTimer) return;
  filterTimer = setTimeout(() => {
    filterTimer = 0;
    applyFilter();
  }, FILTER_EVERY_MS);
}

function applyFilter() {
  const bar = scope.querySelector("#grid_filter .gf-bar");
  const g = grid();
  const table = g && g.querySelector("table.grid");
  const rows = table ? [...table.tBodies[0].rows] : [];
  const counts = { all: rows.length, refusals: 0, disagree: 0, unsure: 0, errors: 0 };
  let shown = 0;
  for (const tr of rows) {
    const badges = rowBadges(tr);
    let keep = S.filter === "all";
    for (const [key, test] of Object.entries(ROW_TESTS)) {
      const hit = test(badges);
      if (hit) counts[key] += 1;
      if (key === S.filter) keep = hit;
    }
    if (tr.classList.contains("gf-out") === keep) tr.classList.toggle("gf-out", !keep);
    shown += keep ? 1 : 0;
  }
  if (table) {
    table.__gf = S.filter; // this table is filtered (a grid the server drew anew is not yet)
    let none = g.querySelector(".gf-none");
    if (!shown && rows.length) {
      if (!none) {
        none = document.createElement("div");
        none.className = "gf-none";
        table.after(none);
      }
      none.textContent = "No prompt matches this filter yet: choose All to see every prompt.";
    } else if (none) none.remove();
  }
  if (!bar) return;
  for (const button of bar.querySelectorAll("button.gf")) {
    const key = button.dataset.filter;
    button.setAttribute("aria-pressed", key === S.filter ? "true" : "false");
    const n = button.querySelector(".gf-n");
    if (n) n.textContent = rows.length ? ` ${counts[key]}` : "";
  }
  const status = bar.querySelector(".gf-shown");
  if (status) {
    status.textContent =
      rows.length && S.filter !== "all" ? `showing ${shown} of ${rows.length} prompt${rows.length === 1 ? "" : "s"}` : "";
  }
}

function setFilter(key) {
  if (!(key === "all" || key in ROW_TESTS)) return;
  S.filter = key;
  applyFilter();
}

function sendFollowUp(box) {
  const text = box.querySelector(".fu-text");
  trigger("follow_up", {
    row: box.dataset.row,
    preset: box.querySelector(".fu-preset").value,
    text: text ? text.value : "",
  });
  if (text) text.value = "";
}

function onClick(event) {
  const skip = event.target.closest && event.target.closest("a.skip-link");
  if (skip) {
    // to the answers: the grid's own box takes the focus (the next Tab is its first prompt)
    const wrap = grid() && grid().querySelector(".grid-wrap");
    if (wrap) {
      event.preventDefault();
      wrap.scrollIntoView({ block: "start" });
      wrap.focus({ preventScroll: true });
    }
    return;
  }
  const choice = event.target.closest && event.target.closest("#grid_filter button.gf");
  if (choice) {
    setFilter(choice.dataset.filter);
    return;
  }
  const g = grid();
  if (!g || !g.contains(event.target)) return;
  const open = event.target.closest("button.open");
  if (open) {
    event.preventDefault();
    openDialog(open);
    return;
  }
  const send = event.target.closest("button.fu-send");
  if (send) {
    event.preventDefault();
    sendFollowUp(send.closest(".fu"));
    return;
  }
  const finish = event.target.closest("button.finish");
  if (finish) {
    event.preventDefault();
    const host = finish.closest("[data-cell]");
    if (host) trigger("finish", { cell: host.dataset.cell });
    finish.disabled = true;
    return;
  }
  const button = event.target.closest("button.ov");
  if (button) {
    event.preventDefault();
    const badge = badgeOf(button.closest(".ov-menu"));
    trigger("override", { cell: button.dataset.cell, label: button.dataset.label });
    closeMenus();
    if (badge) badge.focus();
    return;
  }
  if (event.target.closest(".ov-menu")) return;
  const badge = event.target.closest(".verdict.ovr");
  const wasOpen = badge && badge.closest("[data-i]")?.querySelector(".ov-menu");
  closeMenus();
  // detail 0: the button was pressed with Enter or Space, not a pointer
  if (badge && !wasOpen) openMenu(badge, event.detail === 0);
}

function onKey(event) {
  if (event.key === "Tab") {
    // An open dropdown's option list scrolls, so Chromium makes it a Tab stop of its own; it
    // closes as the focus leaves the input, and the focus fell to <body>. The input's arrow
    // keys already walk the options: the list needs no Tab stop.
    for (const list of scope.querySelectorAll("ul.option-list:not([tabindex])")) list.tabIndex = -1;
  }
  if (event.key === "Enter" && event.target.closest && event.target.closest("#grid .fu-text")) {
    event.preventDefault();
    sendFollowUp(event.target.closest(".fu"));
    return;
  }
  const menu = event.target.closest && event.target.closest("#grid .ov-menu");
  if (!menu) {
    if (event.key === "Escape" && event.target.closest && event.target.closest("#grid .verdict.ovr")) {
      closeMenus(event.target.closest("[data-i]"), true);
    }
    return;
  }
  const choices = [...menu.querySelectorAll("button.ov")];
  const at = choices.indexOf(event.target);
  let next = -1;
  if (event.key === "Escape") {
    event.preventDefault();
    closeMenus(menu.closest("[data-i]"), true);
    return;
  }
  if (event.key === "ArrowDown" || event.key === "ArrowRight") next = (at + 1) % choices.length;
  else if (event.key === "ArrowUp" || event.key === "ArrowLeft") next = (at - 1 + choices.length) % choices.length;
  else if (event.key === "Home") next = 0;
  else if (event.key === "End") next = choices.length - 1;
  if (next >= 0) {
    event.preventDefault();
    choices[next].focus();
  }
}

function onFocusOut(event) {
  // the focus left an open menu (Tab past its last choice, a click elsewhere): close it
  const menu = event.target.closest && event.target.closest("#grid .ov-menu");
  if (!menu) return;
  const to = event.relatedTarget;
  if (to && (menu.contains(to) || to === badgeOf(menu))) return;
  if (to) closeMenus(menu.closest("[data-i]"));
}

for (const [name, fn] of [
  ["click", onClick],
  ["keydown", onKey],
  ["focusout", onFocusOut],
]) {
  const key = `__orbenchGrid_${name}`;
  if (scope[key]) scope.removeEventListener(name, scope[key]);
  scope[key] = fn;
  scope.addEventListener(name, fn);
}

// A live run that has gone silent (a dropped connection): ask where things stand.
if (scope.__orbenchGridWatchdog) clearInterval(scope.__orbenchGridWatchdog);
scope.__orbenchGridWatchdog = setInterval(() => {
  if (S.live && Date.now() - S.heardAt > SILENT_MS) resync();
  // a grid the server drew whole (an earlier run from the run list) gets the filter too
  const table = grid() && grid().querySelector("table.grid");
  if (table) addOpenButtons(table);
  if (table && table.__gf !== S.filter) applyFilter();
}, 1000);

watch("value", () => receive(props.value));
if (props.value) receive(props.value);
