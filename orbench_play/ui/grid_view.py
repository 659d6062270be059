"""The live grid (one row per prompt, one column per model) and the progress line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .safe_html import MAX_SHOWN_CHARS, OVERRIDE_LABELS, VERDICT_TEXT, attr, fmt_cost, fmt_seconds, safe_text

if TYPE_CHECKING:
    from .session import CellView, RunView


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
