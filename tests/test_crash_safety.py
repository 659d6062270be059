"""Issue #6, crash safety: SIGKILL a run half-way, start again: the cache
opens, holds only complete answers, and the re-run asks only for what is
missing.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fake_openai import answer_text

from orbench_play import engine
from orbench_play.cache import ResultCache
from orbench_play.models import custom_endpoint
from orbench_play.types import Prompt, RunConfig

REPO = Path(__file__).resolve().parent.parent
N_PROMPTS = 12

CHILD = textwrap.dedent(
    """
    import asyncio, sys
    sys.path.insert(0, {repo!r})
    sys.path.insert(0, {tests!r})
    from test_crash_safety import config_for
    from orbench_play import engine
    from orbench_play.cache import ResultCache

    async def main():
        cache = ResultCache(sys.argv[2])
        async for event in engine.run(config_for(sys.argv[1]), cache=cache):
            if event.kind in ("done", "error"):
                print(event.kind, event.cell_id, flush=True)
        print("finished", flush=True)

    asyncio.run(main())
    """
)


def prompts() -> tuple[Prompt, ...]:
    return tuple(
        Prompt(f"hard-1k:{100 + i}", "hard-1k", "privacy", f"Crash-safety question {i}?") for i in range(N_PROMPTS)
    )


def config_for(base_url: str) -> RunConfig:
    """Slow streams, three at a time: cells finish in waves, so a kill lands mid-run with streams open."""
    return RunConfig(
        models=(custom_endpoint(base_url, "slow", "sk"),), prompts=prompts(), concurrency=3, timeout_s=30, max_retries=0
    )


def _entries(cache: ResultCache) -> list[dict]:
    return [cache._cache.get(k) for k in cache._cache.iterkeys()]


def _run_child_and_kill(fake, script: Path, cache_dir: Path, kill_after: int) -> tuple[int | None, list[str], int, str]:
    """Start the child run, SIGKILL it once `kill_after` cells are done and the next
    wave has streams open; return (its exit code, the cells done before the kill,
    streams open at the kill, its stderr's tail). Blocking, so the test runs it in
    a thread: the event loop stays free."""
    child = subprocess.Popen(
        [sys.executable, str(script), fake.base_url, str(cache_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    done_before_kill: list[str] = []
    deadline = time.monotonic() + 120
    try:
        for line in child.stdout:
            if line.startswith("done "):
                done_before_kill.append(line.split()[1])
            if len(done_before_kill) >= kill_after or time.monotonic() > deadline:
                break
        settle = time.monotonic() + 3
        while fake.in_flight == 0 and time.monotonic() < settle:  # let the next wave open its streams
            time.sleep(0.01)
        in_flight = fake.in_flight
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    return child.returncode, done_before_kill, in_flight, child.stderr.read()[-2000:]


@pytest.mark.parametrize("kill_after", [4])
async def test_sigkill_mid_run_then_resume(fake, tmp_path, kill_after, no_egress):
    fake.delay = 0.6
    fake.chunks = 30
    cache_dir = tmp_path / "cache"
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(repo=str(REPO), tests=str(REPO / "tests")))
    returncode, done_before_kill, in_flight, stderr_tail = await asyncio.to_thread(
        _run_child_and_kill, fake, script, cache_dir, kill_after
    )
    assert returncode == -signal.SIGKILL
    assert len(done_before_kill) == kill_after, stderr_tail
    assert in_flight > 0  # the kill really landed with streams open

    # The cache opens cleanly and holds only whole answers.
    cache = ResultCache(cache_dir)
    assert cache.enabled and cache.warning is None
    stored = _entries(cache)
    expected_texts = {answer_text(p.text) for p in prompts()}
    assert len(stored) >= kill_after
    assert len(stored) < N_PROMPTS  # it was killed mid-run
    assert all(v["response"] in expected_texts and v["finish_reason"] == "stop" for v in stored)

    # Re-running completes exactly what is missing.
    fake.reset()
    fake.delay = 0.05
    results = await asyncio.wait_for(engine.collect(config_for(fake.base_url), cache=cache), 60)
    assert len(results) == N_PROMPTS and all(r.ok for r in results)
    assert sum(r.cached for r in results) == len(stored)
    assert fake.request_count() == N_PROMPTS - len(stored)
    asked = {r.prompt for r in fake.requests}
    assert asked == {r.prompt for r in results if not r.cached}
    assert len(cache) == N_PROMPTS
    cache.close()
