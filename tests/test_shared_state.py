"""Issue 21: shared state in a real Redis (`ORBENCH_REDIS_URL`), in one process.

Two "replicas" here are two handles on the same server (a cache, a guard, a
limiter each), which is what two processes hold; tests/test_replicas.py runs
two real app.py processes. Every test talks to a real `redis-server` on
loopback (tests/redis_server.py).
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import redis
from redis_server import RedisServer

from orbench_play import budget, engine
from orbench_play.budget import BudgetExceeded, BudgetUnavailable, SpendGuard
from orbench_play.budget.redis_ledger import RedisLedger
from orbench_play.cache import CachedAnswer, RedisResultCache, ResultCache, cell_key, default_cache, scope
from orbench_play.guards import GuardError, SessionLimiter
from orbench_play.models import bare_model, custom_endpoint
from orbench_play.runtime import redis_link
from orbench_play.types import GenerationParams, ModelSpec, Prompt, RunConfig

PAID = bare_model("openai/gpt-4o-mini")
ANSWER = CachedAnswer("Sure, here is how.", "stop", 5, 0.001, 0.4, 0.1)


def _prompts(n: int, tag: str = "") -> tuple[Prompt, ...]:
    return tuple(Prompt(f"hard-1k:{i}", "hard-1k", "privacy", f"Question {tag}{i} about privacy?") for i in range(n))


def _raw(url: str) -> redis.Redis:
    return redis.Redis.from_url(url)


async def _wait_until(predicate, within: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {within:.0f} s")
        await asyncio.sleep(0.05)


# -- the cache ---------------------------------------------------------------------------


async def test_the_redis_cache_keeps_the_disk_caches_keys_and_stores_json(redis_url, tmp_path):
    cache = default_cache()
    assert isinstance(cache, RedisResultCache)
    key = cell_key(PAID, [{"role": "user", "content": "hi"}], GenerationParams())
    cache.put_answer(key, ANSWER)
    cache.put_judge("judge:abc", "direct_refusal", "it declined")
    await cache.drain()
    raw = _raw(redis_url)
    stored = raw.get("orbench:c:" + key)
    assert json.loads(stored) == ANSWER.to_dict()  # JSON, never pickle
    assert 0 < raw.ttl("orbench:c:" + key) <= 30 * 86400
    # A second handle (another replica) reads the same entries, in one go.
    other = RedisResultCache(redis_link.link())
    assert await other.get_answers([key, "cell:missing"]) == {key: ANSWER}
    assert await other.lookup_judge("judge:abc") == {"label": "direct_refusal", "rationale": "it declined"}
    # The disk store computes the same key for the same cell: only where it lives differs.
    disk = ResultCache(tmp_path / "disk")
    disk.put_answer(key, ANSWER)
    assert await disk.get_answers([key]) == {key: ANSWER}


async def test_the_size_bound_evicts_the_least_recently_stored(redis_url):
    cache = RedisResultCache(redis_link.link(), size_limit_mb=0.05)  # ~52 kB
    body = "x" * 4000
    for i in range(40):
        cache.put_answer(f"cell:{i:02d}", CachedAnswer(body + str(i), "stop", 1, 0.0, 0.1, 0.1))
    await cache.drain()
    total = await cache.size_bytes()
    assert 40_000 < total <= 0.05 * 2**20
    found = await cache.get_answers([f"cell:{i:02d}" for i in range(40)])
    assert "cell:39" in found and "cell:00" not in found  # the newest kept, the oldest evicted
    kept = sorted(found)
    assert kept == [f"cell:{i:02d}" for i in range(40 - len(kept), 40)]  # evicted oldest first
    assert _raw(redis_url).zcard("orbench:cache:index") == len(kept)


async def test_an_engine_run_on_one_replica_replays_on_another_with_no_request(redis_url, fake):
    model = custom_endpoint(fake.base_url, "answer", "sk-visitor")  # a visitor's endpoint: keys carry an HMAC
    config = RunConfig(models=(model,), prompts=_prompts(6), params=GenerationParams(max_tokens=64), max_retries=0)
    first = await engine.collect(config, cache=default_cache())
    assert all(r.ok and not r.cached for r in first) and fake.request_count() == 6
    secret = _raw(redis_url).get("orbench:secret:credential-hmac")
    assert secret is not None and len(secret) == 32 and scope.installation_secret() == secret
    # Replica B: its own cache handle, and it must get the secret from Redis, not its disk.
    scope._shared.clear()
    again = await engine.collect(config, cache=RedisResultCache(redis_link.link()))
    assert all(r.ok and r.cached for r in again)
    assert [r.response for r in again] == [r.response for r in first]
    assert fake.request_count() == 6  # nothing asked twice
    keys = [k.decode() for k in _raw(redis_url).keys("orbench:c:*")]
    assert len(keys) == 6 and all("sk-visitor" not in k for k in keys)


async def test_a_lost_redis_turns_the_cache_off_and_it_comes_back_by_itself(monkeypatch):
    with RedisServer() as server:
        monkeypatch.setenv("ORBENCH_REDIS_URL", server.url)
        link = redis_link.link()
        cache = RedisResultCache(link)
        cache.put_answer("cell:a", ANSWER)
        await cache.drain()
        assert await cache.get_answers(["cell:a"]) == {"cell:a": ANSWER}
        server.stop()
        assert await cache.get_answers(["cell:a"]) == {}  # fails open: a miss
        assert not link.up and not cache.enabled
        assert "Cache skipped" in cache.warning and "unreachable" in cache.warning
        started = time.monotonic()
        for _ in range(100):  # while down, nothing waits on a round trip
            assert await cache.get_answers(["cell:a"]) == {}
            cache.put_answer("cell:b", ANSWER)
        assert time.monotonic() - started < 1.0
        server.start()
        await _wait_until(lambda: link.up, what="reconnection")  # the probe, with no traffic
        cache.put_answer("cell:c", ANSWER)
        await cache.drain()
        assert await cache.get_answers(["cell:c"]) == {"cell:c": ANSWER}
        assert cache.warning is None and redis_link.status_line() == ""


# -- the budget ------------------------------------------------------------------------


async def test_two_replicas_share_one_cap_and_its_reservations(redis_url):
    a = SpendGuard(0.01, ledger=RedisLedger(redis_link.link()))
    b = SpendGuard(0.01, ledger=RedisLedger(redis_link.link()))
    hold = await a.reserve_async(PAID, 100, 100)
    assert hold is not None and hold.hold_id
    a.settle(hold, 0.006)
    await a.drain()
    assert await b.spent_async() == pytest.approx(0.006)
    # In-flight reservations of one replica count for the other.
    worst = a.worst_case(PAID, 40, 512)
    admitted = []
    with pytest.raises(BudgetExceeded) as info:
        for _ in range(1000):
            admitted.append(await (a if len(admitted) % 2 else b).reserve_async(PAID, 40, 512))
    assert not isinstance(info.value, BudgetUnavailable)
    assert len(admitted) == int((0.01 - 0.006) // worst) + 1
    for h in admitted:
        h.guard.settle(h, 0.0)
    await a.drain()
    await b.drain()
    await b.check_async(PAID)  # released: admitted again
    hold = await b.reserve_async(PAID, 10, 10)
    b.settle(hold, 0.005)  # now over the cap, spent on B ...
    await b.drain()
    with pytest.raises(BudgetExceeded, match=r"Daily budget of \$0.01 reached"):
        await a.reserve_async(PAID, 10, 10)  # ... blocks A
    assert await a.reserve_async(bare_model("openai/unpriced-model"), 10, 10) is None  # free models keep working


async def test_a_reservation_left_by_a_dead_replica_lapses(redis_url):
    guard = SpendGuard(0.002, ledger=RedisLedger(redis_link.link()))
    worst = guard.worst_case(PAID, 40, 512)
    assert worst < 0.002
    held = [await guard.reserve_async(PAID, 40, 512, ttl_s=-55) for _ in range(int(0.002 // worst) + 1)]
    assert all(held)  # their replica "died": never settled; they expire five seconds from now
    with pytest.raises(BudgetExceeded):
        await guard.reserve_async(PAID, 40, 512, ttl_s=-55)
    deadline = time.monotonic() + 60
    while True:  # once they lapse, a call is admitted again
        try:
            assert await guard.reserve_async(PAID, 40, 512) is not None
            break
        except BudgetExceeded:
            assert time.monotonic() < deadline, "the dead replica's reservations never lapsed"
            await asyncio.sleep(0.1)


async def test_the_shared_budget_fails_closed_and_records_what_it_could_not(monkeypatch):
    with RedisServer() as server:
        monkeypatch.setenv("ORBENCH_REDIS_URL", server.url)
        monkeypatch.setenv("ORBENCH_BUDGET_USD", "1")
        guard = budget.default_guard()
        assert guard is not None and guard.shared is not None
        hold = await budget.reserve_async(PAID, 10, 100)
        server.stop()
        budget.settle(hold, 0.25)  # the call ended while Redis was away: its cost is kept
        await budget.drain()
        with pytest.raises(BudgetUnavailable, match="cannot be checked right now"):
            await budget.reserve_async(PAID, 10, 100)
        assert "paid models are paused" in budget.status_line()
        assert await budget.reserve_async(ModelSpec("local/x", "openai/gpt-4o-mini", is_local=True), 1, 1) is None
        server.start()  # an empty Redis, as after a crash without persistence
        await _wait_until(lambda: redis_link.link().up, what="reconnection")
        hold = await budget.reserve_async(PAID, 10, 100)  # admitted, and the kept cost written first
        assert hold is not None and budget.status_line() == ""
        assert await guard.spent_async() == pytest.approx(0.25)
        budget.settle(hold, 0.0)
        await budget.drain()


def test_the_file_ledger_fails_closed_when_its_spend_cannot_be_written(tmp_path):
    folder = tmp_path / "ledger"
    folder.mkdir()
    guard = SpendGuard(1.0, folder / "spend.json")
    hold = guard.reserve(PAID, 10, 100)
    blocker = folder / "spend.json.part"
    blocker.mkdir()  # the ledger's next write cannot happen (works as root too, unlike chmod)
    guard.settle(hold, 0.1)
    with pytest.raises(BudgetUnavailable, match="cannot be checked right now"):
        guard.reserve(PAID, 10, 100)
    assert "cannot write" in guard.failure
    blocker.rmdir()
    assert guard.reserve(PAID, 10, 100) is not None  # writable again: the kept cost goes first
    assert guard.spent_today() == pytest.approx(0.1) and not guard.failure


# -- run limits ------------------------------------------------------------------------


async def test_a_visitors_runs_per_minute_count_across_replicas(redis_url):
    on_a = SessionLimiter(max_cells=10, runs_per_minute=2, env={})
    on_b = SessionLimiter(max_cells=10, runs_per_minute=2, env={})
    visitor = scope.visitor_key("203.0.113.7")
    await on_a.check_run_async(1, visitor)
    await on_b.check_run_async(1, visitor)
    with pytest.raises(GuardError, match=r"2 runs per minute per visitor; try again in \d+ s"):
        await on_a.check_run_async(1, visitor)
    await on_a.check_run_async(1, scope.visitor_key("203.0.113.8"))  # another visitor is not slowed down
    with pytest.raises(GuardError, match="allows 10 per run"):
        await on_b.check_run_async(11, scope.visitor_key("203.0.113.9"))
    keys = [k.decode() for k in _raw(redis_url).keys("orbench:runs:*")]
    assert len(keys) == 2 and not any("203.0.113" in k for k in keys)  # addresses only as HMACs
    assert all(0 < _raw(redis_url).pttl(k) <= 60_000 for k in keys)


async def test_without_redis_the_per_session_window_stands_in(monkeypatch):
    with RedisServer() as server:
        monkeypatch.setenv("ORBENCH_REDIS_URL", server.url)
        server.stop()
        limiter = SessionLimiter(max_cells=10, runs_per_minute=1, env={})
        await limiter.check_run_async(1, "visitor-while-redis-is-down")
        # this process's per-visitor window stands in (issue 47: per visitor, not per session)
        with pytest.raises(GuardError, match="per visitor"):
            await limiter.check_run_async(1, "visitor-while-redis-is-down")


# -- start-up ----------------------------------------------------------------------------


def test_startup_check_says_what_is_wrong_in_one_line_without_the_password(monkeypatch):
    with RedisServer(password="s3cret-pw") as server:
        monkeypatch.setenv("ORBENCH_REDIS_URL", server.url)
        assert redis_link.startup_check() is None
        wrong = server.url.replace("s3cret-pw", "wrong-pw")
        monkeypatch.setenv("ORBENCH_REDIS_URL", wrong)
        why = redis_link.startup_check()
        assert why and "\n" not in why and "pw" not in why and f"127.0.0.1:{server.port}" in why
    monkeypatch.setenv("ORBENCH_REDIS_URL", server.url)  # the server is gone now
    why = redis_link.startup_check()
    assert why and "unreachable" in why and "s3cret" not in why
    assert "s3cret" not in redis_link.status_line() and "unreachable" in redis_link.status_line()


def _dead_redis_url() -> str:
    """A Redis URL (with a password) on a loopback port nothing listens on."""
    from support import free_port

    return f"redis://:s3cret-pw@127.0.0.1:{free_port()}/0"


def test_a_public_demo_refuses_to_start_without_its_redis(tmp_path):
    """`python app.py` with ORBENCH_PUBLIC=1 and Redis unreachable: exit 1 with
    one line saying why (no traceback, no password), before serving anything."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from support import free_port

    repo = Path(__file__).resolve().parents[1]
    env = {
        **os.environ,
        "ORBENCH_PUBLIC": "1",
        "ORBENCH_REDIS_URL": _dead_redis_url(),
        "GRADIO_SERVER_PORT": str(free_port()),
        "ORBENCH_CACHE_DIR": str(tmp_path / "cache"),
    }
    done = subprocess.run(
        [sys.executable, "app.py"], cwd=repo, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1, (done.returncode, done.stderr[-2000:])
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr[-2000:]
    assert "unreachable" in lines[0] and "A public demo does not start without its shared state" in lines[0]
    assert "s3cret" not in done.stderr + done.stdout and "Traceback" not in done.stderr
    assert "Running on" not in done.stdout  # it never served


def test_elsewhere_the_app_starts_uncached_with_a_banner(monkeypatch, capsys):
    """Not public: the same one line, then the app starts; the page's banner says
    why, and answers are not cached while Redis is away."""
    from orbench_play.models import Catalog
    from orbench_play.ui.handlers.playground import Playground
    from orbench_play.ui.state import shared_state

    monkeypatch.setenv("ORBENCH_PUBLIC", "0")
    monkeypatch.setenv("ORBENCH_REDIS_URL", _dead_redis_url())
    shared_state.startup_check()  # no SystemExit
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "unreachable" in err and "Starting without it" in err and "s3cret" not in err
    cache = default_cache()
    assert isinstance(cache, RedisResultCache) and not cache.enabled
    banner = Playground(Catalog()).banner("hard-1k")
    assert "Shared state unavailable" in banner and "unreachable" in banner and "s3cret" not in banner


def test_a_slow_start_is_not_taken_for_an_unreachable_redis(redis_url, monkeypatch):
    """Importing redis and building the client can take seconds on a busy box
    (6 s measured at load 10 on 2 cores): that is not Redis's answer time, so a
    public demo must not refuse to start because of it. Only the round trip is timed."""
    import redis.asyncio

    real = redis.asyncio.Redis.from_url

    def slow_from_url(*args, **kwargs):
        time.sleep(0.6)  # a slow import, as the start-up check's first client pays it
        return real(*args, **kwargs)

    monkeypatch.setattr(redis.asyncio.Redis, "from_url", slow_from_url)
    assert redis_link.startup_check(timeout_s=0.5) is None
    assert redis_link.link().up


async def test_a_replayed_run_reads_redis_in_one_round_trip_whatever_its_size(redis_url, fake, monkeypatch):
    """Issue 21: nothing a cell does waits on Redis more than once. A run looks
    all its cells up in one pipelined read, so replaying 4 cells or 40 costs the
    same round trips (the secret once per process, then one read)."""
    model = custom_endpoint(fake.base_url, "answer", "sk-visitor")
    calls = []
    real_run = redis_link.RedisLink.run

    async def counted(self, op):
        calls.append(op)
        return await real_run(self, op)

    trips = {}
    for n in (4, 40):
        config = RunConfig(models=(model,), prompts=_prompts(n, f"r{n}-"), params=GenerationParams(max_tokens=64))
        scope._shared.clear()  # the session's Redis was emptied for this test: forget its old secret
        cache = default_cache()
        await engine.collect(config, cache=cache)  # fills Redis
        await cache.drain()
        scope._shared.clear()  # a fresh replica: it fetches the secret again
        monkeypatch.setattr(redis_link.RedisLink, "run", counted)
        calls.clear()
        again = await engine.collect(config, cache=RedisResultCache(redis_link.link()))
        monkeypatch.setattr(redis_link.RedisLink, "run", real_run)
        assert len(again) == n and all(r.cached for r in again)
        trips[n] = len(calls)
    assert trips[4] == trips[40] <= 2, trips
