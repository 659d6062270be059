"""`soak_memory`: many sequential engine runs in one process, and its memory.

Set-up: the fake server in its own process; `engine.collect` runs two prompts
(new ones every run, so every cell is sent) against two models (`answer` and
`refuse`, as custom endpoints) through a disk cache, one run after another in
one event loop, as a long-lived app would. The first WARM runs are warm-up
(imports, LiteLLM's first call, connection pools); RSS is read after a
`gc.collect()` at the end of warm-up and every SAMPLE_EVERY runs after it.

Value: RSS after the last run (MB); floor: RSS after warm-up (MB); ratio 1.0 is
flat. The target is a leak check, not a speed: growth under 25 MB over the
runs (200 runs leaking even 0.2 MB each would show), and the second half
growing under 12 MB (no faster than noise). Cells that failed are counted in
the detail; a first-chunk limit of 60 s keeps a slow first call on a busy
machine (11 s once, beside the test suite) from counting as a failure, since
time is not what this measures.

It was `tests/test_load.py::test_soak_memory_is_flat`; it moved here because it
is a soak (a minute of one core) whose only figure is memory over time.
"""

from __future__ import annotations

import asyncio
import gc
import shutil
import tempfile
import time

from . import common
from .report import Figure, ratio

WARM = 10
SAMPLE_EVERY = 50
FIRST_CHUNK_LIMIT_S = 60.0
"""Generous on purpose: a memory soak must not fail on a slow first call."""


def _rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


async def _soak(base_url: str, cache_dir: str, runs: int, sample_every: int) -> dict:
    from orbench_play import engine
    from orbench_play.cache import ResultCache
    from orbench_play.models import custom_endpoint
    from orbench_play.types import Prompt, RunConfig

    cache = ResultCache(cache_dir)
    models = (custom_endpoint(base_url, "answer", "sk"), custom_endpoint(base_url, "refuse", "sk"))
    samples: list[float] = []
    failed = cells = 0
    errors: list[str] = []
    start = time.perf_counter()
    for i in range(runs + WARM):
        if i == WARM:  # after warm-up (imports, first-call set-up, pools)
            gc.collect()
            samples.append(_rss_mb())
            start = time.perf_counter()
        prompts = tuple(
            Prompt(f"hard-1k:{5000 + 2 * i + j}", "hard-1k", "privacy", f"Soak question {i}-{j}?") for j in range(2)
        )
        config = RunConfig(models=models, prompts=prompts, timeout_s=FIRST_CHUNK_LIMIT_S, max_retries=0)
        results = await engine.collect(config, cache=cache)
        cells += len(results)
        bad = [r for r in results if not r.ok or r.cached]
        failed += len(bad) + (len(prompts) * len(models) - len(results))
        errors.extend(str(r.error)[:80] for r in bad[:1] if len(errors) < 3)
        if i >= WARM and (i - WARM) % sample_every == sample_every - 1:
            gc.collect()
            samples.append(_rss_mb())
    seconds = time.perf_counter() - start
    cache.close()
    return {"samples": samples, "seconds": seconds, "cells": cells, "failed": failed, "errors": errors}


def figures(quick: bool, command: str) -> list[Figure]:
    runs, sample_every = (20, 10) if quick else (200, SAMPLE_EVERY)
    folder = tempfile.mkdtemp(prefix="orbench-bench-soak-")
    try:
        with common.FakeServerProcess(delay=0.0) as server:
            got = asyncio.run(_soak(server.base_url, folder, runs, sample_every))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    samples = got["samples"]
    growth = samples[-1] - samples[0]
    second_half = samples[-1] - samples[len(samples) // 2]
    detail = {
        "setup": (
            f"{runs} sequential engine.collect runs (after {WARM} warm-up runs) of 2 new prompts x 2 fake-server "
            f"models (answer, refuse; server in its own process), through a disk cache, one event loop; "
            f"RSS after gc.collect() every {sample_every} runs"
        ),
        "runs": runs,
        "cells": got["cells"],
        "failed_cells": got["failed"],
        "errors": got["errors"],
        "seconds": round(got["seconds"], 1),
        "rss_mb": [round(s, 1) for s in samples],
        "growth_mb": round(growth, 1),
        "second_half_growth_mb": round(second_half, 1),
        "floor_name": "RSS after the warm-up runs",
        "target": "growth < 25 MB, second half < 12 MB, no failed cell",
        "meets_target": None if quick else bool(growth < 25 and second_half < 12 and got["failed"] == 0),
    }
    return [Figure("soak_memory", samples[-1], "MB", samples[0], ratio(samples[-1], samples[0]), detail)]
