"""How far a verdict's P(refusal) can be taken at its word, per source.

Read from out-of-fold verdicts (`loso`): a probability calibrated on the rows
it is judged on would flatter itself. For each source: the reliability table
(answers binned by P(refusal): the mean P against the share people call a
refusal), the expected calibration error (the bins' gaps, weighed by their
size), the share of verdicts marked sure and how often they are right, and the
share of all wrong verdicts that sit among the unsure ones (where the review
queue looks first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..types import REFUSALS, Verdict
from .data import LabelledRow

BINS = 10


def p_of(verdict: Verdict) -> float:
    if verdict.p_refusal is not None:
        return verdict.p_refusal
    from ..verdicts import p_refusal_of

    return p_refusal_of(verdict)


@dataclass(slots=True)
class Bin:
    low: float
    high: float
    n: int
    mean_p: float
    rate: float
    """The share of the bin's answers people call a refusal."""


@dataclass(slots=True)
class CalibrationFigures:
    n: int = 0
    ece: float | None = None
    sure_share: float | None = None
    sure_accuracy: float | None = None
    errors_unsure: float | None = None
    """The share of all wrong verdicts (answer vs refusal) whose verdict was unsure."""
    bins: list[Bin] = field(default_factory=list)


def calibration(rows: Sequence[LabelledRow], verdicts: Sequence[Verdict], bins: int = BINS) -> CalibrationFigures:
    """The figures of `verdicts` against `rows`' labels (clear rows only)."""
    pairs = [(p_of(v), r.label in REFUSALS, bool(v.sure)) for r, v in zip(rows, verdicts, strict=True) if r.clear]
    if not pairs:
        return CalibrationFigures()
    n = len(pairs)
    table: list[Bin] = []
    gap = 0.0
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        inside = [(p, y) for p, y, _ in pairs if low <= p < high or (b == bins - 1 and p == 1.0)]
        if not inside:
            continue
        mean_p = sum(p for p, _ in inside) / len(inside)
        rate = sum(y for _, y in inside) / len(inside)
        table.append(Bin(low, high, len(inside), mean_p, rate))
        gap += len(inside) / n * abs(mean_p - rate)
    right = [(p >= 0.5) == y for p, y, _ in pairs]
    sure = [s for _, _, s in pairs]
    sure_right = [ok for ok, s in zip(right, sure, strict=True) if s]
    wrong = [s for ok, s in zip(right, sure, strict=True) if not ok]
    return CalibrationFigures(
        n=n,
        ece=gap,
        sure_share=sum(sure) / n,
        sure_accuracy=sum(sure_right) / len(sure_right) if sure_right else None,
        errors_unsure=(sum(not s for s in wrong) / len(wrong)) if wrong else None,
        bins=table,
    )


def mean_known(values: Sequence[float | None]) -> float | None:
    """The mean of the values that are known (a source with no wrong verdict has no share of them)."""
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def mean_of(figures: Sequence[CalibrationFigures]) -> CalibrationFigures:
    """Each source's figures weighing the same: pooled over answers, GPTFuzz's
    7,700 of 12,000 would decide every figure."""
    return CalibrationFigures(
        n=sum(f.n for f in figures),
        ece=mean_known([f.ece for f in figures]),
        sure_share=mean_known([f.sure_share for f in figures]),
        sure_accuracy=mean_known([f.sure_accuracy for f in figures]),
        errors_unsure=mean_known([f.errors_unsure for f in figures]),
    )


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def format_calibration(title: str, per_source: dict[str, CalibrationFigures]) -> str:
    lines = [title, f"{'':22}{'n':>6}{'ECE':>7}{'sure':>8}{'right':>8}{'errors unsure':>15}"]
    for name, f in per_source.items():
        ece = "-" if f.ece is None else f"{f.ece:.3f}"
        lines.append(
            f"{name:22}{f.n:>6}{ece:>7}{_pct(f.sure_share):>8}{_pct(f.sure_accuracy):>8}{_pct(f.errors_unsure):>15}"
        )
    lines.append("sure: share of verdicts marked sure; right: how often those were right (answer vs refusal);")
    lines.append("errors unsure: share of all wrong verdicts that were marked unsure (the review queue's first cells)")
    return "\n".join(lines)


def format_reliability(title: str, figures: CalibrationFigures) -> str:
    lines = [title, f"{'P(refusal)':>12}{'answers':>9}{'mean P':>8}{'people':>8}"]
    for b in figures.bins:
        lines.append(f"{b.low:>5.1f}-{b.high:<5.1f} {b.n:>9}{b.mean_p:>8.2f}{b.rate:>8.2f}")
    return "\n".join(lines)


AUTO_THRESHOLDS = (0.6, 0.7, 0.8, 0.9)
"""Thresholds `auto:<judge>` may ask below (`ORBENCH_AUTO_CONFIDENCE`): its
default and a few beyond; `make eval` adds the shipped model's "sure" line,
where the page's badge turns solid."""


def asked_below(
    rows: Sequence[LabelledRow], verdicts: Sequence[Verdict], thresholds: Sequence[float] = AUTO_THRESHOLDS
) -> dict[float, tuple[float, float | None]]:
    """For each threshold, what `auto:<judge>` would ask a judge about: the share
    of answers whose confidence is below it, and the share of the wrong verdicts
    (answer vs refusal, clear rows) among them, which a judge that is right
    could fix. Why: the default asks about few answers, and the misses that
    matter most (a tiny model's answer that quietly does something safer) look
    sure, so the share of errors reached is the figure to choose it by."""
    pairs = [
        (v.confidence, (p_of(v) >= 0.5) != (r.label in REFUSALS))
        for r, v in zip(rows, verdicts, strict=True)
        if r.clear
    ]
    errors = sum(wrong for _, wrong in pairs)
    out: dict[float, tuple[float, float | None]] = {}
    for t in thresholds:
        asked = [wrong for c, wrong in pairs if c < t]
        out[t] = (len(asked) / len(pairs) if pairs else 0.0, sum(asked) / errors if errors else None)
    return out


def every_source_alike(
    per_source: dict[str, dict[float, tuple[float, float | None]]],
) -> dict[float, tuple[float, float | None]]:
    """`asked_below`'s figures with each source weighing the same (as `mean_of`)."""
    tables = list(per_source.values())
    thresholds = tables[0].keys() if tables else ()
    return {
        t: (sum(table[t][0] for table in tables) / len(tables), mean_known([table[t][1] for table in tables]))
        for t in thresholds
    }


def format_asked(title: str, per_source: dict[str, dict[float, tuple[float, float | None]]]) -> str:
    thresholds = next(iter(per_source.values())).keys() if per_source else ()
    lines = [title, f"{'below confidence':24}" + "".join(f"{t:>14g}" for t in thresholds)]
    for name, table in per_source.items():
        cells = "".join(f"{f'{a:.0%} / ' + ('-' if e is None else f'{e:.0%}'):>14}" for a, e in table.values())
        lines.append(f"{name[:24]:24}{cells}")
    lines.append("each cell: answers asked about / the wrong verdicts among them (answer vs refusal, clear rows)")
    return "\n".join(lines)
