"""The session scoreboard: rates with intervals, and the per-category heat map."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .safe_html import attr, safe_text

if TYPE_CHECKING:
    from ..scoring import ModelScore, Rate


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
