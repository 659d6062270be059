"""Does the score's interval hold the people's rate? The outside check, in miniature.

Groups are source × model with at least MIN_GROUP clear rows (a model's answers
to one prompt set, as the outside check groups them). Each group's refusal rate
is estimated as the page and `orbench-play score` estimate it
(`scoring.error_aware`), from out-of-fold verdicts (`loso`): the verdicts a
model that never saw the group's source would give. Reported per group: the
people's rate, the verdicts' rate, the error-aware rate and interval; and over
the groups: how many intervals hold the people's rate, their median width, how
many rates fall within 5 points. Then the same with a review budget of
REVIEW_SHARE of all rows, picked by `orbench-play review`'s policy and answered
from the people's labels: once with the command's own seed (what the outside
check does), and as the mean over SEEDS draws.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ..scoring.error_aware import Cell, estimate
from ..scoring.review_policy import DEFAULT_SEED, systematic_sample, weight
from ..types import REFUSALS, Verdict
from .calibration import p_of
from .data import LabelledRow

MIN_GROUP = 30
REVIEW_SHARE = 0.10
SEEDS = 40
NEAR = 0.05


@dataclass(slots=True)
class GroupFigure:
    name: str
    n: int
    people: float
    naive: float
    rate: float
    low: float
    high: float

    @property
    def covered(self) -> bool:
        return self.low <= self.people <= self.high

    @property
    def width(self) -> float:
        return self.high - self.low


@dataclass(slots=True)
class Coverage:
    groups: int
    covered: float
    """Groups whose interval holds the people's rate (a mean over draws with reviews)."""
    median_width: float
    near: float
    """Groups whose rate is within NEAR of the people's."""
    naive_covered: int = 0


def _groups(rows: Sequence[LabelledRow]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        if r.clear:
            out[f"{r.source} / {r.model or r.source}"].append(i)
    return {k: v for k, v in sorted(out.items()) if len(v) >= MIN_GROUP}


def _figures(
    rows: Sequence[LabelledRow],
    verdicts: Sequence[Verdict],
    groups: dict[str, list[int]],
    reviews: dict[int, float] | None = None,
) -> list[GroupFigure]:
    out = []
    for name, idx in groups.items():
        cells = []
        for i in idx:
            p = p_of(verdicts[i])
            refused = verdicts[i].label in REFUSALS
            if reviews and i in reviews:
                cells.append(Cell(p, refused, int(rows[i].label in REFUSALS), reviews[i]))
            else:
                cells.append(Cell(p, refused))
        est = estimate(cells)
        people = sum(rows[i].label in REFUSALS for i in idx) / len(idx)
        out.append(GroupFigure(name, len(idx), people, est.naive_rate, est.rate, est.low, est.high))
    return out


def _summary(figs: Sequence[GroupFigure]) -> tuple[int, float, int]:
    return (
        sum(f.covered for f in figs),
        statistics.median(f.width for f in figs) if figs else 0.0,
        sum(abs(f.rate - f.people) <= NEAR for f in figs),
    )


def review_draw(rows: Sequence[LabelledRow], verdicts: Sequence[Verdict], seed: int) -> dict[int, float]:
    """Row index -> inclusion probability of REVIEW_SHARE of the clear rows, as `orbench-play review` picks."""
    index = [i for i, r in enumerate(rows) if r.clear]
    k = round(REVIEW_SHARE * len(index))
    picks = systematic_sample([weight(p_of(verdicts[i])) for i in index], k, seed)
    return {index[j]: pi for j, pi in picks}


def coverage(
    rows: Sequence[LabelledRow], verdicts: Sequence[Verdict]
) -> tuple[list[GroupFigure], Coverage, list[GroupFigure], Coverage]:
    """(per group without reviews, summary; per group with the command's own review draw,
    summary over SEEDS draws)."""
    groups = _groups(rows)
    plain = _figures(rows, verdicts, groups)
    covered, width, near = _summary(plain)
    naive = sum(_naive_covers(f, rows, groups) for f in plain)
    summary = Coverage(len(plain), covered, width, near, naive)
    reviewed = _figures(rows, verdicts, groups, review_draw(rows, verdicts, DEFAULT_SEED))
    runs = [_summary(_figures(rows, verdicts, groups, review_draw(rows, verdicts, s))) for s in range(SEEDS)]
    with_reviews = Coverage(
        len(plain),
        statistics.mean(c for c, _, _ in runs),
        statistics.median(w for _, w, _ in runs),
        statistics.mean(n for _, _, n in runs),
    )
    return plain, summary, reviewed, with_reviews


def _naive_covers(f: GroupFigure, rows: Sequence[LabelledRow], groups: dict[str, list[int]]) -> bool:
    from ..scoring.error_aware import wilson_interval

    low, high = wilson_interval(f.naive, f.n)
    return low <= f.people <= high


def format_coverage(
    plain: Sequence[GroupFigure], summary: Coverage, reviewed: Sequence[GroupFigure], with_reviews: Coverage
) -> str:
    lines = [
        "The score's interval against the people's rate, per source x model (verdicts from models that never",
        "saw the group's source; no reviews, then a 10% review budget picked by `orbench-play review`)",
        f"{'group':44}{'n':>5}{'people':>8}{'verdicts':>9}{'corrected [interval]':>24}{'held':>6}"
        f"{'with reviews':>24}{'held':>6}",
    ]
    for f, g in zip(plain, reviewed, strict=True):
        lines.append(
            f"{f.name[:43]:44}{f.n:>5}{f.people:>8.0%}{f.naive:>9.0%}"
            f"{f'{f.rate:.0%} [{f.low:.0%}-{f.high:.0%}]':>24}{'yes' if f.covered else 'NO':>6}"
            f"{f'{g.rate:.0%} [{g.low:.0%}-{g.high:.0%}]':>24}{'yes' if g.covered else 'NO':>6}"
        )
    lines.append(
        f"without reviews: {summary.covered} of {summary.groups} held (the verdict count's Wilson interval: "
        f"{summary.naive_covered}), median width {summary.median_width:.2f}, within 5 points {summary.near}"
    )
    lines.append(
        f"with a 10% review budget: {with_reviews.covered:.1f} of {with_reviews.groups} held on average over "
        f"{SEEDS} draws, median width {with_reviews.median_width:.2f}, within 5 points {with_reviews.near:.1f}"
    )
    return "\n".join(lines)
