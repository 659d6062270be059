"""The review policy (`scoring.review_policy`): exactly K picks, the right
inclusion probabilities, seeded, and the page queue's order sampling."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from orbench_play.scoring import review_policy as rp


def test_weights_favour_unsure_verdicts_and_keep_a_floor():
    assert rp.weight(0.5) == 0.5
    assert rp.weight(0.0) == rp.weight(1.0) == rp.FLOOR
    assert rp.weight(0.3) == pytest.approx(math.sqrt(0.21))


def test_inclusion_probabilities_sum_to_k_and_cap_at_one():
    w = [5.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    pi = rp.inclusion_probabilities(w, 3)
    assert pi[0] == 1.0  # 3·5/10 ≥ 1: certain, the rest share 2
    assert pi[1:] == pytest.approx([2 / 5] * 5)
    assert sum(pi) == pytest.approx(3)
    assert rp.inclusion_probabilities(w, 6) == [1.0] * 6
    assert rp.inclusion_probabilities(w, 0) == [0.0] * 6


@pytest.mark.parametrize("k", [1, 3, 7, 20])
def test_systematic_sample_picks_exactly_k_distinct_seeded(k):
    rng = random.Random(5)
    w = [rp.weight(rng.random()) for _ in range(20)]
    picks = rp.systematic_sample(w, k, seed=9)
    assert len(picks) == k and len({i for i, _ in picks}) == k
    expected = rp.inclusion_probabilities(w, k)
    assert all(pi == pytest.approx(expected[i]) for i, pi in picks)
    assert rp.systematic_sample(w, k, seed=9) == picks


def test_systematic_sample_draws_with_its_stated_probabilities():
    w = [rp.weight(p) for p in (0.5, 0.45, 0.1, 0.02, 0.98, 0.7, 0.3, 0.0)]
    k, runs = 3, 4000
    counts: Counter[int] = Counter()
    for seed in range(runs):
        counts.update(i for i, _ in rp.systematic_sample(w, k, seed=seed))
    pi = rp.inclusion_probabilities(w, k)
    for i, p in enumerate(pi):
        assert counts[i] / runs == pytest.approx(p, abs=0.035)


def test_queue_order_is_seeded_and_unsure_cells_come_first_on_average():
    weights = {f"c{i}": rp.weight(0.5 if i < 10 else 0.01) for i in range(60)}
    order = rp.queue_order(weights, "s1")
    assert order == rp.queue_order(dict(reversed(list(weights.items()))), "s1")
    assert order != rp.queue_order(weights, "s2")
    unsure_ranks = [order.index(f"c{i}") for i in range(10)]
    assert sum(unsure_ranks) / 10 < 20  # of 60 places: the weights put them in front


def test_queue_inclusion_uses_the_next_priority_as_threshold():
    weights = {"a": 0.5, "b": 0.3, "c": 0.1, "d": 0.4}
    order = rp.queue_order(weights, 7)
    first, second = order[:2]
    tau = rp.priority(rp.uniform(7, order[2]), weights[order[2]])
    pi = rp.queue_inclusion(weights, 7, reviewed=[first, second])
    assert set(pi) == {first, second}
    for cid in (first, second):
        assert pi[cid] == pytest.approx(min(1.0, weights[cid] * tau))
        assert pi[cid] >= rp.uniform(7, cid)  # the cell's own draw lies inside its probability
    # a skipped cell is passed over: the threshold is the next one still waiting
    pi_skip = rp.queue_inclusion(weights, 7, reviewed=[first], skipped=[second])
    tau_skip = rp.priority(rp.uniform(7, order[2]), weights[order[2]])
    assert pi_skip[first] == pytest.approx(min(1.0, weights[first] * tau_skip))
    # everything looked at: certain
    assert rp.queue_inclusion(weights, 7, reviewed=order) == dict.fromkeys(order, 1.0)


def test_uniform_is_in_the_open_unit_interval():
    values = [rp.uniform("x", str(i)) for i in range(2000)]
    assert all(0 < v < 1 for v in values)
    assert 0.45 < sum(values) / len(values) < 0.55
