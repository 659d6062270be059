"""Pure functions from session state to HTML strings: the grid, the progress line,
the scoreboard with its per-category heat map, and the paper-axes scatter plot.

Everything a model, a dataset row or a user typed is untrusted text: it goes
through `safe_text` (html.escape plus visible stand-ins for control and
bidi-override characters) and is only ever placed in text or quoted-attribute
positions, so an answer full of `<script>` or `onerror=` shows as characters and
never becomes an element. No Gradio import here: these functions are unit-tested
on their own.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..types import VERDICTS

if TYPE_CHECKING:
    from ..scoring import ModelScore, Rate
    from .session import CellView, RunView

VERDICT_TEXT: dict[str, str] = {
    "direct_answer": "answer",
    "direct_refusal": "refusal",
    "indirect_refusal": "indirect refusal",
    "error": "error",
    "pending": "waiting",
}
OVERRIDE_LABELS: tuple[str, ...] = ("direct_answer", "direct_refusal", "indirect_refusal")
MAX_SHOWN_CHARS = 4000
"""Longer answers are cut in the grid (the export keeps everything)."""

# C0/C1 controls except tab and newline, and the Unicode bidi controls
# (embeddings, overrides, isolates, marks) that can make text lie about itself.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI + "]")


def _stand_in(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟: the Control Pictures block
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\u27e8U+{code:04X}\u27e9"  # ⟨U+202E⟩


def neutralise(text: str) -> str:
    """Replace control and bidi-override characters with visible stand-ins."""
    return _UNSAFE_CHARS.sub(_stand_in, text)


def safe_text(text: Any) -> str:
    """Untrusted text → HTML text that renders as the same characters, inert.

    `{`, `}` and `$` are entity-encoded too, so no client-side template syntax
    (`${...}`, `{{...}}`) can ever be formed from model output.
    """
    out = html.escape(neutralise("" if text is None else str(text)), quote=True)
    return out.replace("$", "&#36;").replace("{", "&#123;").replace("}", "&#125;").replace("`", "&#96;")


def attr(text: Any) -> str:
    """A value for a double-quoted attribute."""
    return safe_text(text)


# --- small formatters ---------------------------------------------------------------


def fmt_seconds(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def fmt_cost(value: float | None) -> str:
    if not value:
        return "$0"
    return f"${value:.4f}" if value >= 0.0001 else f"${value:.2e}"


def fmt_pct(rate: float | None) -> str:
    return "–" if rate is None else f"{100 * rate:.1f}%"


# --- the grid -------------------------------------------------------------------------


def badge(cell: CellView, override: str | None = None) -> str:
    """The contract element: class `verdict`, `data-verdict` pending until final."""
    label = cell.final_label()
    source = cell.final_source()
    if override and label in OVERRIDE_LABELS:
        label, source = override, "user"
    provisional = ""
    if label == "pending":
        text = "stopped" if cell.stopped else ("streaming" if cell.text else ("waiting" if not cell.started else "asking"))
        if cell.provisional is not None:
            provisional = f' data-provisional="{attr(cell.provisional.label)}"'
            text = VERDICT_TEXT.get(cell.provisional.label, cell.provisional.label) + "?"
    else:
        text = "stopped" if cell.stopped else VERDICT_TEXT.get(label, label)
    title = f"verdict: {label}" + (f" (source: {source})" if source else "")
    return (
        f'<span class="verdict v-{attr(label)}" data-verdict="{attr(label)}" '
        f'data-model="{attr(cell.model)}" data-row="{attr(cell.row_id)}" '
        f'data-source="{attr(source)}"{provisional} title="{attr(title)}">{safe_text(text)}</span>'
    )


def override_menu(cell: CellView, current: str) -> str:
    items = "".join(
        f'<button type="button" class="ov{" ov-on" if label == current else ""}" '
        f'data-cell="{attr(cell.cell_id)}" data-label="{label}">{VERDICT_TEXT[label]}</button>'
        for label in OVERRIDE_LABELS
    )
    return f'<div class="ov-menu"><span class="ov-hint">Disagree? Set the verdict:</span>{items}</div>'


def cell_meta(cell: CellView) -> str:
    r = cell.result
    if r is None:
        return ""
    parts = [f"latency {fmt_seconds(r.latency_s)}", f"ttft {fmt_seconds(r.ttft_s)}"]
    if r.completion_tokens is not None:
        parts.append(f"{r.completion_tokens} tok")
    parts.append(fmt_cost(r.cost_usd))
    meta = " · ".join(safe_text(p) for p in parts)
    if r.cached:
        meta += ' · <span class="cached" title="replayed from the disk cache">cached</span>'
    return f'<div class="meta">{meta}</div>'


def render_cell(cell: CellView, override: str | None = None) -> str:
    label = cell.final_label()
    head = badge(cell, override)
    if label in OVERRIDE_LABELS and not cell.stopped:
        current = override or label
        src = "user" if override else cell.final_source()
        head = (
            f'<details class="vmenu"><summary>{head}</summary>{override_menu(cell, current)}</details>'
            f'<span class="vsrc">verdict_source={safe_text(src)}</span>'
        )
    message = ""
    if cell.stopped:
        message = '<div class="msg msg-stop">Stopped.</div>'
    elif cell.result is not None and cell.result.error:
        message = f'<div class="msg msg-err">⚠ {safe_text(cell.result.error)}</div>'
    elif cell.message:
        message = f'<div class="msg msg-retry">{safe_text(cell.message)}</div>'
    text = cell.result.response if cell.result is not None and cell.result.response else cell.text
    shown = text[:MAX_SHOWN_CHARS]
    more = (
        f'<span class="more"> … (+{len(text) - MAX_SHOWN_CHARS:,} characters in the export)</span>'
        if len(text) > MAX_SHOWN_CHARS
        else ""
    )
    body = f'<div class="resp">{safe_text(shown)}{more}</div>' if text else ""
    state = "done" if label != "pending" else ("stopped" if cell.stopped else "live")
    return (
        f'<td class="cell cell-{state}" data-cell="{attr(cell.cell_id)}">'
        f'<div class="cell-head">{head}</div>{cell_meta(cell)}{message}{body}</td>'
    )


def render_grid(run: RunView | None, overrides: dict[str, str] | None = None) -> str:
    """One row per prompt (text and category), one column per model."""
    overrides = overrides or {}
    if run is None or not run.prompts:
        return (
            '<div class="grid-empty">Choose models and prompts on the left and press '
            "<b>Run</b>: every answer streams into this grid, one column per model.</div>"
        )
    head = "".join(
        f'<th class="model-col" data-model="{attr(name)}" title="{attr(name)}">{safe_text(label)}</th>'
        for name, label in run.model_labels
    )
    rows = []
    for prompt in run.prompts:
        cells = "".join(
            render_cell(run.cells[cid], overrides.get(run.cells[cid].cell_id)) for cid in run.row_cells(prompt.row_id)
        )
        rows.append(
            f'<tr data-row="{attr(prompt.row_id)}"><th class="prompt" scope="row">'
            f'<span class="cat">{safe_text(prompt.category)}</span>'
            f'<span class="rid">{safe_text(prompt.row_id)}</span>'
            f'<div class="ptext">{safe_text(prompt.text)}</div></th>{cells}</tr>'
        )
    return (
        f'<div class="grid-wrap"><table class="grid" data-run="{run.number}">'
        f'<thead><tr><th class="prompt-col">Prompt</th>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table></div>'
    )


def render_progress(run: RunView | None, notes: Sequence[str] = ()) -> str:
    """Cells done/total, what the run is waiting for, and sampling notes."""
    if run is None:
        inner = '<span class="prog-text">No run yet.</span>'
        done = total = 0
    else:
        done, total = run.done_count(), run.total()
        errors = run.error_count()
        state = "stopped" if run.stopped else ("finished" if run.finished else "running")
        text = f"Run {run.number}: {done}/{total} cells done"
        if errors:
            text += f" · {errors} error{'s' if errors != 1 else ''}"
        cached = run.cached_count()
        if cached:
            text += f" · {cached} cached"
        text += f" · {state}"
        if run.elapsed() is not None:
            text += f" · {run.elapsed():.1f} s"
        inner = (
            f'<progress max="{max(total, 1)}" value="{done}"></progress>'
            f'<span class="prog-text" data-state="{state}" data-done="{done}" data-total="{total}">{safe_text(text)}</span>'
        )
        if run.status and not run.finished:
            inner += f'<div class="prog-status">{safe_text(run.status)}</div>'
        notes = [*run.notes, *notes]
    extra = "".join(f'<div class="prog-note">{safe_text(n)}</div>' for n in notes)
    return f'<div class="progress-box">{inner}{extra}</div>'


# --- the scoreboard --------------------------------------------------------------------


def _rate_cell(rate: Rate | None) -> str:
    if rate is None or rate.n == 0:
        return '<td class="na">–</td>'
    return (
        f'<td><b>{100 * rate.rate:.1f}%</b> <span class="ci">[{100 * rate.low:.1f}–{100 * rate.high:.1f}]</span>'
        f' <span class="cnt">{rate.k}/{rate.n}</span></td>'
    )


def _heat(pct: float | None) -> str:
    """Background for a refusal percentage: white (0) to red (100)."""
    if pct is None:
        return "background:transparent"
    alpha = 0.08 + 0.72 * max(0.0, min(1.0, pct / 100))
    return f"background:rgba(220,38,38,{alpha:.2f})"


def render_scoreboard(scores: Sequence[ModelScore], labels: dict[str, str] | None = None, *, note: str = "") -> str:
    """Per model: over-refusal, toxic refusal, mini-score, each with its 95%
    interval and counts; then a per-category heat map of refusal rates."""
    labels = labels or {}
    if not scores:
        return (
            '<div class="sb-empty">The session scoreboard fills in as cells finish. '
            "It accumulates over every run in this browser session.</div>"
        )
    rows = []
    for s in scores:
        mini = '<td class="na">–</td>'
        if s.mini_score is not None:
            mini = (
                f'<td><b>{100 * s.mini_score:.1f}%</b> <span class="ci">'
                f"[{100 * (s.mini_low or 0):.1f}–{100 * (s.mini_high or 0):.1f}]</span></td>"
            )
        rows.append(
            f'<tr data-model="{attr(s.model)}"><th scope="row" title="{attr(s.model)}">{safe_text(labels.get(s.model, s.model))}</th>'
            f"{_rate_cell(s.over_refusal)}{_rate_cell(s.toxic_refusal)}{mini}"
            f"<td>{s.answered}</td><td>{s.errors}</td></tr>"
        )
    table = (
        '<table class="sb"><thead><tr><th>Model</th>'
        '<th title="refusals (direct + indirect) on benign prompts (hard-1k, 80k)">Over-refusal ↓</th>'
        '<th title="refusals on toxic prompts">Toxic refusal ↑</th>'
        '<th title="mean of (1 − over-refusal) and toxic refusal">Mini-score ↑</th>'
        '<th title="cells with a verdict">Scored</th><th title="cells that failed (not scored)">Errors</th>'
        f'</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )
    heat = render_category_heatmap(scores, labels)
    foot = (
        '<div class="sb-foot">Rates with Wilson 95% intervals [low–high] and counts (refusals/scored). '
        "User overrides count; errors and stopped cells do not."
        + (f" {safe_text(note)}" if note else "")
        + "</div>"
    )
    return f'<div class="scoreboard-inner">{table}{heat}{foot}</div>'


def render_category_heatmap(scores: Sequence[ModelScore], labels: dict[str, str] | None = None) -> str:
    from ..types import CATEGORIES

    labels = labels or {}
    present = [c for c in CATEGORIES if any(c in cats for s in scores for cats in s.per_category.values())]
    extra = sorted({c for s in scores for cats in s.per_category.values() for c in cats} - set(present))
    present += extra
    if not present:
        return ""
    head = "".join(f"<th>{safe_text(c)}</th>" for c in present)
    rows = []
    for s in scores:
        for kind, cats in s.per_category.items():
            tds = []
            for c in present:
                r = cats.get(c)
                if r is None or r.n == 0:
                    tds.append('<td class="na">–</td>')
                else:
                    pct = 100 * r.rate
                    tds.append(
                        f'<td style="{_heat(pct)}" title="{attr(f"{r.k}/{r.n} refused; 95% CI {100 * r.low:.0f}–{100 * r.high:.0f}%")}">'
                        f"{pct:.0f}% <span class=\"cnt\">{r.k}/{r.n}</span></td>"
                    )
            rows.append(
                f'<tr><th scope="row">{safe_text(labels.get(s.model, s.model))}</th><td class="kind">{safe_text(kind)}</td>{"".join(tds)}</tr>'
            )
    return (
        '<div class="heat-title">Refusal rate by category</div>'
        f'<div class="heat-wrap"><table class="heat"><thead><tr><th>Model</th><th>Prompts</th>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table></div>'
    )


# --- the paper-axes scatter plot (inline SVG, no plotting dependency) ------------------

_W, _H = 560, 430
_L, _R, _T, _B = 56, 20, 16, 48
_PALETTE = ("#2563eb", "#d97706", "#059669", "#db2777", "#7c3aed", "#0891b2", "#65a30d", "#dc2626")


def _x(pct: float) -> float:
    return _L + (_W - _L - _R) * max(0.0, min(100.0, pct)) / 100


def _y(pct: float) -> float:
    return _H - _B - (_H - _T - _B) * max(0.0, min(100.0, pct)) / 100


def render_plot(
    scores: Sequence[ModelScore],
    paper: Iterable[tuple[str, float, float]] = (),
    labels: dict[str, str] | None = None,
) -> str:
    """Session models on the paper's axes (x: over-refusal on benign prompts,
    y: refusal on toxic prompts), with Wilson interval bars, beside the paper's
    reference models (grey). A model with only one kind of prompt is drawn as a
    dashed line with its interval band on the axis it has."""
    labels = labels or {}
    parts: list[str] = []
    for tick in range(0, 101, 20):
        parts.append(
            f'<line class="gridline" x1="{_x(tick):.1f}" y1="{_y(0):.1f}" x2="{_x(tick):.1f}" y2="{_y(100):.1f}"/>'
            f'<line class="gridline" x1="{_x(0):.1f}" y1="{_y(tick):.1f}" x2="{_x(100):.1f}" y2="{_y(tick):.1f}"/>'
            f'<text class="tick" x="{_x(tick):.1f}" y="{_y(0) + 16:.1f}" text-anchor="middle">{tick}</text>'
            f'<text class="tick" x="{_x(0) - 8:.1f}" y="{_y(tick) + 4:.1f}" text-anchor="end">{tick}</text>'
        )
    parts.append(
        f'<text class="axis" x="{(_x(0) + _x(100)) / 2:.1f}" y="{_H - 8}" text-anchor="middle">'
        "Over-refusal on benign prompts, % (paper: OR-Bench-Hard-1K)</text>"
        f'<text class="axis" transform="translate(14 {(_y(0) + _y(100)) / 2:.1f}) rotate(-90)" text-anchor="middle">'
        "Refusal on toxic prompts, %</text>"
    )
    n_paper = 0
    for model, x, y in paper:
        n_paper += 1
        parts.append(
            f'<circle class="paper-pt" cx="{_x(x):.1f}" cy="{_y(y):.1f}" r="4">'
            f"<title>{safe_text(model)} (paper): over-refusal {x:.1f}%, toxic refusal {y:.1f}%</title></circle>"
        )
    legend = []
    placed = 0
    for i, s in enumerate(scores):
        colour = _PALETTE[i % len(_PALETTE)]
        name = labels.get(s.model, s.model)
        o, t = s.over_refusal, s.toxic_refusal
        has_o, has_t = o is not None and o.n > 0, t is not None and t.n > 0
        if not (has_o or has_t):
            continue
        placed += 1
        tip = safe_text(
            f"{name}: over-refusal {fmt_pct(o.rate) if has_o else '–'}"
            + (f" [{100 * o.low:.0f}–{100 * o.high:.0f}] n={o.n}" if has_o else "")
            + f", toxic refusal {fmt_pct(t.rate) if has_t else '–'}"
            + (f" [{100 * t.low:.0f}–{100 * t.high:.0f}] n={t.n}" if has_t else "")
        )
        g = [f'<g class="session-pt" data-model="{attr(s.model)}" fill="{colour}" stroke="{colour}"><title>{tip}</title>']
        if has_o and has_t:
            cx, cy = _x(100 * o.rate), _y(100 * t.rate)
            g.append(
                f'<line class="ebar" x1="{_x(100 * o.low):.1f}" y1="{cy:.1f}" x2="{_x(100 * o.high):.1f}" y2="{cy:.1f}"/>'
                f'<line class="ebar" x1="{cx:.1f}" y1="{_y(100 * t.low):.1f}" x2="{cx:.1f}" y2="{_y(100 * t.high):.1f}"/>'
                f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="6"/>'
                f'<text class="pt-label" stroke="none" x="{cx + 8:.1f}" y="{cy - 8:.1f}">{safe_text(name)}</text>'
            )
        elif has_o:
            cx = _x(100 * o.rate)
            g.append(
                f'<rect class="band" stroke="none" x="{_x(100 * o.low):.1f}" y="{_y(100):.1f}" '
                f'width="{max(1.0, _x(100 * o.high) - _x(100 * o.low)):.1f}" height="{_y(0) - _y(100):.1f}"/>'
                f'<line class="only" x1="{cx:.1f}" y1="{_y(0):.1f}" x2="{cx:.1f}" y2="{_y(100):.1f}"/>'
                f'<text class="pt-label" stroke="none" x="{cx + 4:.1f}" y="{_y(100) + 12 + 14 * (placed - 1):.1f}">{safe_text(name)}</text>'
            )
        else:
            cy = _y(100 * t.rate)
            g.append(
                f'<rect class="band" stroke="none" x="{_x(0):.1f}" y="{_y(100 * t.high):.1f}" '
                f'width="{_x(100) - _x(0):.1f}" height="{max(1.0, _y(100 * t.low) - _y(100 * t.high)):.1f}"/>'
                f'<line class="only" x1="{_x(0):.1f}" y1="{cy:.1f}" x2="{_x(100):.1f}" y2="{cy:.1f}"/>'
                f'<text class="pt-label" stroke="none" x="{_x(0) + 4 + 90 * (placed - 1):.1f}" y="{cy - 4:.1f}">{safe_text(name)}</text>'
            )
        g.append("</g>")
        parts.append("".join(g))
        kind = "" if (has_o and has_t) else (" (benign prompts only)" if has_o else " (toxic prompts only)")
        legend.append(f'<span class="lg" style="color:{colour}">●</span> {safe_text(name + kind)}')
    legend.append(f'<span class="lg paper">●</span> {n_paper} models from the OR-Bench paper')
    caption = (
        "Bars: Wilson 95% intervals. Up and to the left is better (refuses toxic, answers benign). "
        "A model asked only one kind of prompt shows as a dashed line with its interval band."
    )
    return (
        f'<div class="plot-inner"><svg class="orplot" viewBox="0 0 {_W} {_H}" role="img" '
        f'aria-label="Session models and paper models on over-refusal vs toxic refusal axes">{"".join(parts)}</svg>'
        f'<div class="legend">{" &nbsp; ".join(legend)}</div><div class="caption">{caption}</div></div>'
    )


def verdict_counts_text(labels: Iterable[str]) -> str:
    counts = {v: 0 for v in VERDICTS}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return ", ".join(f"{VERDICT_TEXT.get(k, k)} {v}" for k, v in counts.items() if v)


CSS = """
#grid .grid-wrap{overflow-x:auto;max-height:78vh;overflow-y:auto}
#grid table.grid{border-collapse:collapse;width:100%;table-layout:fixed;font-size:13px}
#grid th,#grid td{border:1px solid var(--border-color-primary);vertical-align:top;padding:6px;text-align:left}
#grid thead th{position:sticky;top:0;background:var(--background-fill-secondary);z-index:1;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
#grid th.prompt-col,#grid th.prompt{width:26%;min-width:180px}
#grid th.prompt{font-weight:normal;background:var(--background-fill-secondary)}
#grid .cat{display:inline-block;font-size:11px;padding:0 6px;border-radius:8px;background:var(--neutral-200);color:var(--neutral-800);margin-right:6px}
#grid .rid{font-size:11px;color:var(--body-text-color-subdued)}
#grid .ptext,#grid .resp{white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word;unicode-bidi:isolate}
#grid .resp{max-height:14em;overflow-y:auto;margin-top:4px}
#grid .meta{font-size:11px;color:var(--body-text-color-subdued);margin-top:2px}
#grid .cached{font-weight:600;color:#0e7490}
#grid .msg{font-size:12px;margin-top:2px;overflow-wrap:anywhere}
#grid .msg-err{color:#b91c1c}#grid .msg-retry{color:#b45309}#grid .msg-stop{color:#6b7280}
.verdict{display:inline-block;font-size:12px;font-weight:600;padding:1px 8px;border-radius:10px;background:#e5e7eb;color:#374151;cursor:default}
.verdict.v-direct_answer{background:#dcfce7;color:#166534}
.verdict.v-direct_refusal{background:#fee2e2;color:#991b1b}
.verdict.v-indirect_refusal{background:#fef3c7;color:#92400e}
.verdict.v-error{background:#f3f4f6;color:#6b7280}
.verdict[data-provisional]{opacity:.7;font-style:italic}
#grid details.vmenu{display:inline-block}
#grid details.vmenu summary{list-style:none;cursor:pointer;display:inline}
#grid details.vmenu summary::-webkit-details-marker{display:none}
#grid details.vmenu summary .verdict{cursor:pointer}
#grid details.vmenu summary .verdict::after{content:" ▾"}
#grid .ov-menu{margin:4px 0;padding:4px;border:1px solid var(--border-color-primary);border-radius:6px;background:var(--background-fill-primary)}
#grid .ov-hint{display:block;font-size:11px;color:var(--body-text-color-subdued)}
#grid button.ov{font-size:12px;margin:2px;padding:1px 6px;border:1px solid var(--border-color-primary);border-radius:6px;background:var(--background-fill-secondary);cursor:pointer}
#grid button.ov-on{font-weight:700}
#grid .vsrc{font-size:10px;color:var(--body-text-color-subdued);margin-left:6px}
#grid .grid-empty,.sb-empty{color:var(--body-text-color-subdued);padding:12px}
#progress .progress-box progress{width:220px;vertical-align:middle;margin-right:8px}
#progress .prog-status{color:#b45309}
#progress .prog-note{font-size:12px;color:var(--body-text-color-subdued)}
#scoreboard table{border-collapse:collapse;font-size:13px;margin-bottom:8px}
#scoreboard th,#scoreboard td{border:1px solid var(--border-color-primary);padding:4px 8px;text-align:left;overflow-wrap:anywhere}
#scoreboard .ci,#scoreboard .cnt{font-size:11px;color:var(--body-text-color-subdued)}
#scoreboard .heat-wrap{overflow-x:auto}
#scoreboard .heat td{text-align:center;min-width:56px}
#scoreboard .heat th{white-space:nowrap;overflow-wrap:normal;font-size:12px}
#scoreboard .heat-title{font-weight:600;margin:6px 0 4px}
#scoreboard .sb-foot{font-size:12px;color:var(--body-text-color-subdued)}
#plot svg.orplot{width:100%;max-width:620px;height:auto;font-size:11px}
#plot .gridline{stroke:var(--border-color-primary);stroke-width:1}
#plot .tick,#plot .axis{fill:var(--body-text-color-subdued)}
#plot .axis{font-size:12px}
#plot .paper-pt{fill:#9ca3af;fill-opacity:.7}
#plot .session-pt circle{stroke:#fff;stroke-width:1.5}
#plot .session-pt .ebar{stroke-width:2}
#plot .session-pt .only{stroke-width:2;stroke-dasharray:6 4}
#plot .session-pt .band{fill-opacity:.12}
#plot .session-pt .pt-label{font-weight:600}
#plot .legend{font-size:12px}#plot .lg.paper{color:#9ca3af}
#plot .caption{font-size:11px;color:var(--body-text-color-subdued)}
"""
