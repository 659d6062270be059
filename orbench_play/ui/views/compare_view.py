"""The comparison view: two variants side by side, disagreements first."""

from __future__ import annotations

from typing import Any

from .safe_html import attr, safe_text

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
    from ...compare import fmt_p

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
        "McNemar's test on per-prompt majority verdicts, per split (hard-1k, 80k, toxic).</div>"
    )
    return (
        f'<div class="cmp" data-a="{attr(a)}" data-b="{attr(b)}" data-disagreements="{n_dis}">'
        f'{head}<div class="cmp-summary">{sentences}{note_html}</div>{table}{foot}{diff}</div>'
    )
