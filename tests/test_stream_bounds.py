"""Issue 25, items 1, 3, 7, 8 and 10: what a hostile or broken stream can no
longer do, on both readers (the fast SSE path and LiteLLM's wrapper).

The hostile shapes are served by the fake server (`tests/fake_shapes.py`):
gzip, deflate and br bombs, endless streams, lines that never end, keep-alive
trickles and floods, bodies that end early, hostile usage and finish values,
a byte-order mark, a connection left open after the finish reason.

1. every stream is bounded (text, chunks, bytes per event and per body;
   compressed bodies inflated in steps); one bombed cell raises the process's
   peak RSS by no more than its bounds plus a small constant; the cache
   refuses oversized entries and stays under its size limit;
3. a body that ends before a finish reason or `[DONE]` (with or without
   text) is a cut stream: not cached, retried while nothing was shown;
7. idle means no new text: comments and empty chunks do not hold a cell open;
8. usage and finish values are checked: NaN/Infinity never reach JSONL;
10. a leading BOM loses nothing; an answer whose finish reason arrived is
    complete even if the connection stays open; a model string LiteLLM cannot
    build a request for is one clear error, not four "could not connect" tries.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from fake_openai import answer_text
from fake_shapes import LONG_FINISH
from support import fake_models_yaml

from orbench_play import cli, engine
from orbench_play.cache import CachedAnswer, ResultCache
from orbench_play.engine import streams, timeouts
from orbench_play.engine.bounds import StreamBounds
from orbench_play.models import bare_model, custom_endpoint
from orbench_play.types import GenerationParams, ModelSpec, Prompt, RunConfig

PROMPT = Prompt("hard-1k:1", "hard-1k", "privacy", "How do I see which apps can read my location?")
PATHS = ("fast", "wrapper")
BOUNDS = StreamBounds.for_tokens(512)


def _run(fake, behaviour: str, path: str, monkeypatch, *, cache: ResultCache | None = None, **config):
    monkeypatch.setenv(streams.ENV_FAST, "1" if path == "fast" else "0")
    spec = custom_endpoint(fake.base_url, behaviour, "sk-test")
    settings = {"timeout_s": 30.0, "max_retries": 1, **config}  # a loaded box may take seconds to start a cell
    run = RunConfig(models=(spec,), prompts=(PROMPT,), use_cache=cache is not None, **settings)
    (result,) = asyncio.run(engine.collect(run, cache=cache))
    return result


@pytest.fixture
def cache(tmp_path):
    return ResultCache(tmp_path / "cache")


# -- 1. bounded -----------------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("behaviour", ["endless", "endless/gzip", "endless/as-text"])
def test_an_endless_answer_is_cut_by_us_at_its_bound_and_not_cached(fake, monkeypatch, cache, path, behaviour):
    result = _run(fake, behaviour, path, monkeypatch, cache=cache)
    assert result.verdict == "error" and len(result.response) == BOUNDS.text_chars
    assert result.error.startswith(f"Stopped reading: the answer passed {BOUNDS.text_chars:,} characters")
    assert "more than max tokens (512) allows" in result.error and "not scored" in result.error
    assert result.attempts == 1 and len(cache) == 0


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("behaviour", ["no-newline", "no-newline/gzip", "no-newline/deflate", "no-newline/br"])
def test_a_line_that_never_ends_stops_at_the_event_bound(fake, monkeypatch, cache, path, behaviour):
    # the bound's error, not a time limit's, says the bound ended the stream (it
    # used to run until the time limit); a stopwatch here failed whenever the
    # test happened to be a worker's first and paid for importing LiteLLM
    result = _run(fake, behaviour, path, monkeypatch, cache=cache)
    assert result.error == f"Stopped reading: one event of the answer stream passed {BOUNDS.event_bytes:,} bytes."
    assert result.attempts == 1 and len(cache) == 0


@pytest.mark.parametrize("path", PATHS)
def test_an_encoding_we_do_not_read_is_refused(fake, monkeypatch, path):
    result = _run(fake, "answer/zstd", path, monkeypatch)
    assert result.error == (
        "The server sent its answer with Content-Encoding 'zstd', which is not read here (gzip, deflate and br are)."
    )


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("behaviour", ["answer/gzip", "answer/deflate", "answer/br"])
def test_compressed_answers_still_read_whole(fake, monkeypatch, path, behaviour):
    result = _run(fake, behaviour, path, monkeypatch)
    assert result.ok and result.response == answer_text(PROMPT.text)


@pytest.mark.parametrize("path", PATHS)
def test_a_flood_of_empty_chunks_stops_at_the_chunk_bound(fake, monkeypatch, path):
    result = _run(fake, "flood", path, monkeypatch, idle_timeout_s=5.0)
    assert result.error.startswith(f"Stopped reading: the server sent more than {BOUNDS.chunks:,} chunks")


def test_the_bounds_grow_with_max_tokens():
    small, large = StreamBounds.for_tokens(16), StreamBounds.for_tokens(8192)
    assert small.text_chars == 8192 and large.text_chars == 32 * 8192
    assert large.chunks == 4 * 8192 + 1024 and large.event_bytes == 8 * large.text_chars
    assert large.body_bytes > large.chunks * 1024


_RSS_CHILD = """
import asyncio, json, os, resource, sys
base_url, path = sys.argv[1:3]
os.environ["ORBENCH_FAST_STREAMS"] = "1" if path == "fast" else "0"
from orbench_play import engine
from orbench_play.models import custom_endpoint
from orbench_play.types import Prompt, RunConfig
prompt = Prompt("hard-1k:1", "hard-1k", "privacy", "hi")
def run(name):
    config = RunConfig(models=(custom_endpoint(base_url, name, "k"),), prompts=(prompt,), use_cache=False,
                       timeout_s=60, token_timeout_s=0.0, max_retries=0)
    return asyncio.run(engine.collect(config))[0]
run("answer"), run("answer/gzip")  # everything a cell loads, loaded
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for bomb in ("no-newline/gzip", "endless/gzip", "flood"):
    result = run(bomb)
    now = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"bomb": bomb, "grew_kib": now - peak, "error": result.error}), flush=True)
    peak = now
"""


@pytest.mark.parametrize("path", PATHS)
def test_one_bombed_cell_raises_peak_rss_by_its_bounds_plus_a_constant(fake, tmp_path, path):
    """Peak RSS (ru_maxrss, so a spike counts) of a process that has run a cell
    already, across a gzip bomb of one endless line, an endless gzip answer and
    a flood of empty chunks. Before the bounds, one such cell took the app from
    380 MB to 1,863 MB (and this test's bomb +206 MB in its 5 s). Each cell may
    take 60 s, so that the bound, not the clock, ends every bomb (a loaded full
    run timed the wrapper path out at 5 s, 11,188 characters into the endless
    answer)."""
    script = tmp_path / "child.py"
    script.write_text(_RSS_CHILD, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script), fake.base_url, path], capture_output=True, text=True, timeout=240, check=False
    )
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 3, proc.stderr[-2000:]
    cap_kib = (BOUNDS.event_bytes + 8 * BOUNDS.text_chars) // 1024
    for line in lines:
        assert line["error"].startswith("Stopped reading:"), line
        assert line["grew_kib"] <= cap_kib + 32 * 1024, line  # its bounds + 32 MiB
        print(f"RSS {path} {line['bomb']}: +{line['grew_kib']} KiB (bound {cap_kib} KiB + 32 MiB)")


def test_the_cache_refuses_an_entry_over_its_share_of_the_limit(tmp_path):
    cache = ResultCache(tmp_path, size_limit_mb=4)
    assert cache.entry_limit == 4 * 1024 * 1024 // 64
    cache.put_answer("big", CachedAnswer("x" * (cache.entry_limit + 1), "stop", 1, 0.0, 0.1, 0.1))
    cache.put_answer("ok", CachedAnswer("x" * cache.entry_limit, "stop", 1, 0.0, 0.1, 0.1))
    assert cache.get_answer("big") is None and cache.get_answer("ok") is not None


def test_the_cache_stays_under_its_limit_when_large_entries_follow_many_small_ones(tmp_path):
    """diskcache evicts at most ten entries per write: after many small entries,
    each large one used to add more than its write evicted."""
    cache = ResultCache(tmp_path, size_limit_mb=2)
    limit = 2 * 1024 * 1024
    for i in range(1500):
        cache.put_answer(f"small{i}", CachedAnswer(f"s{i}" * 300, "stop", 1, 0.0, 0.1, 0.1))
    for i in range(60):
        cache.put_answer(f"large{i}", CachedAnswer(f"{i}" + "y" * 30_000, "stop", 1, 0.0, 0.1, 0.1))
        assert cache._cache.volume() <= limit, (i, cache._cache.volume())
    assert cache.get_answer("large59") is not None


# -- 3. a body that ends early is a cut stream ----------------------------------------------


@pytest.mark.parametrize("path", PATHS)
def test_no_chunk_then_the_end_is_cut_retried_and_not_cached(fake, monkeypatch, cache, path):
    result = _run(fake, "empty-close", path, monkeypatch, cache=cache)
    assert result.verdict == "error" and result.response == ""
    assert result.error == "The connection closed before the answer started. Gave up after 2 attempts."
    assert fake.request_count("empty-close") == 2 and len(cache) == 0


@pytest.mark.parametrize("path", PATHS)
def test_text_then_the_end_without_finish_or_done_is_cut_and_not_cached(fake, monkeypatch, cache, path):
    result = _run(fake, "no-end", path, monkeypatch, cache=cache)
    assert result.verdict == "error" and result.response == answer_text(PROMPT.text)
    assert (
        result.error
        == f"The answer stream broke off after {len(result.response)} characters (partial text kept, not scored)."
    )
    assert result.attempts == 1 and len(cache) == 0


@pytest.mark.parametrize("path", PATHS)
def test_the_same_on_a_provider_litellm_reads_itself(fake, monkeypatch, path):
    """groq/ streams are read by LiteLLM's own handler, never the OpenAI SDK."""
    monkeypatch.setenv(streams.ENV_FAST, "1" if path == "fast" else "0")
    groq = ModelSpec(name="groq-empty", litellm_model="groq/empty-close", api_base=fake.base_url, api_key="sk-test")
    config = RunConfig(models=(groq,), prompts=(PROMPT,), use_cache=False, timeout_s=5.0, max_retries=1)
    (result,) = asyncio.run(engine.collect(config))
    assert result.error == "The connection closed before the answer started. Gave up after 2 attempts."


# -- 7. idle means no new text ---------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
def test_keep_alives_do_not_reset_the_idle_limit(fake, monkeypatch, path):
    result = _run(fake, "trickle", path, monkeypatch, timeout_s=10.0, idle_timeout_s=1.0, token_timeout_s=0.0)
    # the idle limit's message, not the overall 10 s one's that used to end it
    assert result.error.startswith("Timed out: no new text for 1 s after "), result.error


# -- 8. usage and finish values --------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("behaviour", ["usage-nan", "usage-junk", "finish-junk", "finish-long"])
def test_hostile_values_are_dropped_and_the_answer_kept(fake, monkeypatch, caplog, path, behaviour):
    result = _run(fake, behaviour, path, monkeypatch)
    assert result.ok and result.response == answer_text(PROMPT.text), result.error
    assert result.finish_reason == "stop"
    assert isinstance(result.completion_tokens, int) and 0 < result.completion_tokens < 1000
    assert "sent values that were dropped" in caplog.text
    assert LONG_FINISH not in caplog.text  # the note is short


def _strict(line: str) -> dict:
    def refuse(constant: str):
        raise ValueError(f"{constant} in JSONL")

    return json.loads(line, parse_constant=refuse)


@pytest.mark.parametrize("path", PATHS)
def test_nan_and_infinity_never_reach_jsonl(fake, tmp_path, monkeypatch, path):
    monkeypatch.setenv(streams.ENV_FAST, "1" if path == "fast" else "0")
    names = {"nan": "usage-nan", "junk": "usage-junk", "finish": "finish-junk"}
    config = fake_models_yaml(tmp_path / "models.yaml", fake.base_url, names)
    out = tmp_path / "r.jsonl"
    models = [a for n in names for a in ("--model", n)]
    argv = ["run", "--config", str(config), "--split", "hard-1k", "--n", "1", "--quiet", "--no-cache", "--out"]
    assert cli.main([*argv, str(out), *models]) == 0
    rows = [_strict(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 3
    for row in rows:
        assert row["verdict"] == "direct_answer" and isinstance(row["completion_tokens"], int)


# -- 10. leftovers ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
def test_a_leading_byte_order_mark_loses_nothing(fake, monkeypatch, path):
    result = _run(fake, "bom", path, monkeypatch)
    assert result.ok and result.response == answer_text(PROMPT.text)


@pytest.mark.parametrize("path", PATHS)
def test_a_finished_answer_completes_while_the_connection_stays_open(fake, monkeypatch, cache, path):
    ended: list[str | None] = []
    real_exit = timeouts.Watchdog.__aexit__

    async def recording_exit(self, *exc):
        ended.append(self.fired)
        return await real_exit(self, *exc)

    monkeypatch.setattr(timeouts.Watchdog, "__aexit__", recording_exit)
    result = _run(fake, "open-after-finish", path, monkeypatch, cache=cache, idle_timeout_s=5.0)
    assert result.ok and result.response == answer_text(PROMPT.text) and result.finish_reason == "stop"
    assert result.completion_tokens == -(-len(result.response) // 4)  # the usage sent after the finish
    assert ended == ["finished"]  # the grace after the finish ended the attempt, not the idle limit
    assert len(cache) == 1


def test_a_model_string_litellm_cannot_build_a_request_for_is_not_retried(monkeypatch, no_egress):
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    spec = bare_model("huggingface/localhost:8000")
    config = RunConfig(models=(spec,), prompts=(PROMPT,), use_cache=False, max_retries=3, params=GenerationParams())
    (result,) = asyncio.run(engine.collect(config))
    assert result.attempts == 1
    assert result.error.startswith("LiteLLM could not make a request for huggingface/localhost:8000 (")
    assert result.error.endswith("): check the model string.")
