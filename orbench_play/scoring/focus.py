"""Hard prompts first: spend a small budget where models already disagree.

`disagreement_scores` looks at the session's results: for each prompt answered
by at least two variants, each variant's refusal share over its counted
answers (repeats included) is averaged across variants (each variant weighs
the same, however many repeats it had), and the score is the binary entropy of
that average: 1.0 when half the variants refused and half answered, 0 when all
agreed. Prompts seen by fewer than two variants get no score.

`focus_sample` draws the same number of prompts as `data.sample` would, but
takes the highest-scoring prompts first (per category with `per_category`, over
all chosen categories with `n`), ties broken by the seeded order `data.sample`
uses, and fills the rest with the normal seeded sample. Deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from ..asking.prompts import variant_of
from ..data import Sample, _sort_key, parse_categories, sample
from ..types import CellResult, Prompt
from .stability import tally


def _entropy(p: float) -> float:
    if p <= 0.0 or p >= 1.0:
        return 0.0
    return -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def disagreement_scores(
    results: Iterable[CellResult], key: Callable[[CellResult], str] = variant_of
) -> dict[str, float]:
    """row_id → disagreement in [0, 1] (only prompts with counted answers from ≥ 2 variants)."""
    shares: dict[str, list[float]] = {}
    for (_variant, row_id), t in tally(results, key).items():
        if t.answers:
            shares.setdefault(row_id, []).append(t.refusals / t.answers)
    return {rid: _entropy(sum(s) / len(s)) for rid, s in shares.items() if len(s) >= 2}


def focus_sample(
    prompts: Sequence[Prompt],
    results: Iterable[CellResult],
    *,
    per_category: int | None = None,
    n: int | None = None,
    seed: int = 0,
    categories: Sequence[str] | str | None = None,
    key: Callable[[CellResult], str] = variant_of,
) -> Sample:
    """Like `data.sample` (same arguments, same size, same notes), but prompts the
    session's variants disagreed on come first. Output is grouped by category,
    hard prompts first within each group."""
    base = sample(prompts, categories=categories, per_category=per_category, n=n, seed=seed)
    scores = {rid: s for rid, s in disagreement_scores(results, key).items() if s > 0}
    if not scores:
        return base
    wanted = parse_categories(categories)
    pool = [p for p in prompts if p.row_id in scores and (wanted is None or p.category in wanted)]
    pool.sort(key=lambda p: (-scores[p.row_id], _sort_key(seed, p.row_id), p.row_id))

    picked: list[Prompt] = []
    if per_category is not None:
        budget: dict[str, int] = {}
        for p in base.prompts:
            budget[p.category] = budget.get(p.category, 0) + 1
        for p in pool:
            if budget.get(p.category, 0) > 0:
                picked.append(p)
                budget[p.category] -= 1
        hard = {p.row_id for p in picked}
        for p in base.prompts:
            if budget.get(p.category, 0) > 0 and p.row_id not in hard:
                picked.append(p)
                budget[p.category] -= 1
    else:
        total = len(base.prompts)
        picked = pool[:total]
        hard = {p.row_id for p in picked}
        picked += [p for p in base.prompts if p.row_id not in hard][: total - len(picked)]

    hard_count = len(hard)
    order = {p.row_id: i for i, p in enumerate(picked)}
    picked.sort(key=lambda p: (p.category, order[p.row_id]))
    note = f"Focus: {hard_count} of {len(picked)} prompts are ones the session's models disagreed on."
    return Sample(prompts=tuple(picked), notes=(*base.notes, note))
