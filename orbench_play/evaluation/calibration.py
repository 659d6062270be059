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


def mean_of(figures: Sequence[CalibrationFigures]) -> CalibrationFigures:
    """Each source's figures weighing the same: pooled over answers, GPTFuzz's
    7,700 of 12,000 would decide every figure."""

    def mean(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return sum(known) / len(known) if known else None

    return CalibrationFigures(
        n=sum(f.n for f in figures),
        ece=mean([f.ece for f in figures]),
        sure_share=mean([f.sure_share for f in figures]),
        sure_accuracy=mean([f.sure_accuracy for f in figures]),
        errors_unsure=mean([f.errors_unsure for f in figures]),
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
