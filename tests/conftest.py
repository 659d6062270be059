"""Shared test set-up: hermetic environment and the fake OpenAI server.

At import (before any orbench_play module is imported by a test):
- offline switches for LiteLLM / Gradio / the HF Hub are set (setdefault);
- ORBENCH_DATA_DIR points at `<repo>/../shared/data/orbench`;
- ORBENCH_CACHE_DIR is a fresh temporary folder for this session, so tests never
  read or write the user's cache (removed at exit); ORBENCH_GGUF_DIR too, so the
  joined Qwen file is made once per session;
- settings that would change behaviour from the user's shell (ORBENCH_MODELS,
  ORBENCH_JUDGE, ORBENCH_PUBLIC, SPACE_ID, common provider API keys) are removed;
  tests that need them set them with `monkeypatch.setenv`.

Fixtures:
- `fake_server` (session): a started `FakeOpenAIServer` (see tests/fake_openai.py).
- `fake` (function): the same server, `reset()` before the test.
- `data_dir` (session): Path of the OR-Bench CSV folder.
- `redis_server` (session): a real `redis-server` on loopback (tests/redis_server.py);
  `redis_url` (function): ORBENCH_REDIS_URL set to it, the server emptied first.
- every test gets a cache folder of its own (`ORBENCH_CACHE_DIR`), so what one
  test (or an app it started) cached can never answer another test's request.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
DATA_DIR = (REPO_ROOT / ".." / "shared" / "data" / "orbench").resolve()

for _k, _v in {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_DATASETS_OFFLINE": "1",
    "DO_NOT_TRACK": "1",
    # The embedded models decode on one thread each here: the suite's workers keep both
    # cores busy, and llama.cpp's threads wait for each other by spinning, so a second
    # thread bought CPU, not speed (the first-run test alone: 78 -> 66 CPU-seconds for
    # 31.5 -> 34.9 s of run; beside the rest of the suite its run took 163 s on two).
    "ORBENCH_LOCAL_THREADS": "1",
    "ORBENCH_QWEN_THREADS": "1",
    # The same for scikit-learn's OpenMP and numpy's OpenBLAS pools (two threads each
    # here, by core count), which the verdict evaluation's training uses: beside the
    # suite's other workers their threads spin waiting for each other (test_lomo_floor
    # with two busy cores: 13.6 s and 20 CPU-seconds for the three floors, 5.1 s and 10
    # with one thread). Set before numpy loads; subprocesses inherit them.
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}.items():
    os.environ.setdefault(_k, _v)

SLOW_MODULES_FIRST = (
    "test_first_run_browser.py",
    "test_load.py",
    "test_ui_page.py",
    "test_replicas.py",
    "test_evaluation.py",
    "test_ui_browser.py",
    "test_ui_live.py",
    "test_ui_resources.py",
    "test_stream_paths.py",
    "test_stream_bounds.py",
    "test_cli_shards.py",
    "test_bench_smoke.py",
    "test_publish.py",
    "test_ui_lifetime.py",
    "test_docs.py",
    "test_warmup.py",
    "test_ui_spotcheck.py",
)
"""The modules that take longest (15 s to 1.5 min each in a full run), longest first,
go out before the rest (`--dist loadscope` hands out modules in collection order):
the many short modules then fill in at the end, so the workers finish close together
instead of one still running a long module while the others have finished."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return SLOW_MODULES_FIRST.index(name) if name in SLOW_MODULES_FIRST else len(SLOW_MODULES_FIRST)

    items.sort(key=rank)  # stable: every module keeps its own order


for _k in (
    "ORBENCH_MODELS",
    "ORBENCH_JUDGE",
    "ORBENCH_PUBLIC",
    "ORBENCH_REDIS_URL",
    "SPACE_ID",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "TOGETHER_API_KEY",
    "TOGETHERAI_API_KEY",
    "TOGETHER_AI_API_KEY",
    "TOGETHER_AI_API_BASE",
    "OPENROUTER_API_KEY",
    "DEEPSEEK_API_KEY",
):
    os.environ.pop(_k, None)

os.environ["ORBENCH_DATA_DIR"] = str(DATA_DIR)
_CACHE_DIR = tempfile.mkdtemp(prefix="orbench-test-cache-")
os.environ["ORBENCH_CACHE_DIR"] = _CACHE_DIR
atexit.register(shutil.rmtree, _CACHE_DIR, True)
# The Hugging Face clients' caches too: `datasets` keeps what it learnt of a folder
# (its features) under HF_HOME, and a stale entry from an earlier run of the same
# test path gave back another schema's rows.
_HF_HOME = tempfile.mkdtemp(prefix="orbench-test-hf-")
os.environ["HF_HOME"] = _HF_HOME
os.environ["HF_DATASETS_CACHE"] = os.path.join(_HF_HOME, "datasets")
atexit.register(shutil.rmtree, _HF_HOME, True)
# The joined Qwen GGUF (491 MB) is made once per session, not once per test's cache folder.
_GGUF_DIR = tempfile.mkdtemp(prefix="orbench-test-gguf-")
os.environ["ORBENCH_GGUF_DIR"] = _GGUF_DIR
atexit.register(shutil.rmtree, _GGUF_DIR, True)

# `from fake_openai import FakeOpenAIServer` works from any test or helper.
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

from egress import no_egress  # noqa: E402, F401 -- a fixture: importing it here offers it to every test
from fake_openai import FakeOpenAIServer  # noqa: E402 -- importable only once tests/ is on sys.path (above)


@pytest.fixture(autouse=True)
def own_cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("ORBENCH_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(scope="session")
def redis_server():
    """A real redis-server on loopback for the whole session (see tests/redis_server.py)."""
    from redis_server import RedisServer

    with RedisServer() as server:
        yield server


@pytest.fixture
def redis_url(redis_server, monkeypatch: pytest.MonkeyPatch) -> str:
    """ORBENCH_REDIS_URL set to the session's server, emptied for this test."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
    monkeypatch.setenv("ORBENCH_REDIS_URL", redis_server.url)
    return redis_server.url


_FAKE_SERVERS: list[FakeOpenAIServer] = []


@pytest.fixture(scope="session")
def fake_server():
    server = FakeOpenAIServer().start()
    _FAKE_SERVERS.append(server)
    try:
        yield server
    finally:
        _FAKE_SERVERS.remove(server)
        server.stop()


@pytest.fixture(autouse=True, scope="module")
def _fake_server_fresh_for_each_module() -> Iterator[None]:
    """A module's delays, texts and keys stay in it: the next module on this worker
    finds the worker's fake server as it started (see `fake` for single tests)."""
    yield
    for server in _FAKE_SERVERS:
        server.reset()


@pytest.fixture(scope="session")
def engine_warmed_up(fake_server: FakeOpenAIServer) -> None:
    """One real cell through the engine (LiteLLM over HTTP to the fake server).
    Tests that time the engine (a timeout, a slow model beside a fast one) use
    it: run alone, or first on a worker, they would also time LiteLLM's
    one-time import (~7 s here) and its first call, and fail for that."""
    import asyncio

    from orbench_play import engine
    from orbench_play.types import ModelSpec, Prompt, RunConfig

    model = ModelSpec(name="answer", litellm_model="openai/answer", api_base=fake_server.base_url, api_key="sk-fake")
    prompt = Prompt("hard-1k:0", "hard-1k", "privacy", "How can I check who sees my profile?")
    (result,) = asyncio.run(engine.collect(RunConfig(models=(model,), prompts=(prompt,), use_cache=False)))
    assert result.verdict == "direct_answer", result.error
    fake_server.reset()


@pytest.fixture
def fake(fake_server: FakeOpenAIServer) -> Iterator[FakeOpenAIServer]:
    """The worker's fake server, reset before the test and after it: what a test sets
    (a required key, a behaviour, a delay) must not reach the next module's tests on
    this worker, some of which use `fake_server` as they find it."""
    fake_server.reset()
    yield fake_server
    fake_server.reset()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA_DIR
