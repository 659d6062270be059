"""Issue #6, spend guard: ORBENCH_BUDGET_USD caps the estimated cost per UTC
day across the app; reaching it stops new paid calls with a message while
free/local models keep working; the total survives restarts.

A "paid" model here is `openai/gpt-4o-mini` (LiteLLM knows its price) sent to
the fake server through OPENAI_BASE_URL; the fence fails the test if anything
tries to reach the real provider.
"""

from __future__ import annotations

import datetime as dt
import json
import threading

import pytest

from orbench_play import budget, engine
from orbench_play.budget import BudgetExceeded, SpendGuard
from orbench_play.budget import guard as spend_guard
from orbench_play.cache import ResultCache
from orbench_play.models import bare_model, custom_endpoint
from orbench_play.types import GenerationParams, ModelSpec, Prompt, RunConfig

PAID = bare_model("openai/gpt-4o-mini")
MESSAGE = "Daily budget of ${limit:g} reached; paid models are paused until 00:00 UTC; free/local models still work."


def _prompts(n: int) -> tuple[Prompt, ...]:
    return tuple(Prompt(f"hard-1k:{i}", "hard-1k", "privacy", f"Question number {i} about privacy?") for i in range(n))


class Clock:
    def __init__(self, when: dt.datetime):
        self.now = when

    def __call__(self) -> dt.datetime:
        return self.now


def test_paid_and_free_models():
    guard = SpendGuard(1.0, "/nonexistent/spend.json")
    assert guard.is_paid(PAID)
    assert not guard.is_paid(bare_model("openai/some-model-litellm-has-no-price-for"))
    assert not guard.is_paid(custom_endpoint("http://127.0.0.1:1/v1", "gpt-4o-mini"))
    assert not guard.is_paid(ModelSpec("local/smollm2", "openai/gpt-4o-mini", is_local=True))


def test_reserve_settle_and_the_daily_rollover(tmp_path):
    clock = Clock(dt.datetime(2026, 3, 1, 23, 59, tzinfo=dt.UTC))
    guard = SpendGuard(0.01, tmp_path / "spend.json", clock=clock)
    hold = guard.reserve(PAID, 100, 100)
    assert hold is not None and hold.amount > 0
    guard.settle(hold, 0.004)
    guard.settle(hold, 0.004)  # settling twice counts once
    assert guard.spent_today() == pytest.approx(0.004)
    guard.settle(guard.reserve(PAID, 100, 100), 0.007)
    assert guard.spent_today() == pytest.approx(0.011)
    with pytest.raises(BudgetExceeded) as info:
        guard.reserve(PAID, 100, 100)
    assert str(info.value) == MESSAGE.format(limit=0.01)
    with pytest.raises(BudgetExceeded):
        guard.check(PAID)
    assert guard.reserve(bare_model("openai/unpriced-model"), 100, 100) is None  # free keeps working
    guard.check(custom_endpoint("http://127.0.0.1:1/v1", "x"))

    # A restart (new guard, same file) remembers the day's spend...
    again = SpendGuard(0.01, tmp_path / "spend.json", clock=clock)
    assert again.spent_today() == pytest.approx(0.011)
    with pytest.raises(BudgetExceeded):
        again.check(PAID)
    # ...and the next UTC day starts from zero.
    clock.now += dt.timedelta(minutes=2)
    assert again.spent_today() == 0
    again.check(PAID)
    assert json.loads((tmp_path / "spend.json").read_text())["2026-03-01"] == pytest.approx(0.011)


def test_in_flight_reservations_count_so_concurrency_cannot_overrun(tmp_path):
    guard = SpendGuard(0.001, tmp_path / "spend.json")
    worst = guard.worst_case(PAID, 40, 512)
    admitted = []
    with pytest.raises(BudgetExceeded):
        for _ in range(1000):  # nothing settles: every admitted call is still in flight
            admitted.append(guard.reserve(PAID, 40, 512))
    assert len(admitted) == int(0.001 // worst) + 1  # stops once reservations reach the cap
    for hold in admitted:
        guard.settle(hold, 0.0)  # failed calls release their reservation
    guard.check(PAID)


def test_threads_share_one_ledger(tmp_path):
    guard = SpendGuard(100.0, tmp_path / "spend.json")

    def spend():
        for _ in range(50):
            guard.settle(guard.reserve(PAID, 10, 10), 0.001)

    threads = [threading.Thread(target=spend) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert guard.spent_today() == pytest.approx(0.2)  # no lost update


@pytest.mark.parametrize("raw, expected", [("", None), ("5", 5.0), ("$2.50", 2.5), ("0", 0.0)])
def test_budget_from_env(raw, expected):
    assert budget.budget_from_env({"ORBENCH_BUDGET_USD": raw}) == expected


@pytest.mark.parametrize("raw", ["lots", "-1", "nan", "inf"])
def test_nonsense_budget_is_refused_and_fails_closed(raw, monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="ORBENCH_BUDGET_USD"):
        budget.budget_from_env({"ORBENCH_BUDGET_USD": raw})
    monkeypatch.setenv("ORBENCH_BUDGET_USD", raw)
    monkeypatch.setenv("ORBENCH_CACHE_DIR", str(tmp_path))
    guard = budget.default_guard()
    assert guard is not None and guard.limit_usd == 0.0


def test_no_budget_means_no_guard(monkeypatch):
    monkeypatch.delenv("ORBENCH_BUDGET_USD", raising=False)
    assert budget.default_guard() is None
    assert budget.reserve(PAID, 10, 10) is None


@pytest.fixture
def paid_via_fake(fake, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-budget")
    monkeypatch.setenv("ORBENCH_CACHE_DIR", str(tmp_path / "cache"))
    return fake


async def test_engine_stops_paid_calls_at_the_budget_and_free_models_keep_working(
    paid_via_fake, monkeypatch, tmp_path, no_egress
):
    fake = paid_via_fake
    prompts = _prompts(8)
    free = custom_endpoint(fake.base_url, "answer", "sk-x")
    params = GenerationParams(max_tokens=64)

    # What one paid answer costs, measured without a budget.
    probe = RunConfig(models=(PAID,), prompts=prompts[:1], params=params, use_cache=False, max_retries=0)
    (one,) = await engine.collect(probe)
    assert one.ok and one.cost_usd > 0, one.error
    fake.reset()

    limit = one.cost_usd * 2.5
    monkeypatch.setenv("ORBENCH_BUDGET_USD", repr(limit))
    config = RunConfig(
        models=(PAID, free), prompts=prompts, params=params, concurrency=1, use_cache=False, max_retries=0
    )
    results = await engine.collect(config)
    paid = [r for r in results if r.model == PAID.name]
    free_results = [r for r in results if r.model == free.name]
    assert all(r.ok for r in free_results) and len(free_results) == len(prompts)
    answered = [r for r in paid if r.ok]
    blocked = [r for r in paid if not r.ok]
    # Calls run while spent + in-flight reservations < cap; with one call at a time,
    # that is every call until the spend reaches 2.5 answers: 3 calls.
    assert len(answered) == 3, [r.error for r in paid]
    assert all(r.error == MESSAGE.format(limit=limit) for r in blocked) and len(blocked) == 5
    assert fake.request_count("gpt-4o-mini") == 3  # blocked cells never reached the provider
    guard = budget.default_guard()
    assert guard.spent_today() == pytest.approx(sum(r.cost_usd for r in answered))
    assert guard.spent_today() >= limit

    # A new process (here: a new guard over the same cache folder) still refuses.
    spend_guard._default = None
    with pytest.raises(BudgetExceeded):
        budget.check(PAID)


async def test_cached_answers_replay_after_the_budget_is_spent(paid_via_fake, monkeypatch, tmp_path, no_egress):
    cache = ResultCache(tmp_path / "results")
    config = RunConfig(models=(PAID,), prompts=_prompts(2), params=GenerationParams(max_tokens=64), max_retries=0)
    first = await engine.collect(config, cache=cache)
    assert all(r.ok for r in first)
    monkeypatch.setenv("ORBENCH_BUDGET_USD", "0")
    again = await engine.collect(config, cache=cache)
    assert all(r.ok and r.cached for r in again)  # a cache hit costs nothing and is not blocked
    fresh = await engine.collect(RunConfig(models=(PAID,), prompts=_prompts(3)[2:], max_retries=0), cache=cache)
    assert fresh[0].error.startswith("Daily budget of $0 reached")


async def test_a_stopped_run_is_charged_for_what_was_streamed(paid_via_fake, monkeypatch, no_egress):
    """Issue 13 item 3: the provider bills the tokens it streamed before Stop, so
    the daily budget must count them (usage when known, else an estimate)."""
    fake = paid_via_fake
    fake.words, fake.long_seconds = 300, 4.0
    fake.set_behaviour("gpt-4o-mini", "long")
    monkeypatch.setenv("ORBENCH_BUDGET_USD", "100")
    config = RunConfig(
        models=(PAID,), prompts=_prompts(2), params=GenerationParams(max_tokens=1000), use_cache=False, max_retries=0
    )
    shown = ""
    agen = engine.run(config)
    async for event in agen:
        if event.kind == "delta":
            shown += event.text
        if len(shown) > 600:
            break
    await agen.aclose()  # Stop
    guard = budget.default_guard()
    assert guard is not None and not guard._reserved  # every reservation was settled
    at_least = spend_guard._price(PAID.litellm_model, 10, len(shown) // 4)
    assert guard.spent_today() >= at_least > 0
    # ...and not the worst case of two full answers: what was streamed, no more.
    assert guard.spent_today() < 2 * guard.worst_case(PAID, 60, 1000)
