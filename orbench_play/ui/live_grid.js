// The page side of the live grid: applies `live_feed` batches (documented in
// orbench_play/ui/live_feed.py) to the grid's skeleton, and opens the verdict
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

function appendText(el, offset, text, replace) {
  // false: a piece before `offset` never arrived (the caller asks for a resync)
  const resp = el && el.querySelector(".resp");
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

function setMore(el, extra) {
  const resp = el.querySelector(".resp");
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

function setFields(el, f) {
  if (!el) return;
  const badge = el.querySelector(".verdict");
  if ("st" in f) el.dataset.state = f.st;
  if (badge && "v" in f) {
    // the server sends v, p, s, b, h and ov together
    badge.dataset.verdict = f.v;
    badge.dataset.source = f.s;
    if (f.p) badge.dataset.provisional = f.p;
    else delete badge.dataset.provisional;
    badge.className = `verdict v-${f.v}${f.ov ? " ovr" : ""}`;
    badge.title = `verdict: ${f.v}${f.s ? ` (source: ${f.s})` : ""}`;
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
  }
  if ("x" in f) setMore(el, f.x);
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

function applyChanges(table, m) {
  const cells = cellsOf(table);
  const bodies = [];
  for (const entry of m.c || []) {
    // read before writing: which bodies show their end (they keep following it)
    const body = cells.get(entry[0])?.querySelector(".body");
    if (body) bodies.push([body, body.scrollTop + body.clientHeight >= body.scrollHeight - 8]);
  }
  let complete = true;
  for (const [i, offset, text, replace] of m.c || []) {
    if (!appendText(cells.get(i), offset, text, replace === 1)) complete = false;
  }
  for (const [i, f] of m.u || []) setFields(cells.get(i), f);
  for (const [i, g] of m.g || []) setGroup(cells.get(i), g);
  for (const [body, follow] of bodies) if (follow) body.scrollTop = body.scrollHeight;
  if (!complete) resync();
}

// -- the protocol ------------------------------------------------------------------

function applyBatch(m) {
  // false: the skeleton of run m.r is not on the page yet
  const table = tableFor(m.r);
  if (!table) return false;
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
  if (table) applyChanges(table, m);
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

function closeMenus(within) {
  const root = within || grid();
  if (root) for (const menu of root.querySelectorAll(".ov-menu")) menu.remove();
}

function openMenu(badge) {
  const box = badge.closest("[data-i]");
  const head = badge.closest(".cell-head");
  if (!box || !head) return;
  const menu = document.createElement("div");
  menu.className = "ov-menu";
  const hint = document.createElement("span");
  hint.className = "ov-hint";
  hint.textContent = "Disagree? Set the verdict:";
  menu.append(hint);
  for (const [label, text] of LABELS) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = label === badge.dataset.verdict ? "ov ov-on" : "ov";
    button.dataset.cell = box.dataset.cell;
    button.dataset.label = label;
    button.textContent = text;
    menu.append(button);
  }
  head.after(menu);
}

function onClick(event) {
  const g = grid();
  if (!g || !g.contains(event.target)) return;
  const button = event.target.closest("button.ov");
  if (button) {
    event.preventDefault();
    trigger("override", { cell: button.dataset.cell, label: button.dataset.label });
    closeMenus();
    return;
  }
  if (event.target.closest(".ov-menu")) return;
  const badge = event.target.closest(".verdict.ovr");
  const wasOpen = badge && badge.closest("[data-i]")?.querySelector(".ov-menu");
  closeMenus();
  if (badge && !wasOpen) openMenu(badge);
}

if (scope.__orbenchGridClick) scope.removeEventListener("click", scope.__orbenchGridClick);
scope.__orbenchGridClick = onClick;
scope.addEventListener("click", onClick);

// A live run that has gone silent (a dropped connection): ask where things stand.
if (scope.__orbenchGridWatchdog) clearInterval(scope.__orbenchGridWatchdog);
scope.__orbenchGridWatchdog = setInterval(() => {
  if (S.live && Date.now() - S.heardAt > SILENT_MS) resync();
}, 1000);

watch("value", () => receive(props.value));
if (props.value) receive(props.value);
