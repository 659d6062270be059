"""Which answers a person should look at: the review policy (pure and seeded).

A person's time is best spent where the verdicts are least sure, but a review
that only ever looked at unsure cells would say nothing about the error of the
sure ones, and the score could not claim to correct it. So every cell keeps a
chance, in proportion to a weight

    w_i = max(FLOOR, sqrt(p_i (1 − p_i)))

(the standard deviation of its verdict: 0.5 at p = 0.5; FLOOR = 0.1 keeps sure
cells at a fifth of the chance of the least sure ones). Cells a person already
decided are left out. The picks are random with known inclusion probabilities
π_i, which `error_aware` uses to correct the rate without bias (active
inference): unsure cells come first not by rule but because their weights are
largest.

Two ways to draw, one per use:

- `systematic_sample` (`orbench-play review --budget K`): exactly K cells by
  systematic sampling with probabilities proportional to size over a seeded
  random order, π_i = min(1, K·w_i/Σw) with the cap iterated (a cell whose
  share reaches 1 is taken for sure and the rest share what is left).
- `queue_order` / `queue_inclusion` (the page's review queue, which has no
  budget: a person reviews as many as they like): order sampling. Each cell
  gets u_i ~ U(0, 1) from a seeded hash of the session's seed and its id, and
  priority u_i / w_i; the queue walks priorities upwards. The first k reviewed
  are then an approximately πps sample with π_i = min(1, w_i·τ), τ the
  (k+1)-th priority (Rosén's order sampling). A skipped cell counts as not
  drawn (skipping is taken to be unrelated to the answer), and a cell that
  arrived with a smaller priority after others were reviewed makes τ no
  larger than any reviewed cell's own priority (π_i ≥ u_i holds).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterable, Mapping, Sequence

FLOOR = 0.1
"""The smallest weight: a verdict with p = 0 or 1 keeps a chance of a person's look."""
DEFAULT_SEED = 44
"""`orbench-play review`'s seed when none is given: the same file, the same picks."""


def weight(p: float) -> float:
    """A cell's weight in the draw: the standard deviation of its verdict, at least FLOOR."""
    p = min(1.0, max(0.0, float(p)))
    return max(FLOOR, math.sqrt(p * (1.0 - p)))


def inclusion_probabilities(weights: Sequence[float], k: int) -> list[float]:
    """π_i = min(1, k·w_i/Σw), the cap iterated: cells whose share reaches 1 are
    certain and the remaining budget is shared among the others. Sums to k
    (to rounding) when 0 ≤ k ≤ len(weights)."""
    n = len(weights)
    if k <= 0 or n == 0:
        return [0.0] * n
    if k >= n:
        return [1.0] * n
    certain: set[int] = set()
    while True:
        rest = [i for i in range(n) if i not in certain]
        budget = k - len(certain)
        total = math.fsum(weights[i] for i in rest)
        newly = {i for i in rest if budget * weights[i] >= total}
        if not newly:
            break
        certain |= newly
    return [1.0 if i in certain else budget * weights[i] / total for i in range(n)]


def systematic_sample(weights: Sequence[float], k: int, seed: int = DEFAULT_SEED) -> list[tuple[int, float]]:
    """Exactly k distinct indices (with their π), by systematic PPS over a seeded random
    order: one uniform start u, then the cells whose cumulative π interval holds
    u, u + 1, …, u + k − 1. Returned in index order."""
    n = len(weights)
    k = max(0, min(int(k), n))
    pis = inclusion_probabilities(weights, k)
    rng = random.Random(seed)  # noqa: S311 - a reproducible draw, not a secret
    order = list(range(n))
    rng.shuffle(order)
    start = rng.random()
    picked: dict[int, float] = {}
    point, acc = start, 0.0
    for position, i in enumerate(order):
        acc = float(k) if position == n - 1 else acc + pis[i]
        if point < acc and len(picked) < k:
            picked[i] = pis[i]
            point += 1.0
            while point < acc:  # rounding only: a unit interval holds one point
                point += 1.0
    if len(picked) < k:  # rounding at the very end: the largest π not yet taken
        for i in sorted(range(n), key=lambda j: (-pis[j], j)):
            if len(picked) >= k:
                break
            picked.setdefault(i, pis[i])
    return sorted(picked.items())


def uniform(seed: str | int, key: str) -> float:
    """A uniform number in (0, 1) from a hash of (seed, key): the same cell gets the
    same u in a session whatever else the session holds."""
    digest = hashlib.sha256(f"{seed}\0{key}".encode("utf-8", "surrogatepass")).digest()
    return (int.from_bytes(digest[:7], "big") + 0.5) / 2**56


def priority(u: float, w: float) -> float:
    return u / w


def queue_order(weights: Mapping[str, float], seed: str | int) -> list[str]:
    """The cells by ascending priority u/w: the order the review queue shows them."""
    return sorted(weights, key=lambda cid: (priority(uniform(seed, cid), weights[cid]), cid))


def queue_inclusion(
    weights: Mapping[str, float], seed: str | int, reviewed: Iterable[str], skipped: Iterable[str] = ()
) -> dict[str, float]:
    """π of each reviewed cell of the queue: min(1, w_i·τ_i), τ_i = max(τ, own priority),
    τ the smallest priority among the cells neither reviewed nor skipped (infinite
    when none is left: every cell was looked at or passed, π = 1). `weights` holds
    the queue's whole frame: every cell without a person's verdict from outside it."""
    done = set(reviewed)
    passed = set(skipped)
    prio = {cid: priority(uniform(seed, cid), w) for cid, w in weights.items()}
    waiting = [q for cid, q in prio.items() if cid not in done and cid not in passed]
    tau = min(waiting) if waiting else math.inf
    return {cid: min(1.0, weights[cid] * max(tau, prio[cid])) for cid in done if cid in weights}
