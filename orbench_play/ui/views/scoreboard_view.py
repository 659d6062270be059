"""The session scoreboard: rates with intervals, and the per-category heat map."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .safe_html import attr, safe_text

if TYPE_CHECKING:
    from ...scoring import ModelScore, Rate, SettleSavings
    from ...scoring.error_aware import Estimate

SPLIT_NAMES = {"hard-1k": "hard-1k", "80k": "80k", "toxic": "toxic"}
SPLIT_TITLES = {
    "hard-1k": "OR-Bench-Hard-1K: benign prompts most models refuse (the paper's x axis)",
    "80k": "OR-Bench-80K: a broad sample of benign prompts (kept apart from hard-1k)",
    "toxic": "OR-Bench-Toxic: harmful prompts a good model refuses",
}
EMPTY = (
    '<div class="sb-empty">The session scoreboard fills in as cells finish: over-refusal on '
    "hard-1k, refusal on toxic prompts and the mini-score, each with its 95% interval. "
    "It accumulates over every run in this browser session.</div>"
)


def _rate_cell(rate: Rate | None, cls: str = "", corrected: Estimate | None = None) -> str:
    """A rate: with its error-aware figure, "verdicts say 44% (7/16) · corrected 71% [55–86]"
    (`data-rate`, `data-low`, `data-high` the corrected figure, `data-naive` the count's);
    without one (flip and relent rates), the count with its Wilson interval."""
    klass = f' class="{cls}"' if cls else ""
    if rate is None or rate.n == 0:
        return f'<td class="na{" " + cls if cls else ""}">–</td>'
    if corrected is not None and corrected.n:
        c = corrected
        reviewed = f' <span class="rev">· {c.reviewed} reviewed</span>' if c.reviewed else ""
        return (
            f'<td{klass} data-rate="{c.rate:.4f}" data-low="{c.low:.4f}" data-high="{c.high:.4f}" '
            f'data-naive="{rate.rate:.4f}"><span class="naive">verdicts say {100 * rate.rate:.0f}% '
            f'<span class="cnt">({rate.k}/{rate.n})</span></span> · corrected <b>{100 * c.rate:.0f}%</b> '
            f'<span class="ci">[{100 * c.low:.0f}–{100 * c.high:.0f}]</span>{reviewed}</td>'
        )
    return (
        f'<td{klass}><b>{100 * rate.rate:.1f}%</b> <span class="ci">[{100 * rate.low:.1f}–{100 * rate.high:.1f}]</span>'
        f' <span class="cnt">{rate.k}/{rate.n}</span></td>'
    )


def _mini_cell(s: ModelScore) -> str:
    if s.mini_score is None:
        if s.over_refusal is None and s.toxic_refusal is None:
            need = "benign and toxic"
        else:
            need = "toxic" if s.toxic_refusal is None else "benign (hard-1k or 80k)"
        return f'<td class="na mini" title="{attr(f"needs answers to {need} prompts")}">–</td>'
    basis = ""
    if s.benign_split == "80k":
        basis = ' <span class="basis" title="this model has no hard-1k answers: its mini-score uses 80k">on 80k</span>'
    if s.corrected_mini is not None:
        m, low, high = s.corrected_mini
        return (
            f'<td class="mini" data-rate="{m:.4f}" data-low="{low:.4f}" data-high="{high:.4f}" '
            f'data-naive="{s.mini_score:.4f}"><span class="naive">verdicts say {100 * s.mini_score:.0f}%</span> · '
            f'corrected <b>{100 * m:.0f}%</b> <span class="ci">[{100 * low:.0f}–{100 * high:.0f}]</span>{basis}</td>'
        )
    return (
        f'<td class="mini"><b>{100 * s.mini_score:.1f}%</b> <span class="ci">'
        f"[{100 * (s.mini_low or 0):.1f}–{100 * (s.mini_high or 0):.1f}]</span>{basis}</td>"
    )


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> str:
    return "rgb({},{},{})".format(*(round(x + (y - x) * t) for x, y in zip(a, b, strict=True)))


def _heat(pct: float | None) -> str:
    """Colours for a refusal percentage: light reds with dark text below 50%, dark reds
    with white text from 50% on. The jump keeps both texts at WCAG AA contrast (4.5:1):
    no single text colour reads on the middle of a smooth white-to-red scale."""
    if pct is None:
        return "background:transparent"
    t = max(0.0, min(1.0, pct / 100))
    if t < 0.5:
        return f"background:{_mix((255, 245, 245), (240, 150, 150), t / 0.5)};color:#1f2937"
    return f"background:{_mix((200, 50, 50), (127, 29, 29), (t - 0.5) / 0.5)};color:#fff"


def render_scoreboard(
    scores: Sequence[ModelScore],
    labels: dict[str, str] | None = None,
    *,
    note: str = "",
    models: dict[str, str] | None = None,
    savings: Mapping[str, SettleSavings] | None = None,
) -> str:
    """Per variant (model × settings): over-refusal on hard-1k (and on 80k, in a
    column of its own, when asked), toxic refusal and the mini-score, each with
    its 95% interval and counts; a flip-rate column when some prompt was asked
    more than once; how many answers were scored, not scored (custom prompts)
    and failed; then a per-category heat map of refusal rates.

    `labels` maps a score's key to its shown name, `models` maps it to the
    model name (the rows' `data-model`; the key itself is `data-variant`);
    `savings` (`scoring.settle_savings` by the same keys) adds what settling
    early saved (`render_savings`)."""
    labels = labels or {}
    models = models or {}
    if not scores:
        return EMPTY
    flips = any(s.flip_rate is not None for s in scores)
    broad = any(s.over_refusal_80k is not None for s in scores)
    custom = any(s.unscored for s in scores)
    followed = any(s.relent_benign is not None or s.relent_toxic is not None for s in scores)

    from ...scoring import custom_rate_label

    own = list(dict.fromkeys(key for s in scores for key in s.custom))  # prompt sets: rates of their own
    rows = []
    for s in scores:
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
            f"{_rate_cell(s.over_refusal_hard_1k, 'or-hard', s.corrected.get('hard-1k'))}"
            + (_rate_cell(s.over_refusal_80k, "or-80k", s.corrected.get("80k")) if broad else "")
            + f"{_rate_cell(s.toxic_refusal, 'tox', s.corrected.get('toxic'))}{_mini_cell(s)}{flip}"
            + (_rate_cell(s.relent_benign, "relent") + _rate_cell(s.relent_toxic, "relent-tox") if followed else "")
            + "".join(_rate_cell(s.custom.get(key), "own", s.corrected.get(key)) for key in own)
            + f'<td class="scored">{s.answered}</td>'
            + (f'<td class="unscored">{s.unscored}</td>' if custom else "")
            + f'<td class="errors">{s.errors}</td></tr>'
        )
    head = (
        '<th title="refusals (direct + indirect) on OR-Bench-Hard-1K prompts: benign prompts that only look '
        "harmful; the paper's x axis\">Over-refusal <small>hard-1k</small> ↓</th>"
    )
    if broad:
        head += (
            '<th title="refusals on OR-Bench-80K prompts (benign); kept apart from hard-1k, '
            "whose prompts are refused far more often, and not on the paper's axes\">"
            "Over-refusal <small>80k</small> ↓</th>"
        )
    head += (
        '<th title="refusals on OR-Bench-Toxic prompts (harmful: should be refused)">Toxic refusal ↑</th>'
        '<th title="balanced accuracy: mean of (1 − over-refusal) and toxic refusal; over-refusal on hard-1k '
        "(the paper's), or on 80k when a model has no hard-1k answers\">Mini-score ↑</th>"
    )
    if flips:
        head += (
            '<th title="prompts whose repeated answers were not all refusals or all answers, '
            'of the prompts asked at least twice">Flip rate ↓</th>'
        )
    if followed:
        head += (
            '<th title="of the benign prompts this model refused at turn 1 and you followed up on, the share it '
            'answered after the follow-up (an over-refusal one sentence undid)">Relent <small>benign</small></th>'
            '<th title="of the toxic prompts this model refused at turn 1 and you followed up on, the share it '
            'answered after the follow-up: a safety failure (a jailbreak by one sentence)">'
            "Relent <small>toxic</small> ↓</th>"
        )
    for key in own:
        head += (
            f'<th class="own" data-rate="{attr(key)}" title="refusals on your prompt set {attr(key)}; '
            f"never pooled with OR-Bench's rates, never on the paper's axes\">{safe_text(custom_rate_label(key))}</th>"
        )
    head += '<th title="answers that entered a rate (hard-1k, 80k, toxic)">Scored</th>'
    if custom:
        head += '<th title="answers to your own prompts: shown in the grid, never part of a rate">Not scored</th>'
    head += '<th title="answers that failed or were stopped (not scored)">Errors</th>'
    table = (
        f'<div class="sb-wrap" tabindex="0" role="region" aria-label="Session scoreboard"><table class="sb"><thead><tr><th>Model (variant)</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
    heat = render_category_heatmap(scores, labels)
    notes = [
        "Each rate says what the verdicts say (refusals/scored), then the rate corrected for verdict error "
        "with its 95% interval [low–high], which counts the verdicts' mistakes as well as sampling: each "
        "verdict averaged with its calibrated probability, corrected by the answers you reviewed, with room "
        "for verdicts that may not carry over to this model. Review unsure answers to tighten it.",
        "Over-refusal is kept per split: hard-1k (the paper's benchmark and the plot's x axis) and 80k "
        "are never pooled. The mini-score uses hard-1k, or 80k (marked “on 80k”) when a model has no "
        "hard-1k answers; it needs both benign and toxic answers.",
        "Your verdicts (overrides and reviews) count; errors and stopped cells do not. The heat map below "
        "shows verdict counts.",
    ]
    if custom:
        notes.append("Your own prompts are shown in the grid but belong to no split, so they are not scored.")
    notes.append("One row per model and setting (system prompt, temperature, …).")
    if followed:
        notes.append(
            "Relent rates: of the prompts refused at turn 1 and followed up, the share answered after the "
            "follow-up (counts: answered/followed up); every other rate and the mini-score are first-turn only."
        )
    if flips:
        notes.append("With repeats every answer is a trial in the rates; the flip rate counts prompts, not answers.")
    if note:
        notes.append(safe_text(note))
    foot = f'<div class="sb-foot">{" ".join(notes)}</div>'
    return f'<div class="scoreboard-inner">{table}{render_savings(savings or {}, labels)}{heat}{foot}</div>'


def render_savings(savings: Mapping[str, SettleSavings], labels: dict[str, str] | None = None) -> str:
    """What settling early saved, in one paragraph (`#scoreboard .sb-settle`): answers
    stopped, the output tokens not generated (at most: max tokens minus what arrived),
    and, where the models have a price, what those would have cost. Empty when no answer
    asked in these results was settled."""
    labels = labels or {}
    stopped = {k: s for k, s in savings.items() if s.settled}
    if not stopped:
        return ""
    answers = sum(s.answers for s in savings.values())
    settled = sum(s.settled for s in stopped.values())
    tokens = sum(s.saved_tokens for s in stopped.values())
    per = "; ".join(
        f"{labels.get(k, k)}: {s.settled} of {s.answers}, up to {s.saved_tokens:,} tokens"
        + (f" (${s.saved_cost_usd:,.4f})" if s.priced else "")
        for k, s in stopped.items()
    )
    priced = [s for s in stopped.values() if s.priced]
    money = (
        f" ≈ ${sum(s.saved_cost_usd for s in priced):,.4f} at the models' output prices"
        if priced
        else " (these models have no price: time, not money)"
    )
    text = (
        f"Settling stopped {settled} of {answers} answers once their verdict could no longer change: up to "
        f"{tokens:,} output tokens not generated{money}. {per}. OR-Bench judges whole answers; “Finish this "
        "answer” in a cell asks for the rest."
    )
    return f'<div class="sb-settle" data-settled="{settled}" data-saved-tokens="{tokens}">{safe_text(text)}</div>'


def render_category_heatmap(scores: Sequence[ModelScore], labels: dict[str, str] | None = None) -> str:
    """Rows model × split (hard-1k, 80k, toxic), a column per category asked:
    the refusal rate, shaded, with its counts (the interval is in the tooltip).
    The table fits its box at desktop widths and scrolls inside it on a phone."""
    from ...types import CATEGORIES

    labels = labels or {}
    asked = {c for s in scores for cats in s.per_category.values() for c in cats}
    present = [c for c in CATEGORIES if c in asked] + sorted(asked - set(CATEGORIES))
    if not present:
        return ""
    head = "".join(f'<th class="cat" title="{attr(c)}"><span>{safe_text(c)}</span></th>' for c in present)
    rows = []
    for s in scores:
        name = labels.get(s.model, s.model)
        for split, cats in s.per_category.items():
            tds = []
            for c in present:
                r = cats.get(c)
                if r is None or r.n == 0:
                    tds.append('<td class="na">–</td>')
                    continue
                pct = 100 * r.rate
                tip = f"{name} · {split} · {c}: {r.k}/{r.n} refused; 95% CI {100 * r.low:.0f}–{100 * r.high:.0f}%"
                tds.append(
                    f'<td style="{_heat(pct)}" title="{attr(tip)}">'
                    f'<span class="pct">{pct:.0f}%</span><span class="cnt">{r.k}/{r.n}</span></td>'
                )
            rows.append(
                f'<tr><th scope="row" title="{attr(name)}">{safe_text(name)}</th>'
                f'<td class="kind" title="{attr(SPLIT_TITLES.get(split, split))}">'
                f"{safe_text(SPLIT_NAMES.get(split, split))}</td>{''.join(tds)}</tr>"
            )
    return (
        '<div class="heat-title">Refusal rate by category</div>'
        f'<div class="heat-wrap" tabindex="0" role="region" aria-label="Refusal rate by category"><table class="heat"><colgroup><col class="c-model"><col class="c-split">'
        f"{'<col>' * len(present)}</colgroup>"
        f"<thead><tr><th>Model</th><th>Split</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
