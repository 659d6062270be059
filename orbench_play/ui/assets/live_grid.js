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
  if (!body || (body.__placedAt !== undefined && body.scrollTop !== body.__placedAt)) return;
  const live = el.dataset.state === "live" || el.dataset.state === "wait";
  body.scrollTop = live ? body.scrollHeight : 0;
  body.__placedAt = body.scrollTop;
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
  if (!complete) resync();
}

// -- the protocol ------------------------------------------------------------------

function applyBatch(m) {
  // false: the skeleton of run m.r is not on the page yet
  const table = tableFor(m.r);
  if (!table) return false;
  addFollowUpBoxes(table);
  applyChanges(table, m);
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
    applyChanges(table, m);
  }
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
  const g = grid();
  if (!g || !g.contains(event.target)) return;
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
}, 1000);

watch("value", () => receive(props.value));
if (props.value) receive(props.value);
