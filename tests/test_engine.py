"""The engine against the fake OpenAI server, over real HTTP through LiteLLM."""

from __future__ import annotations

import asyncio
import time

import pytest

from orbench_play import engine
from orbench_play.cache import ResultCache
from orbench_play.cache import store as cache_mod
from orbench_play.engine import judging
from orbench_play.types import GenerationParams, ModelSpec, Prompt, RunConfig, Verdict

pytestmark = pytest.mark.usefixtures("engine_warmed_up")  # timed tests time the engine, not LiteLLM's import


def spec(fake, behaviour: str, **kw) -> ModelSpec:
    return ModelSpec(
        name=behaviour, litellm_model=f"openai/{behaviour}", api_base=fake.base_url, api_key="sk-fake", **kw
    )


def prompts(n: int, split: str = "hard-1k") -> tuple[Prompt, ...]:
    return tuple(
        Prompt(f"{split}:{i}", split, "privacy", f"How can I check who sees my profile, case {i}?") for i in range(n)
    )


@pytest.fixture
def cache(tmp_path):
    c = ResultCache(tmp_path / "cache")
    yield c
    c.close()


async def events_of(config, cache=None, **kw):
    return [e async for e in engine.run(config, cache=cache, **kw)]


async def test_every_cell_streams_and_ends_with_a_final_verdict(fake, cache):
    config = RunConfig(models=(spec(fake, "answer"), spec(fake, "refuse")), prompts=prompts(3))
    events = await events_of(config, cache)
    done = [e for e in events if e.kind == "done"]
    assert len(done) == 6
    by_model = {e.result.model: e.result.verdict for e in done}
    assert by_model == {"answer": "direct_answer", "refuse": "direct_refusal"}
    for e in done:
        r = e.result
        assert r.response and r.latency_s > 0 and r.ttft_s is not None and r.ttft_s <= r.latency_s
        assert r.completion_tokens and r.completion_tokens > 0
        assert r.cost_usd == 0.0 and r.cached is False and r.verdict_source
    # Per cell: started first, deltas that add up to the answer, final verdict before done.
    for d in done:
        mine = [e for e in events if e.cell_id == d.cell_id]
        assert mine[0].kind == "started" and mine[-1].kind == "done"
        assert "".join(e.text for e in mine if e.kind == "delta") == d.result.response
        finals = [e for e in mine if e.kind == "verdict" and e.verdict.final]
        assert len(finals) == 1 and finals[0].verdict.label == d.result.verdict


async def test_provisional_verdict_comes_before_the_stream_ends(fake):
    fake.delay, fake.chunks = 0.6, 12
    config = RunConfig(models=(spec(fake, "slow"),), prompts=prompts(1), use_cache=False)
    events = await events_of(config)
    kinds = [(e.kind, e.verdict.final if e.verdict else None) for e in events]
    first_provisional = kinds.index(("verdict", False))
    last_delta = max(i for i, (k, _) in enumerate(kinds) if k == "delta")
    assert first_provisional < last_delta


async def test_cache_replays_without_requests_and_marks_cached(fake, cache):
    config = RunConfig(models=(spec(fake, "answer"), spec(fake, "refuse")), prompts=prompts(4))
    first = await engine.collect(config, cache=cache)
    sent = fake.request_count()
    assert sent == 8 and not any(r.cached for r in first)
    start = time.perf_counter()
    again = await engine.collect(config, cache=cache)
    assert time.perf_counter() - start < 1.0
    assert fake.request_count() == sent
    assert all(r.cached for r in again)
    assert [(r.row_id, r.model, r.response, r.verdict) for r in again] == [
        (r.row_id, r.model, r.response, r.verdict) for r in first
    ]


async def test_no_cache_sends_again(fake, cache):
    config = RunConfig(models=(spec(fake, "answer"),), prompts=prompts(2), use_cache=False)
    await engine.collect(config, cache=cache)
    await engine.collect(config, cache=cache)
    assert fake.request_count() == 4
    assert len(cache) == 0


async def test_errors_are_never_cached_and_rerun_sends_only_failed_cells(fake, cache):
    config = RunConfig(
        models=(spec(fake, "answer"), spec(fake, "cut"), spec(fake, "e401")),
        prompts=prompts(2),
        timeout_s=5,
    )
    first = await engine.collect(config, cache=cache)
    errors = [r for r in first if r.error]
    assert {r.model for r in errors} == {"cut", "e401"}
    cut = next(r for r in errors if r.model == "cut")
    assert cut.response, "partial text of a broken stream stays visible"
    assert cut.verdict == "error" and "broke off" in cut.error
    fake.reset()
    await engine.collect(config, cache=cache)
    sent = sorted(r.model for r in fake.requests)
    assert sent == ["cut", "cut", "e401", "e401"]


async def test_rate_limit_honours_retry_after_then_succeeds(fake):
    fake.retry_after = 1
    config = RunConfig(models=(spec(fake, "e429"),), prompts=prompts(1), use_cache=False, max_retries=2)
    start = time.perf_counter()
    events = await events_of(config)
    elapsed = time.perf_counter() - start
    retries = [e for e in events if e.kind == "retry"]
    assert len(retries) == 1 and "429" in retries[0].message and "1.0 s" in retries[0].message
    assert elapsed >= 0.95
    assert [e.result.verdict for e in events if e.kind == "done"] == ["direct_answer"]


async def test_retries_give_up_with_a_clear_message(fake):
    fake.retry_after = 0
    config = RunConfig(models=(spec(fake, "e500-always"),), prompts=prompts(1), use_cache=False, max_retries=2)
    events = await events_of(config)
    (err,) = [e for e in events if e.kind == "error"]
    assert "500" in err.result.error and "3 attempts" in err.result.error
    assert fake.request_count() == 3


async def test_hang_times_out_at_the_configured_timeout(fake):
    config = RunConfig(
        models=(spec(fake, "hang"), spec(fake, "answer")), prompts=prompts(1), use_cache=False, timeout_s=1.5
    )
    start = time.perf_counter()
    results = await engine.collect(config)
    elapsed = time.perf_counter() - start
    assert 1.4 <= elapsed < 3.0
    by_model = {r.model: r for r in results}
    assert by_model["hang"].error == "Timed out after 1.5 s waiting for the answer to start."
    assert by_model["answer"].verdict == "direct_answer"


async def test_a_slow_model_does_not_delay_another(fake):
    fake.delay, fake.chunks = 2.0, 10
    config = RunConfig(
        models=(spec(fake, "slow", max_concurrency=1), spec(fake, "answer")),
        prompts=prompts(4),
        use_cache=False,
        concurrency=4,
    )
    start = time.perf_counter()
    finished_at: dict[str, list[float]] = {"slow": [], "answer": []}
    async for e in engine.run(config):
        if e.kind == "done":
            finished_at[e.model].append(time.perf_counter() - start)
        if len(finished_at["answer"]) == 4:
            break  # closing the generator stops the slow model's cells
    assert max(finished_at["answer"]) < 1.5
    assert fake.max_in_flight >= 2


async def test_per_model_limit_is_respected(fake):
    fake.delay, fake.chunks = 0.3, 3
    config = RunConfig(
        models=(spec(fake, "slow", max_concurrency=2),), prompts=prompts(6), use_cache=False, concurrency=16
    )
    await engine.collect(config)
    assert fake.max_in_flight == 2


async def test_stop_cancels_in_flight_and_keeps_finished_cells(fake, cache):
    fake.delay, fake.chunks = 5.0, 10
    config = RunConfig(models=(spec(fake, "answer"), spec(fake, "slow")), prompts=prompts(2), timeout_s=30)
    finished = []
    start = time.perf_counter()
    async for e in engine.run(config, cache=cache):
        if e.kind == "done":
            finished.append(e.result)
        if len(finished) == 2:
            break
    # The slow model needs 5 s a chunk, 50 s in all: the run ended without waiting for it.
    assert time.perf_counter() - start < 25
    assert {r.model for r in finished} == {"answer"}
    assert await asyncio.to_thread(fake.wait_idle) == 0, "cancelled requests must be closed"
    # Only the finished cells reached the cache.
    fake.reset()
    fake.delay, fake.chunks = 0.1, 2
    again = await engine.collect(config, cache=cache)
    assert sorted(r.model for r in again if r.cached) == ["answer", "answer"]
    assert fake.request_count() == 2


async def test_provider_signals_decide_first(fake):
    config = RunConfig(models=(spec(fake, "empty"), spec(fake, "filtered")), prompts=prompts(1), use_cache=False)
    results = await engine.collect(config)
    assert {(r.model, r.verdict, r.verdict_source) for r in results} == {
        ("empty", "direct_refusal", "provider"),
        ("filtered", "direct_refusal", "provider"),
    }


async def test_model_config_error_is_a_per_cell_error(fake):
    broken = ModelSpec(
        name="broken", litellm_model="openai/x", error="Model broken: environment variable FOO_KEY is not set."
    )
    config = RunConfig(models=(broken, spec(fake, "answer")), prompts=prompts(1), use_cache=False)
    results = await engine.collect(config)
    by_model = {r.model: r for r in results}
    assert "FOO_KEY" in by_model["broken"].error
    assert by_model["answer"].ok
    assert fake.request_count() == 1


async def test_unknown_provider_string_is_a_clear_error():
    bogus = ModelSpec(name="no-such-provider-model", litellm_model="no-such-provider-model")
    config = RunConfig(models=(bogus,), prompts=prompts(1), use_cache=False, timeout_s=5)
    (result,) = await engine.collect(config)
    assert result.verdict == "error" and result.error
    assert "Traceback" not in result.error and len(result.error) < 250


async def test_generation_params_reach_the_provider(fake):
    params = GenerationParams(
        system_prompt="Be brief.", system_prompt_id="brief", temperature=0.3, top_p=0.9, max_tokens=77
    )
    config = RunConfig(models=(spec(fake, "echo"),), prompts=prompts(1), params=params, use_cache=False)
    (result,) = await engine.collect(config)
    (request,) = fake.requests
    assert request.messages[0] == {"role": "system", "content": "Be brief."}
    assert request.params.get("temperature") == 0.3 and request.params.get("max_tokens") == 77
    assert result.system_prompt_id == "brief" and '"max_tokens": 77' in result.params


async def test_llm_judge_decides_and_is_cached(fake, cache):
    fake.set_text("judge-model", "[indirect_refusal] It deflects instead of answering.")
    judge = spec(fake, "judge-model")
    config = RunConfig(models=(spec(fake, "answer"),), prompts=prompts(2), judge="judge-model")
    results = await engine.collect(config, cache=cache, resolve_judge=lambda name: judge)
    assert {(r.verdict, r.verdict_source) for r in results} == {("indirect_refusal", "llm:judge-model")}
    judge_calls = fake.request_count("judge-model")
    assert judge_calls == 2
    judge_request = next(r for r in fake.requests if r.model == "judge-model")
    assert judge_request.params.get("temperature") == 0
    await engine.collect(config, cache=cache, resolve_judge=lambda name: judge)
    assert fake.request_count("judge-model") == judge_calls


async def test_llm_judge_off_format_falls_back_to_offline_verdict(fake):
    fake.set_text("chatty-judge", "Well, it is hard to say.")
    judge = spec(fake, "chatty-judge")
    config = RunConfig(models=(spec(fake, "refuse"),), prompts=prompts(1), judge="chatty-judge", use_cache=False)
    (result,) = await engine.collect(config, resolve_judge=lambda name: judge)
    assert result.verdict == "direct_refusal" and result.verdict_source != "llm:chatty-judge"


async def test_repeats_are_distinct_cells(fake, cache):
    config = RunConfig(
        models=(spec(fake, "answer"),), prompts=prompts(2), repeats=3, params=GenerationParams(temperature=0.7)
    )
    results = await engine.collect(config, cache=cache)
    assert len(results) == 6 and len({r.cell_id for r in results}) == 6
    assert fake.request_count() == 6
    await engine.collect(config, cache=cache)
    assert fake.request_count() == 6


async def test_judge_goes_through_the_public_endpoint_guard(fake, monkeypatch):
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    fake.set_text("judge-model", "[indirect_refusal] deflects")
    visitor_judge = spec(fake, "judge-model")  # a visitor's endpoint on loopback: not allowed in public mode
    fallback = Verdict("direct_answer", "classifier")
    verdict = await judging.judge_answer(visitor_judge, "q", "Sure, here is how.", fallback)
    assert verdict.label == "direct_answer" and "judge failed" in verdict.rationale
    assert fake.request_count("judge-model") == 0
    monkeypatch.setenv("ORBENCH_PUBLIC", "0")
    verdict = await judging.judge_answer(visitor_judge, "q", "Sure, here is how.", fallback)
    assert verdict.label == "indirect_refusal" and fake.request_count("judge-model") == 1


async def test_entries_from_an_older_classifier_replay_and_are_brought_up_to_date(fake, cache):
    from orbench_play.cache import CachedAnswer, cell_key

    config = RunConfig(models=(spec(fake, "answer"),), prompts=prompts(1))
    (prompt,) = config.prompts
    key = cell_key(config.models[0], config.params.messages(prompt.text), config.params)
    cache.put_answer(key, CachedAnswer("I'm sorry, but I can't help with that.", "stop", 9, 0.0, 0.5, 0.1,
                                       "direct_answer", "classifier", "an-older-classifier"))  # fmt: skip
    (result,) = await engine.collect(config, cache=cache)
    assert result.cached and result.verdict == "direct_refusal" and fake.request_count() == 0
    stored = cache.get_answer(key)
    assert stored.verdict == "direct_refusal" and stored.verdict_version == cache_mod.classifier_version()


async def test_deltas_are_coalesced_per_flush_interval(fake):
    """A 300-chunk answer over ~1.5 s arrives as at most one delta per cell per
    flush interval, not 300: the text adds up exactly, verdicts still come early."""
    fake.words, fake.long_seconds = 300, 1.5
    config = RunConfig(models=(spec(fake, "long"),), prompts=prompts(2), use_cache=False)
    events = await events_of(config)
    for d in (e for e in events if e.kind == "done"):
        mine = [e for e in events if e.cell_id == d.cell_id]
        deltas = [e for e in mine if e.kind == "delta"]
        assert "".join(e.text for e in deltas) == d.result.response and len(d.result.response.split()) == 300
        assert 2 <= len(deltas) <= 1.5 / engine.FLUSH_INTERVAL_S * 2, len(deltas)
        kinds = [e.kind for e in mine]
        assert kinds.index("verdict") < max(i for i, k in enumerate(kinds) if k == "delta")  # provisional, mid-stream


async def test_run_batches_gives_the_same_events_in_lists(fake):
    config = RunConfig(models=(spec(fake, "answer"), spec(fake, "refuse")), prompts=prompts(2), use_cache=False)
    batches = [b async for b in engine.run_batches(config)]
    assert all(isinstance(b, list) and b for b in batches)
    flat = [e for b in batches for e in b]
    assert sorted(e.cell_id for e in flat if e.kind == "done") == sorted(engine.cell_ids(config))
