"""The session's review queue: which answers a person looks at next, and what
they decided, kept so that the score can use each decision as a random review.

The policy is `scoring.review_policy`'s order sampling: every scored answer of
the session without a person's verdict from elsewhere (an override) is in the
queue's *frame*, weighted by how unsure its verdict is; each gets a uniform
draw from the session's seed and its cell id, and the queue walks priorities
u/w upwards, so unsure verdicts come first because their weights are largest,
and a few sure ones come up at random, which keeps the corrected estimate valid.
A decision is a user verdict (the session's `overrides`, `verdict_source`
`user`, like a choice in a badge's menu) and its cell joins `reviewed`; a skip
joins `skipped`. `reviews` gives scoring each reviewed cell's inclusion
probability and its calibrated p before the person looked. No Gradio import.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ...scoring import error_aware, review_policy, sureness
from ...scoring.rates import counts, custom_rate_key, rate_split
from ...types import CellResult


def scored(result: CellResult) -> bool:
    """Whether a result enters a rate (first turn, a verdict, a split or prompt set with a rate)."""
    if result.turn > 1 or not counts(result):
        return False
    return rate_split(result.split) is not None or custom_rate_key(result.split, result.expected) is not None


@dataclass
class ReviewQueue:
    seed: str = field(default_factory=lambda: secrets.token_hex(8))
    """The session's seed of the draw (each cell's uniform comes from it and the cell id)."""
    reviewed: set[str] = field(default_factory=set)
    skipped: set[str] = field(default_factory=set)

    def frame(self, results: Mapping[str, CellResult], overrides: Mapping[str, str]) -> dict[str, float]:
        """cell id → weight of every scored answer not decided by a person outside the queue."""
        out: dict[str, float] = {}
        for cid, result in results.items():
            if not scored(result) or (cid in overrides and cid not in self.reviewed):
                continue
            p, _ = sureness.of_result(result)
            out[cid] = review_policy.weight(0.5 if p is None else p)
        return out

    def waiting(self, results: Mapping[str, CellResult], overrides: Mapping[str, str]) -> list[str]:
        """The cells still to show, in the queue's order."""
        frame = self.frame(results, overrides)
        order = review_policy.queue_order(frame, self.seed)
        return [cid for cid in order if cid not in self.reviewed and cid not in self.skipped]

    def unsure_left(self, results: Mapping[str, CellResult], overrides: Mapping[str, str]) -> int:
        """Unsure verdicts the queue has not shown yet (the control's "Review N unsure")."""
        frame = self.frame(results, overrides)
        left = 0
        for cid in frame:
            if cid in self.reviewed or cid in self.skipped:
                continue
            _, sure = sureness.of_result(results[cid])
            left += sure is False
        return left

    def reviews(self, results: Mapping[str, CellResult], overrides: Mapping[str, str]) -> dict[str, error_aware.Review]:
        """What scoring needs of each reviewed cell: its inclusion probability and p before the review."""
        if not self.reviewed:
            return {}
        frame = self.frame(results, overrides)
        pis = review_policy.queue_inclusion(frame, self.seed, self.reviewed, self.skipped)
        out = {}
        for cid, pi in pis.items():
            p, _ = sureness.of_result(results[cid])
            out[cid] = error_aware.Review(pi=pi, p=0.5 if p is None else p)
        return out

    def forget(self, cids: Iterable[str]) -> None:
        """These cells left the session, or their answer changed: no decision stands."""
        for cid in cids:
            self.reviewed.discard(cid)
            self.skipped.discard(cid)
