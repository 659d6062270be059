"""Figure 3: cache replay.

The 64-cell run (16 prompts x 4 models) replayed by `engine.collect` from a
warm cache: every cell is a hit, nothing reaches the network. The floor is
reading the same 64 entries straight from `diskcache.Cache.get`. Both handles
are opened before timing (the app keeps one process-wide handle); the cost of
opening, and the very first replay of the process (verdict model load), are
reported in the detail.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time

from . import common
from .report import Figure, ratio


def _fill(cache, config) -> list[str]:
    from orbench_play import cache as cache_mod
    from orbench_play import verdicts
    from orbench_play.cache import CachedAnswer, cell_key

    keys = []
    for p in config.prompts:
        for m in config.models:
            key = cell_key(m, config.params.messages(p.text), config.params, 0)
            text = (
                f"Sure. Here is some information about: {p.text} "
                "First, consider the context and the people involved. Second, look at reliable sources. "
                "Third, weigh the risks and benefits before you act. " * 3
            )
            # As the engine stores a finished cell: with its offline verdict.
            verdict = verdicts.LiveVerdict().finish(text, "stop")
            cache.put_answer(
                key,
                CachedAnswer(text, "stop", len(text) // 4, 0.0, 1.02, 0.05,
                             verdict.label, verdict.source, cache_mod.classifier_version()),
            )  # fmt: skip
            keys.append(key)
    return keys


def figures(quick: bool, command: str) -> list[Figure]:
    import diskcache

    from orbench_play import engine
    from orbench_play.cache import ResultCache
    from orbench_play.types import RunConfig

    from .fanout import _config

    n_prompts, n_models = (4, 2) if quick else (16, 4)
    rounds = 3 if quick else 15
    cfg = _config(common.prompts(n_prompts), n_models, "http://127.0.0.1:9/v1", 64)
    cfg = RunConfig(
        models=cfg.models, prompts=cfg.prompts, params=cfg.params, concurrency=cfg.concurrency, use_cache=True
    )
    folder = tempfile.mkdtemp(prefix="orbench-bench-cache-")
    try:
        t0 = time.perf_counter()
        rc = ResultCache(folder)
        open_engine = time.perf_counter() - t0
        keys = _fill(rc, cfg)
        t0 = time.perf_counter()
        raw = diskcache.Cache(folder)
        open_floor = time.perf_counter() - t0

        def floor() -> tuple[float, float]:
            c, t = time.process_time(), time.perf_counter()
            got = [raw.get(k) for k in keys]
            dt, dc = time.perf_counter() - t, time.process_time() - c
            assert all(isinstance(g, dict) for g in got)
            return dt, dc

        loop = asyncio.new_event_loop()  # one loop for every round, as in a long-lived app

        def replay() -> tuple[float, float]:
            c, t = time.process_time(), time.perf_counter()
            results = loop.run_until_complete(engine.collect(cfg, cache=rc))
            dt, dc = time.perf_counter() - t, time.process_time() - c
            assert len(results) == len(keys) and all(r.cached and r.ok for r in results), [r.error for r in results][:3]
            return dt, dc

        first_replay = replay()[0]  # includes the one-off load of the verdict model
        floors, engines, floors_cpu, engines_cpu = [], [], [], []
        for _ in range(rounds):
            w, c = floor()
            floors.append(w)
            floors_cpu.append(c)
            w, c = replay()
            engines.append(w)
            engines_cpu.append(c)
        rc.close()
        raw.close()
        loop.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    value, fl = common.median(engines), common.median(floors)
    r = ratio(value, fl)
    return [
        Figure(
            "replay_wall",
            value,
            "s",
            fl,
            r,
            {
                "floor_name": f"diskcache.get of the same {len(keys)} entries",
                "engine_wall_s": common.rnd(value, 5),
                "floor_wall_s": common.rnd(fl, 5),
                "cells": len(keys),
                "engine_cpu_s": common.rnd(common.median(engines_cpu), 5),
                "floor_cpu_s": common.rnd(common.median(floors_cpu), 5),
                "first_replay_in_process_s": common.rnd(first_replay, 4),
                "open_result_cache_s": common.rnd(open_engine, 4),
                "open_diskcache_s": common.rnd(open_floor, 4),
                "raw_engine_s": [common.rnd(x, 5) for x in engines],
                "raw_floor_s": [common.rnd(x, 5) for x in floors],
                "setup": f"{n_prompts} prompts x {n_models} models from a warm temp cache, handles open, {rounds} alternating rounds, medians",
                "target": "<= 0.25 s and ratio <= 3",
                "meets_target": None if quick else bool(value <= 0.25 and r is not None and r <= 3),
                "command": command,
            },
        )
    ]
