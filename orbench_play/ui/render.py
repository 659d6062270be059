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
        text = (
            "stopped" if cell.stopped else ("streaming" if cell.text else ("waiting" if not cell.started else "asking"))
        )
        if cell.provisional is not None:
            provisional = f' data-provisional="{attr(cell.provisional.label)}"'
            text = VERDICT_TEXT.get(cell.provisional.label, cell.provisional.label) + "?"
    else:
        text = "stopped" if cell.stopped else VERDICT_TEXT.get(label, label)
    title = f"verdict: {label}" + (f" (source: {source})" if source else "")
    variant = cell.variant or cell.model
    return (
        f'<span class="verdict v-{attr(label)}" data-verdict="{attr(label)}" '
        f'data-model="{attr(cell.model)}" data-variant="{attr(variant)}" data-row="{attr(cell.row_id)}" '
        f'data-repeat="{int(cell.repeat)}" '
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


def _answer(cell: CellView, override: str | None = None) -> tuple[str, str]:
    """(inner HTML, state) of one answer: verdict badge (with the override menu
    once final), meta line, message, and the escaped answer text."""
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
    return f'<div class="cell-head">{head}</div>{cell_meta(cell)}{message}{body}', state


def render_cell(cell: CellView, override: str | None = None) -> str:
    inner, state = _answer(cell, override)
    return f'<td class="cell cell-{state}" data-cell="{attr(cell.cell_id)}">{inner}</td>'


def repeat_tally(cells: Sequence[CellView], overrides: dict[str, str] | None = None):
    """`stability.Tally` of the finished answers among `cells` (overrides applied)."""
    from dataclasses import replace

    from ..stability import Tally, tally

    overrides = overrides or {}
    results = []
    for c in cells:
        if c.result is None or c.stopped:
            continue
        label = overrides.get(c.result.cell_id)
        results.append(replace(c.result, verdict=label) if label and c.result.verdict in OVERRIDE_LABELS else c.result)
    if not results:
        return Tally()
    return tally(results, key=lambda r: "")[("", cells[0].row_id)]


def render_repeats(cells: Sequence[CellView], overrides: dict[str, str] | None = None) -> str:
    """One (prompt, model) cell asked k times: a "k/n refused" badge, then the
    k answers stacked as #1, #2, … (each with its own contract `.verdict`)."""
    overrides = overrides or {}
    t = repeat_tally(cells, overrides)
    pending = sum(1 for c in cells if c.final_label() == "pending")
    flipped = " stab-flip" if t.flipped else ""
    text = t.label() if t.answers else ("error" if not pending else "waiting")
    if pending and t.answers:
        text += f" · {pending} to go"
    parts = [
        (
            f'<div class="stab-head"><span class="stab{flipped}" data-refusals="{t.refusals}" '
            f'data-answers="{t.answers}" data-repeats="{len(cells)}" '
            f'title="refusals of the answers with a verdict (errors not counted)">{safe_text(text)}</span></div>'
        )
    ]
    states = set()
    for i, c in enumerate(cells, start=1):
        inner, state = _answer(c, overrides.get(c.cell_id))
        states.add(state)
        parts.append(f'<div class="rep rep-{state}" data-repeat="{i - 1}"><span class="rep-n">#{i}</span>{inner}</div>')
    state = "live" if "live" in states else ("stopped" if "stopped" in states else "done")
    return (
        f'<td class="cell cell-rep cell-{state}" data-cell="{attr(cells[0].cell_id)}" data-k="{len(cells)}">'
        f"{''.join(parts)}</td>"
    )


def render_grid(run: RunView | None, overrides: dict[str, str] | None = None) -> str:
    """One row per prompt (text and category), one column per model (labelled
    with its variant name); with repeats each cell stacks its k answers."""
    overrides = overrides or {}
    if run is None or not run.prompts:
        return (
            '<div class="grid-empty">Choose models and prompts on the left and press '
            "<b>Run</b>: every answer streams into this grid, one column per model.</div>"
        )
    head = "".join(
        f'<th class="model-col" data-model="{attr(name)}" data-variant="{attr(run.variants.get(name, name))}" '
        f'title="{attr(label)}">{safe_text(label)}</th>'
        for name, label in run.model_labels
    )
    rows = []
    for prompt in run.prompts:
        cells = []
        for group in run.groups(prompt.row_id):
            views = [run.cells[cid] for cid in group]
            if len(views) == 1:
                cells.append(render_cell(views[0], overrides.get(views[0].cell_id)))
            else:
                cells.append(render_repeats(views, overrides))
        rows.append(
            f'<tr data-row="{attr(prompt.row_id)}"><th class="prompt" scope="row">'
            f'<span class="cat">{safe_text(prompt.category)}</span>'
            f'<span class="rid">{safe_text(prompt.row_id)}</span>'
            f'<div class="ptext">{safe_text(prompt.text)}</div></th>{"".join(cells)}</tr>'
        )
    k = f' data-repeats="{run.repeats}"' if run.repeats > 1 else ""
    return (
        f'<div class="grid-wrap"><table class="grid" data-run="{run.number}"{k}>'
        f'<thead><tr><th class="prompt-col">Prompt</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
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


def render_scoreboard(
    scores: Sequence[ModelScore],
    labels: dict[str, str] | None = None,
    *,
    note: str = "",
    models: dict[str, str] | None = None,
) -> str:
    """Per variant (model × settings): over-refusal, toxic refusal, mini-score,
    each with its 95% interval and counts; a flip-rate column when some prompt
    was asked more than once; then a per-category heat map of refusal rates.

    `labels` maps a score's key to its shown name, `models` maps it to the
    model name (the rows' `data-model`; the key itself is `data-variant`)."""
    labels = labels or {}
    models = models or {}
    if not scores:
        return (
            '<div class="sb-empty">The session scoreboard fills in as cells finish. '
            "It accumulates over every run in this browser session.</div>"
        )
    flips = any(s.flip_rate is not None for s in scores)
    rows = []
    for s in scores:
        mini = '<td class="na">–</td>'
        if s.mini_score is not None:
            mini = (
                f'<td><b>{100 * s.mini_score:.1f}%</b> <span class="ci">'
                f"[{100 * (s.mini_low or 0):.1f}–{100 * (s.mini_high or 0):.1f}]</span></td>"
            )
        flip = ""
        if flips:
            flip = (
                _rate_cell(s.flip_rate).replace("<td>", f'<td class="flip" data-k="{s.max_repeats}">', 1)
                if s.flip_rate is not None
                else '<td class="flip na">–</td>'
            )
        rows.append(
            f'<tr data-model="{attr(models.get(s.model, s.model))}" data-variant="{attr(s.model)}">'
            f'<th scope="row" title="{attr(s.model)}">{safe_text(labels.get(s.model, s.model))}</th>'
            f"{_rate_cell(s.over_refusal)}{_rate_cell(s.toxic_refusal)}{mini}{flip}"
            f"<td>{s.answered}</td><td>{s.errors}</td></tr>"
        )
    flip_head = (
        '<th title="prompts whose repeated answers were not all refusals or all answers, '
        'of the prompts asked at least twice">Flip rate ↓</th>'
        if flips
        else ""
    )
    table = (
        '<table class="sb"><thead><tr><th>Model (variant)</th>'
        '<th title="refusals (direct + indirect) on benign prompts (hard-1k, 80k)">Over-refusal ↓</th>'
        '<th title="refusals on toxic prompts">Toxic refusal ↑</th>'
        '<th title="mean of (1 − over-refusal) and toxic refusal">Mini-score ↑</th>'
        f"{flip_head}"
        '<th title="answers with a verdict">Scored</th><th title="answers that failed (not scored)">Errors</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    heat = render_category_heatmap(scores, labels)
    repeat_note = (
        " With repeats every answer is a trial in the rates; the flip rate counts prompts, not answers."
        if flips
        else ""
    )
    foot = (
        '<div class="sb-foot">Rates with Wilson 95% intervals [low–high] and counts (refusals/scored). '
        "User overrides count; errors and stopped cells do not. One row per model and setting "
        "(system prompt, temperature, …)." + repeat_note + (f" {safe_text(note)}" if note else "") + "</div>"
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
                        f'{pct:.0f}% <span class="cnt">{r.k}/{r.n}</span></td>'
                    )
            rows.append(
                f'<tr><th scope="row">{safe_text(labels.get(s.model, s.model))}</th><td class="kind">{safe_text(kind)}</td>{"".join(tds)}</tr>'
            )
    return (
        '<div class="heat-title">Refusal rate by category</div>'
        f'<div class="heat-wrap"><table class="heat"><thead><tr><th>Model</th><th>Prompts</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
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
    models: dict[str, str] | None = None,
) -> str:
    """Session models (one point per variant) on the paper's axes (x: over-refusal on benign prompts,
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
        g = [
            f'<g class="session-pt" data-model="{attr((models or {}).get(s.model, s.model))}" data-variant="{attr(s.model)}" fill="{colour}" stroke="{colour}"><title>{tip}</title>'
        ]
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


# --- the comparison view ------------------------------------------------------------------

MAX_COMPARE_ROWS = 200
"""Rows shown in the side-by-side table (disagreements come first)."""
MAX_COMPARE_CHARS = 1500


def tally_text(t: Any) -> tuple[str, str]:
    """(text, css kind) for one side's verdict on a prompt: a label, or `2/3 refused`."""
    if t.answers == 0:
        return "error", "error"
    if t.answers == 1:
        return ("refusal", "refusal") if t.refusals else ("answer", "answer")
    kind = "refusal" if t.majority == "refusal" else "answer" if t.majority == "answer" else "split"
    return t.label(), kind


def _clip(text: str, limit: int = MAX_COMPARE_CHARS) -> str:
    text = text or ""
    if len(text) <= limit:
        return safe_text(text)
    return safe_text(text[:limit]) + f'<span class="more"> … (+{len(text) - limit:,} characters)</span>'


def render_comparison(comparison: Any | None, message: str = "", labels: dict[str, str] | None = None) -> str:
    """Two variants side by side (a `compare.Comparison`): the plain-language
    summary, the per-kind table (rates over all answers, change, McNemar), then
    every paired prompt with both answers, disagreements first. All text escaped."""
    if comparison is None:
        text = message or (
            "Run at least two models, or one model under two settings (e.g. system prompt "
            "<i>none</i> and <i>safety</i>), then pick them here and press <b>Compare</b>."
        )
        body = safe_text(message) if message else text
        return f'<div class="cmp-empty">{body}</div>'
    from ..compare import fmt_p

    labels = labels or {}
    a, b = comparison.name_a, comparison.name_b
    shown_a, shown_b = labels.get(a, a), labels.get(b, b)
    sentences = "".join(f'<p class="cmp-sentence">{safe_text(x)}</p>' for x in comparison.sentences) or (
        f'<p class="cmp-sentence">{safe_text(comparison.summary)}</p>'
    )
    notes = []
    ties = sum(k.ties for k in comparison.kinds.values())
    if ties:
        notes.append(f"{ties} prompt(s) with a tied majority over repeats were left out of the test.")
    if comparison.only_a or comparison.only_b:
        notes.append(
            f"Unpaired prompts (no counted answer from the other): A {comparison.only_a}, B {comparison.only_b}."
        )
    note_html = "".join(f'<p class="cmp-note">{safe_text(n)}</p>' for n in notes)
    rows = []
    for k in comparison.kinds.values():
        sig = "yes" if k.significant else "no"
        rows.append(
            f'<tr data-kind="{attr(k.kind)}" data-significant="{sig}"><th scope="row">{safe_text(k.kind)}</th>'
            f"<td>{k.n}</td>"
            f'<td>{100 * k.rate_a.rate:.1f}% <span class="cnt">{k.rate_a.k}/{k.rate_a.n}</span></td>'
            f'<td>{100 * k.rate_b.rate:.1f}% <span class="cnt">{k.rate_b.k}/{k.rate_b.n}</span></td>'
            f"<td><b>{100 * k.change:+.1f} pts</b></td><td>{k.b} / {k.c}</td>"
            f'<td>{safe_text(fmt_p(k.p_value))} <span class="cnt">{safe_text(k.method)}</span></td>'
            f'<td class="sig-{sig}">{sig}</td></tr>'
        )
    table = (
        '<table class="cmp-sum"><thead><tr><th>Prompts</th>'
        '<th title="paired prompts in the test">n</th>'
        f"<th>A refuses</th><th>B refuses</th>"
        '<th title="B − A, percentage points">Change</th>'
        '<th title="prompts refused by A only / by B only (the discordant pairs)">Only A / only B refused</th>'
        '<th title="two-sided; exact binomial below 25 discordant pairs">McNemar</th>'
        '<th title="p &lt; 0.05">Significant</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        if rows
        else ""
    )
    diff_rows = []
    for i, r in enumerate(comparison.rows[:MAX_COMPARE_ROWS], start=1):
        va, ka = tally_text(r.a)
        vb, kb = tally_text(r.b)
        status = "disagree" if r.disagree else ("unsettled" if r.unsettled else "agree")
        diff_rows.append(
            f'<tr class="cmp-{status}" data-row="{attr(r.row_id)}" data-status="{status}">'
            f'<td class="num">{i}</td>'
            f'<td class="cmp-prompt"><span class="cat">{safe_text(r.category)}</span>'
            f'<span class="rid">{safe_text(r.row_id)}</span><div class="ptext">{safe_text(r.prompt)}</div></td>'
            f'<td class="cmp-v" data-side="a"><span class="cv cv-{ka}">{safe_text(va)}</span>'
            f'<div class="resp">{_clip(r.answer_a)}</div></td>'
            f'<td class="cmp-v" data-side="b"><span class="cv cv-{kb}">{safe_text(vb)}</span>'
            f'<div class="resp">{_clip(r.answer_b)}</div></td></tr>'
        )
    n_dis = len(comparison.disagreements)
    more = len(comparison.rows) - MAX_COMPARE_ROWS
    caption = (
        f"{n_dis} of {len(comparison.rows)} paired prompts where one refused and the other answered"
        + (" (listed first)" if n_dis else "")
        + (f"; {more} more rows in the export" if more > 0 else "")
        + "."
    )
    diff = (
        f'<div class="cmp-caption">{safe_text(caption)}</div>'
        '<div class="cmp-wrap"><table class="cmp-diff"><thead><tr><th>#</th><th>Prompt</th>'
        f"<th>A: {safe_text(shown_a)}</th><th>B: {safe_text(shown_b)}</th></tr></thead>"
        f"<tbody>{''.join(diff_rows)}</tbody></table></div>"
        if diff_rows
        else ""
    )
    head = (
        f'<div class="cmp-names"><span class="cmp-tag">A</span> {safe_text(shown_a)} '
        f'&nbsp; <span class="cmp-tag">B</span> {safe_text(shown_b)}</div>'
    )
    foot = (
        '<div class="cmp-foot">Rates over all answers on the paired prompts (repeats are trials); '
        "McNemar's test on per-prompt majority verdicts, benign and toxic prompts separately.</div>"
    )
    return (
        f'<div class="cmp" data-a="{attr(a)}" data-b="{attr(b)}" data-disagreements="{n_dis}">'
        f'{head}<div class="cmp-summary">{sentences}{note_html}</div>{table}{foot}{diff}</div>'
    )


def verdict_counts_text(labels: Iterable[str]) -> str:
    counts = dict.fromkeys(VERDICTS, 0)
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
#grid .cell-rep .rep{border-top:1px dashed var(--border-color-primary);padding-top:3px;margin-top:3px}
#grid .cell-rep .rep-n{font-size:11px;font-weight:700;color:var(--body-text-color-subdued);margin-right:4px;float:left}
#grid .cell-rep .resp{max-height:6em}
#grid .stab{display:inline-block;font-size:12px;font-weight:700;padding:1px 8px;border-radius:10px;background:#e0e7ff;color:#3730a3}
#grid .stab.stab-flip{background:#fde68a;color:#78350f}
#scoreboard td.flip{background:rgba(253,230,138,.25)}
#scoreboard table.sb thead th{overflow-wrap:normal}
#comparison .cmp-empty{color:var(--body-text-color-subdued);padding:8px}
#comparison .cmp-names{font-weight:600;margin-bottom:4px}
#comparison .cmp-tag{display:inline-block;font-size:11px;padding:0 6px;border-radius:6px;background:var(--neutral-200);color:var(--neutral-800)}
#comparison .cmp-sentence{font-size:15px;font-weight:600;margin:4px 0}
#comparison .cmp-note,#comparison .cmp-foot,#comparison .cmp-caption{font-size:12px;color:var(--body-text-color-subdued);margin:2px 0}
#comparison table{border-collapse:collapse;font-size:13px;margin:6px 0}
#comparison th,#comparison td{border:1px solid var(--border-color-primary);padding:4px 8px;text-align:left;vertical-align:top}
#comparison .cnt{font-size:11px;color:var(--body-text-color-subdued)}
#comparison .sig-yes{font-weight:700;color:#991b1b}
#comparison .cmp-wrap{max-height:70vh;overflow:auto}
#comparison table.cmp-diff{width:100%;table-layout:fixed}
#comparison table.cmp-diff th:first-child{width:32px}
#comparison table.cmp-diff .cmp-prompt{width:30%}
#comparison tr.cmp-disagree td{background:rgba(254,243,199,.45)}
#comparison .cat{display:inline-block;font-size:11px;padding:0 6px;border-radius:8px;background:var(--neutral-200);color:var(--neutral-800);margin-right:6px}
#comparison .rid{font-size:11px;color:var(--body-text-color-subdued)}
#comparison .ptext,#comparison .resp{white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:isolate}
#comparison .resp{max-height:10em;overflow-y:auto;margin-top:3px}
#comparison .cv{display:inline-block;font-size:12px;font-weight:600;padding:1px 8px;border-radius:10px;background:#e5e7eb;color:#374151}
#comparison .cv-answer{background:#dcfce7;color:#166534}
#comparison .cv-refusal{background:#fee2e2;color:#991b1b}
#comparison .cv-split{background:#fde68a;color:#78350f}
#gen_hint{font-size:12px;color:#b45309}
"""
