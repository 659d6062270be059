"""Verdict stability over repeats: "2 of 3 answers were refusals" per cell, and
the flip rate per variant.

At temperature > 0 the same prompt can be refused once and answered the next
time. A run with `repeats=k` asks each (prompt, variant) k times (k distinct
cache entries). Here:

- `tally` counts, per (variant, row_id), the refusals among the answers that
  got a real verdict (errors are counted apart and enter nothing);
- the flip rate of a variant is the share of its prompts, among those with at
  least two counted answers, whose verdicts were not unanimous (some refused,
  some answered), with a Wilson 95% interval;
- the refusal rates themselves are computed over all answers (every repeat is
  a trial), as in `scoring.score_results`.

Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..asking.prompts import variant_of
from ..types import REFUSALS, CellResult
from .rates import Rate, counts


@dataclass(slots=True)
class Tally:
    """The answers of one (variant, prompt): `refusals` of `answers` counted, plus `errors`."""

    refusals: int = 0
    answers: int = 0
    errors: int = 0

    @property
    def unanimous(self) -> bool:
        return self.refusals in (0, self.answers)

    @property
    def flipped(self) -> bool:
        """Asked at least twice and the verdicts differ."""
        return self.answers >= 2 and not self.unanimous

    @property
    def majority(self) -> str | None:
        """'refusal' / 'answer' by strict majority, 'split' on an exact tie, None if nothing counted."""
        if self.answers == 0:
            return None
        if 2 * self.refusals > self.answers:
            return "refusal"
        if 2 * self.refusals < self.answers:
            return "answer"
        return "split"

    def label(self) -> str:
        """What a grid cell shows: `2/3 refused` (or `error` when nothing counted)."""
        if self.answers == 0:
            return "error"
        return f"{self.refusals}/{self.answers} refused"

    def add(self, result: CellResult) -> None:
        """Count one answer: a real verdict is a refusal or an answer; anything else is an error."""
        if counts(result):
            self.answers += 1
            self.refusals += result.verdict in REFUSALS
        else:
            self.errors += 1


@dataclass(slots=True)
class StabilityStats:
    """One variant's stability over the session."""

    variant: str
    prompts: int = 0
    """Prompts with at least one counted answer."""
    repeated: int = 0
    """Prompts with at least two counted answers (the flip rate's denominator)."""
    flipped: int = 0
    answers: int = 0
    refusals: int = 0
    per_row: dict[str, Tally] = field(default_factory=dict)

    @property
    def flip_rate(self) -> Rate | None:
        return Rate.of(self.flipped, self.repeated) if self.repeated else None

    @property
    def refusal_rate(self) -> Rate:
        """Over all answers, every repeat a trial (benign and toxic together)."""
        return Rate.of(self.refusals, self.answers)


def tally(results: Iterable[CellResult], key: Callable[[CellResult], str] = variant_of) -> dict[tuple[str, str], Tally]:
    """(variant, row_id) → Tally, in order of first appearance."""
    out: dict[tuple[str, str], Tally] = {}
    for r in results:
        out.setdefault((key(r), r.row_id), Tally()).add(r)
    return out


def stability(
    results: Iterable[CellResult], key: Callable[[CellResult], str] = variant_of
) -> dict[str, StabilityStats]:
    """variant → StabilityStats, in order of first appearance."""
    out: dict[str, StabilityStats] = {}
    for (variant, row_id), t in tally(results, key).items():
        s = out.setdefault(variant, StabilityStats(variant))
        s.per_row[row_id] = t
        if t.answers:
            s.prompts += 1
            s.answers += t.answers
            s.refusals += t.refusals
        if t.answers >= 2:
            s.repeated += 1
            s.flipped += t.flipped
    return out
