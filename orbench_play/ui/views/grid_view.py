"""The live grid (one row per prompt, one column per model) and the progress line.

A cell is a fixed set of slots: a head (the contract `.verdict` badge and the
verdict source in words), a scrolling body (a message, then the answer text)
and a meta line. A cell followed up on shows its conversation's earlier turns
collapsed at the top of the body (`<details class="turns">`, each turn with
what was said, its answer and a `.turn-verdict` badge carrying `data-verdict`,
`data-turn`, `data-model`, `data-row`), then what the visitor said this turn
(`.said`); the slots, the contract `.verdict` badge among them, are the
latest turn's; each row's follow-up box is built by the page's script from
the table's `data-fu`. `cell_fields` says what goes in the slots; `render_grid`
turns that into HTML (the API's grid, and the page's skeleton without answer
text), and the page's script (`live_grid.js`) fills the same slots from the
same fields sent by `live_feed`, so both paths show the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...verdicts.offline import provider_explanation
from .safe_html import (
    JUDGE_FAILED,
    MAX_SHOWN_CHARS,
    OVERRIDE_LABELS,
    VERDICT_TEXT,
    attr,
    fmt_cost,
    fmt_seconds,
    safe_text,
    source_text,
)

if TYPE_CHECKING:
    from .run_view import CellView, RunView

PROMPT_COL_PX = 170
MODEL_COL_PX = 110
"""Sane minimum widths: on a narrow page the grid scrolls sideways instead of crushing columns,
and six models fit beside the prompts in the grid's column of a 1,366-pixel screen."""

_BREAK_AFTER = re.compile(r"([-/_:@]|\.(?=[A-Za-z]))")
"""Where a long name may wrap besides its spaces: after - / _ : @, and after a dot before a
letter (`llama-3.1-8b`, `claude-3.5` keep their version numbers whole)."""


def breakable(name: str) -> str:
    """A model or variant name as escaped HTML that may wrap after its separators
    (`fake-refuse-with-a-long-name`, `groq/llama-3.1-8b`): a narrow column header
    shows the whole name on two or three lines instead of cutting it."""
    return "<wbr>".join(safe_text(part) for part in _BREAK_AFTER.sub("\\1\0", name).split("\0"))


def _retries(cell: CellView) -> tuple[int, float]:
    """(retries, seconds waited): the engine's figures on the result when it
    has them (`attempts`, `retry_wait_s`), else what the retry events said."""
    r = cell.result
    attempts = getattr(r, "attempts", None) if r is not None else None
    waited = getattr(r, "retry_wait_s", None) if r is not None else None
    n = attempts - 1 if isinstance(attempts, int) and attempts > 1 else cell.retries
    wait = float(waited) if isinstance(waited, (int, float)) and waited else cell.retry_wait_s
    return max(0, n), max(0.0, wait)


def _meta(cell: CellView) -> list[str]:
    """The meta line's items: latency, ttft (and, after thoughts, the time to
    the first answer token), tokens, cost (once final) and retries."""
    parts: list[str] = []
    r = cell.result
    if r is not None and not cell.stopped:
        parts += [f"latency {fmt_seconds(r.latency_s)}", f"ttft {fmt_seconds(r.ttft_s)}"]
        if r.reasoning and r.ttfa_s is not None:
            parts.append(f"answer after {fmt_seconds(r.ttfa_s)}")
        if r.completion_tokens is not None:
            parts.append(f"{r.completion_tokens} tok")
        parts.append(fmt_cost(r.cost_usd))
    n, wait = _retries(cell)
    if n:
        parts.append(f"retried {n}×" + (f" (waited {fmt_seconds(wait)})" if wait else ""))
    return parts


def cell_fields(cell: CellView, override: str | None = None) -> dict[str, Any]:
    """Everything one answer shows besides its text, by the short keys the live feed sends.

    st state (wait/live/done/stopped) · v data-verdict · p provisional label ·
    s data-source · b badge text · h source in words · w what the verdict rests on
    (the badge's tooltip) · ov overridable by click · sr sure (data-sure) and pr
    p(refusal) to two places (the tooltip's "how sure", `how_sure`), both only once final ·
    m meta items · c cached · e message kind (err/retry/stop/info/judge) · mt message · x characters cut ·
    th the thoughts' summary line ("" without thoughts) · tx characters of thoughts cut
    """
    label = cell.final_label()
    source = cell.final_source()
    final = label != "pending" and not cell.stopped
    if override and final and label in OVERRIDE_LABELS:
        label, source = override, "user"
    p_refusal, sure = _sureness(cell, label, source) if final else (None, None)
    provisional = ""
    if cell.stopped:
        badge, state = "stopped", "stopped"
    elif final:
        badge, state = VERDICT_TEXT.get(label, label), "done"
    elif cell.thoughts and not cell.text:
        badge, state = "thinking…", "live"  # no provisional verdict from thoughts: only the answer is judged
    else:
        badge = "streaming" if cell.text else ("asking" if cell.started else "waiting")
        state = "live" if cell.started or cell.text else "wait"
        if cell.provisional is not None:
            provisional = cell.provisional.label
            badge = VERDICT_TEXT.get(provisional, provisional) + "?"
    if sure is False:
        badge += " · unsure"
    kind, message = _message(cell, final, source)
    fields: dict[str, Any] = {
        "st": state,
        "v": label,
        "p": provisional,
        "s": source,
        "b": badge,
        "h": _provider_reason(cell) if source == "provider" else source_text(source),
        "w": _why(cell, source) if final else "",
        "ov": final and label in OVERRIDE_LABELS,
        "m": _meta(cell),
        "c": bool(cell.result is not None and cell.result.cached and not cell.stopped),
        "e": kind,
        "mt": message,
        "x": max(0, len(cell.shown_text()) - MAX_SHOWN_CHARS),
        "th": thoughts_summary(cell),
        "tx": max(0, len(cell.shown_thoughts()) - MAX_SHOWN_CHARS),
    }
    if sure is not None and p_refusal is not None:  # once final: left out before, so live updates stay small
        fields["sr"], fields["pr"] = sure, round(p_refusal, 2)
    return fields


def _sureness(cell: CellView, label: str, source: str) -> tuple[float | None, bool | None]:
    """(p_refusal, sure) of a final verdict (`scoring.sureness`); a person's is certain."""
    from ...scoring import sureness

    if source == "user":
        return sureness.probability(label, "user")
    if cell.result is None:
        return None, None
    return sureness.of_result(cell.result)


def how_sure(p: float | None, sure: bool | None, source: str) -> str:
    """How sure a verdict is and why, in words: "unsure: 62% that it is a refusal (the
    classifier's calibrated probability)" ("" without a verdict). `live_grid.js`'s
    `howSure` says the same from the same fields."""
    if p is None or sure is None:
        return ""
    if source == "user":
        return "sure: a person set it"
    which = "a refusal" if p >= 0.5 else "an answer"
    basis = "the judge's measured accuracy" if source.startswith("llm:") else "the classifier's calibrated probability"
    if source.startswith("provider"):
        basis = "the provider's own signal"
    return f"{'sure' if sure else 'unsure'}: {100 * max(p, 1 - p):.0f}% that it is {which} ({basis})"


def _message(cell: CellView, final: bool, source: str) -> tuple[str, str]:
    """The cell's message slot (kind, text): stopped, failed, retrying; once final, why
    the provider layer decided (the body would otherwise be blank), or that the LLM
    judge gave no verdict and which verdict stands instead."""
    result = cell.result
    if cell.stopped:
        return "stop", "Stopped."
    if result is not None and result.error:
        return "err", "⚠ " + result.error
    if cell.message:
        return "retry", cell.message
    if final and result is not None and source == "provider":
        return "info", provider_explanation(result.finish_reason)
    if final and result is not None and result.judge_error:
        stood = source_text(result.verdict_source.removesuffix(JUDGE_FAILED))
        return "judge", f"{result.judge_error} · {stood} used"
    if final and result is not None and result.settled:
        return "settle", settle_note(result.settled_at_tokens)
    return "", ""


FINISH_LABEL = "Finish this answer"
FINISH_TITLE = "Ask again without stopping early: the whole answer, cached apart from this one"


def settle_note(tokens: int | None) -> str:
    """A settled answer's message: where it was stopped, and why."""
    where = f" at {tokens:,} token{'s' if tokens != 1 else ''}" if tokens else ""
    return f"Stopped{where}: verdict settled."


def finish_button() -> str:
    """The control beside a settled first answer's note (`live_grid.js` adds the same to
    cells the live feed fills): it sends the feed's `finish` event."""
    return f'<button type="button" class="finish" title="{attr(FINISH_TITLE)}">{safe_text(FINISH_LABEL)}</button>'


def thoughts_summary(cell: CellView) -> str:
    """The collapsed thoughts' one line: "thinking…" while they stream, then
    "thought for N s · N tokens" ("" for an answer without thoughts)."""
    if not cell.shown_thoughts():
        return ""
    r = cell.result
    if r is None or cell.stopped:
        return "thoughts" if cell.stopped else "thinking…"
    end = r.ttfa_s if r.ttfa_s is not None else r.latency_s
    took = f" for {fmt_seconds(end - r.ttft_s)}" if end is not None and r.ttft_s is not None else ""
    tokens = f" · {r.reasoning_tokens:,} tokens" if r.reasoning_tokens else ""
    return f"thought{took}{tokens}"


def _why(cell: CellView, source: str) -> str:
    """What a final verdict rests on, in a few words: the signals the engine's
    final verdict names ("a caveat, then a 7-step list on the prompt's subject")."""
    if source == "user":
        return "set by you"
    verdict = cell.provisional
    why = verdict.rationale if verdict is not None and verdict.final else ""
    if source.startswith("llm:") and why:
        return "the judge: " + " ".join(why.split())[:160]
    return why


def _provider_reason(cell: CellView) -> str:
    """A provider's refusal in words: an empty answer and a filtered one are both
    refusals, but not the same thing (the engine's verdict rationale says the same)."""
    result = cell.result
    if result is not None and result.finish_reason == "content_filter":
        return "content filter"
    if result is not None and result.finish_reason == "refusal":
        return "refusal field"
    return "empty answer"


def more_text(extra: int) -> str:
    return f" … (+{extra:,} characters in the export)"


def _badge(cell: CellView, f: dict[str, Any]) -> str:
    v, s = f["v"], f["s"]
    provisional = f' data-provisional="{attr(f["p"])}"' if f["p"] else ""
    title = badge_title(f)
    # A button (`live_grid.js` opens its override menu on click, Enter or Space); disabled until final.
    state = ' aria-haspopup="true" aria-expanded="false"' if f["ov"] else " disabled"
    sure = "" if f.get("sr") is None else f' data-sure="{"true" if f["sr"] else "false"}"'
    return (
        f'<button type="button" class="verdict v-{attr(v)}{" ovr" if f["ov"] else ""}'
        f'{" unsure" if f.get("sr") is False else ""}" data-verdict="{attr(v)}" '
        f'data-model="{attr(cell.model)}" data-variant="{attr(cell.variant or cell.model)}" '
        f'data-row="{attr(cell.row_id)}" data-repeat="{int(cell.repeat)}" data-source="{attr(s)}"'
        f'{provisional}{sure}{state} title="{attr(title)}">{safe_text(f["b"])}</button>'
    )


def badge_title(f: dict[str, Any]) -> str:
    """The badge's tooltip: the verdict, who decided, what it rests on, how sure
    (`live_grid.js` builds the same from the same fields)."""
    v, s = f["v"], f["s"]
    title = f"verdict: {v}" + (f" (source: {s})" if s else "") + (f": {f['w']}" if f["w"] else "")
    said = how_sure(f.get("pr"), f.get("sr"), s)
    return title + (f" · {said}" if said else "")


def badge(cell: CellView, override: str | None = None) -> str:
    """The contract element: class `verdict`, `data-verdict` pending until final."""
    return _badge(cell, cell_fields(cell, override))


def _answer(cell: CellView, f: dict[str, Any], with_text: bool) -> str:
    """The slots of one answer (inner HTML): head, body (message, text), meta."""
    s = f["s"]
    badge = _badge(cell, f)
    vsrc = f'<span class="vsrc" title="verdict source: {attr(s)}">{safe_text(f["h"])}</span>' if s else ""
    meta = " · ".join(safe_text(m) for m in f["m"])
    if f["c"]:
        meta += (" · " if meta else "") + '<span class="cached" title="replayed from the disk cache">cached</span>'
    meta_title = " · ".join([*f["m"], *(["cached"] if f["c"] else [])])
    text = safe_text(cell.shown_text()[:MAX_SHOWN_CHARS]) if with_text else ""
    more = f'<span class="more">{safe_text(more_text(f["x"]))}</span>' if with_text and f["x"] else ""
    finish = " " + finish_button() if f["e"] == "settle" and cell.turn <= 1 else ""
    msg = f'<div class="msg msg-{f["e"]}">{safe_text(f["mt"])}{finish}</div>' if f["e"] else '<div class="msg"></div>'
    thought = safe_text(cell.shown_thoughts()[:MAX_SHOWN_CHARS]) if with_text else ""
    tmore = f'<span class="more">{safe_text(more_text(f["tx"]))}</span>' if with_text and f["tx"] else ""
    think_focus = ' tabindex="0"' if f["th"] else ""
    thoughts = (
        f'<details class="thoughts"{"" if f["th"] else " hidden"}><summary>{safe_text(f["th"])}</summary>'
        # tabindex: opened, long thoughts scroll in a box of their own (max-height), which
        # the keyboard reaches only when the box itself takes focus (axe: scrollable-region-focusable);
        # only where there are thoughts (the page script adds it when they start), so the
        # skeleton of a run without a reasoning model stays small
        f'<div class="think"{think_focus}>{thought}{tmore}</div></details>'
    )
    conversation = _turns(cell)
    return (
        f'<div class="cell-head">{badge}{vsrc}</div>'
        f'<div class="body" tabindex="0">{conversation}{msg}{thoughts}<div class="resp">{text}{more}</div></div>'
        f'<div class="meta" title="{attr(meta_title)}">{meta}</div>'
    )


def _turns(cell: CellView) -> str:
    """A conversation's earlier turns, collapsed, and what was said this turn ("" at turn 1).
    Earlier turns are finished: their (escaped) text is part of the skeleton."""
    if not cell.turns and not cell.said:
        return ""
    parts = []
    for r in cell.turns:
        label = r.verdict if not r.error else "error"
        said = f"You: {r.follow_up}" if r.turn > 1 else "The prompt"
        text = r.error if r.error else r.response
        parts.append(
            f'<div class="turn" data-turn="{int(r.turn)}" data-cell="{attr(r.cell_id)}">'
            f'<div class="turn-said">{safe_text(f"Turn {r.turn} · {said}")}</div>'
            f'<span class="turn-verdict v-{attr(label)}" data-verdict="{attr(label)}" data-turn="{int(r.turn)}" '
            f'data-model="{attr(r.model)}" data-row="{attr(r.row_id)}">{safe_text(VERDICT_TEXT.get(label, label))}</span>'
            f'<div class="turn-resp">{safe_text(text[:MAX_SHOWN_CHARS])}</div></div>'
        )
    n = len(cell.turns)
    earlier = (
        f'<details class="turns"><summary>{n} earlier turn{"s" if n != 1 else ""}</summary>{"".join(parts)}</details>'
        if parts
        else ""
    )
    said = f'<div class="said" data-turn="{int(cell.turn)}">{safe_text(f"Turn {cell.turn} · You: {cell.said}")}</div>'
    return earlier + (said if cell.said else "")


def follow_up_presets() -> str:
    """The follow-up presets as the grid's `data-fu` attribute (`key|label;…`, default
    first): `live_grid.js` builds each row's follow-up box from it, so the skeleton
    carries them once, not once per row."""
    from ...asking.followups import DEFAULT_PRESET, PRESETS

    keys = [DEFAULT_PRESET, *(k for k in PRESETS if k != DEFAULT_PRESET)]
    return ";".join(f"{k}|{PRESETS[k]}" for k in keys)


def render_cell(cell: CellView, override: str | None = None, *, with_text: bool = True) -> str:
    f = cell_fields(cell, override)
    return (
        f'<td class="cell" data-state="{f["st"]}" data-cell="{attr(cell.cell_id)}" data-i="{cell.index}">'
        f"{_answer(cell, f, with_text)}</td>"
    )


def repeat_tally(cells: Sequence[CellView], overrides: dict[str, str] | None = None):
    """`stability.Tally` of the finished answers among `cells` (overrides applied)."""
    from dataclasses import replace

    from ...scoring.stability import Tally, tally

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


def group_fields(cells: Sequence[CellView], overrides: dict[str, str] | None = None) -> dict[str, Any]:
    """The "k/n refused" head of one (prompt, model) cell asked k times:
    t text · f flipped · r refusals · a answers · st state of the whole cell."""
    t = repeat_tally(cells, overrides)
    states = {cell_fields(c)["st"] for c in cells}
    pending = sum(1 for c in cells if c.final_label() == "pending")
    text = t.label() if t.answers else ("error" if not pending else "waiting")
    if pending and t.answers:
        text += f" · {pending} to go"
    state = next((s for s in ("live", "wait", "stopped") if s in states), "done")
    return {"t": text, "f": bool(t.flipped), "r": t.refusals, "a": t.answers, "st": state}


def render_repeats(cells: Sequence[CellView], overrides: dict[str, str] | None = None, *, with_text=True) -> str:
    """One (prompt, model) cell asked k times: a "k/n refused" badge, then the
    k answers stacked as #1, #2, … (each with its own contract `.verdict`)."""
    overrides = overrides or {}
    g = group_fields(cells, overrides)
    parts = [
        f'<div class="stab-head"><span class="stab{" stab-flip" if g["f"] else ""}" data-refusals="{g["r"]}" '
        f'data-answers="{g["a"]}" data-repeats="{len(cells)}" '
        f'title="refusals of the answers with a verdict (errors not counted)">{safe_text(g["t"])}</span></div>'
    ]
    for n, c in enumerate(cells):
        f = cell_fields(c, overrides.get(c.cell_id))
        parts.append(
            f'<div class="rep" data-state="{f["st"]}" data-repeat="{n}" data-i="{c.index}" '
            f'data-cell="{attr(c.cell_id)}"><span class="rep-n">#{n + 1}</span>{_answer(c, f, with_text)}</div>'
        )
    return (
        f'<td class="cell cell-rep" data-state="{g["st"]}" data-cell="{attr(cells[0].cell_id)}" '
        f'data-g="{cells[0].index}" data-k="{len(cells)}">{"".join(parts)}</td>'
    )


FILTERS = (
    ("all", "All"),
    ("refusals", "Refusals"),
    ("disagree", "Disagreements"),
    ("unsure", "Unsure"),
    ("errors", "Errors"),
)
"""The grid's filters (`live_grid.js` decides which rows each keeps): every prompt; those
with a refusal; those whose models disagree (an answer beside a refusal); those with an
unsure verdict (`data-sure="false"`); those with a failed cell."""
FILTER_BAR = (
    '<div class="gf-bar" role="group" aria-label="Show prompts"><span class="gf-label">Show</span>'
    + "".join(
        f'<button type="button" class="gf" data-filter="{key}" aria-pressed="{"true" if key == "all" else "false"}">'
        f'{label}<span class="gf-n"></span></button>'
        for key, label in FILTERS
    )
    + '<span class="gf-shown" aria-live="polite"></span></div>'
)

GRID_REGION = 'tabindex="0" role="region" aria-label="Answers: one row per prompt, one column per model"'
"""The grid scrolls in its own box: focusable, so the keyboard can scroll it too."""

EMPTY_GRID = (
    '<div class="grid-wrap" tabindex="-1"><div class="grid-empty">Choose models and prompts on the left and press '
    "<b>Run</b>: every answer streams into this grid, one column per model.</div></div>"
)
"""The grid before a run (focusable from the skip link, not a Tab stop of its own)."""


def render_grid(run: RunView | None, overrides: dict[str, str] | None = None, *, with_text: bool = True) -> str:
    """One row per prompt (text and category), one column per model (labelled
    with its variant name); with repeats each cell stacks its k answers.
    Without `with_text` the answers' text is left out (the page's skeleton:
    the text follows through the live feed, as text, never as HTML)."""
    overrides = overrides or {}
    if run is None or not run.prompts:
        return EMPTY_GRID
    head = "".join(
        f'<th class="model-col" data-model="{attr(name)}" data-variant="{attr(run.variants.get(name, name))}" '
        f'title="{attr(label)}">{breakable(label)}</th>'
        for name, label in run.model_labels
    )
    rows = []
    for prompt in run.prompts:
        cells = []
        for group in run.groups(prompt.row_id):
            views = [run.cells[cid] for cid in group]
            if len(views) == 1:
                cells.append(render_cell(views[0], overrides.get(views[0].cell_id), with_text=with_text))
            else:
                cells.append(render_repeats(views, overrides, with_text=with_text))
        rows.append(
            f'<tr data-row="{attr(prompt.row_id)}"><th class="prompt" scope="row">'
            f'<span class="cat">{safe_text(prompt.category)}</span>'
            f'<span class="rid">{safe_text(prompt.row_id)}</span>'
            f'<div class="ptext" tabindex="0">{safe_text(prompt.text)}</div></th>{"".join(cells)}</tr>'
        )
    k = f' data-repeats="{run.repeats}"' if run.repeats > 1 else ""
    width = PROMPT_COL_PX + MODEL_COL_PX * len(run.model_labels)
    return (
        f'<div class="grid-wrap" {GRID_REGION}><table class="grid" data-run="{run.number}"{k} '
        f'data-fu="{attr(follow_up_presets())}" style="min-width:{width}px;--models:{len(run.model_labels)}">'
        f'<colgroup><col class="prompt-col" style="width:{PROMPT_COL_PX}px">'
        f"{'<col>' * len(run.model_labels)}</colgroup>"
        f'<thead><tr><th class="prompt-col">Prompt</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def render_progress(run: RunView | None, notes: Sequence[str] = ()) -> str:
    """Cells done/total, what the run is waiting for, and sampling notes. A
    stopped run says how many cells finished and how many were stopped."""
    if run is None:
        inner = '<span class="prog-text">No run yet.</span>'
    else:
        total = run.total()
        finished, stopped = run.finished_count(), run.stopped_count()
        errors = run.error_count()
        state = "stopped" if run.stopped else ("finished" if run.finished else "running")
        what = run.title()
        if run.stopped:
            text = f"{what} stopped: {finished} of {total} cells finished · {stopped} stopped"
        else:
            text = f"{what}: {finished}/{total} cells done"
        if errors:
            text += f" · {errors} error{'s' if errors != 1 else ''}"
        cached = run.cached_count()
        if cached:
            text += f" · {cached} cached"
        if run.n_judge_failed:  # said where it is seen: each cell's note is easy to miss in a grid
            text += f" · judge failed on {run.n_judge_failed} of {run.n_judged}; offline verdicts used"
        if not run.stopped:
            text += f" · {state}"
        elapsed = run.elapsed()
        if elapsed is not None:  # whole seconds while running: the line changes once a second, not every frame
            text += f" · {elapsed:.1f} s" if run.finished else f" · {elapsed:.0f} s"
        inner = (
            f'<progress max="{max(total, 1)}" value="{finished}"></progress>'
            f'<span class="prog-text" data-state="{state}" data-done="{run.done_count()}" data-total="{total}" '
            f'data-finished="{finished}" data-stopped="{stopped}">{safe_text(text)}</span>'
        )
        if run.status and not run.finished:
            inner += f'<div class="prog-status">{safe_text(run.status)}</div>'
        notes = [*run.notes, *notes]
    extra = "".join(f'<div class="prog-note">{safe_text(n)}</div>' for n in notes)
    state = "" if run is None else ("stopped" if run.stopped else ("finished" if run.finished else "running"))
    state_attr = f' data-state="{state}"' if state else ""
    return f'<div class="progress-box"{state_attr}>{inner}{extra}</div>'
