"""Figures of issue 10 for the engine at real answer length.

- `live_engine_128x300_wall`, `live_engine_128x300_cpu_per_cell`: 128 cells
  (32 prompts x 4 models) of the fake server's `long` behaviour (300 words,
  one word per chunk, over 2 s) through `engine.collect`, cache off, against
  the floor: a minimal httpx client reading the same 128 streams (SSE lines,
  `json.loads`, text joined). Engine and floor alternate, round after round,
  in this process, against one fake server in its own process. One round of
  the engine through LiteLLM's wrapper (`ORBENCH_FAST_STREAMS=0`, what the
  engine did before the fast path) is given as a reference.
- `live_engine_128x300_thinking` (wall) and `live_engine_128x300_thinking_cpu_per_cell`:
  the same 128 cells of a thinking model (the fake server's `long-think`: 200
  words of inline `<think>` thoughts, then the 300-word answer, one word per
  chunk, over the same 2 s), against the same floor client reading the same
  streams; the engine splits thoughts from the answer as they arrive.
- `live_engine_128x300_follow_up`: one follow-up round over the same 128
  cells ("Why did you refuse?" sent to every cell: each request carries the
  prompt, the 300-word first answer and the follow-up; the answer is another
  300 words), through `engine.collect` with `RunConfig.follow_ups`, against
  the floor client sending the same conversations; its ratio beside the
  first turn's shows that a follow-up costs the engine no more than a first turn.
- `live_engine_sessions_24x16`: 24 engine runs of 16 such cells at once in
  one process (24 visitors' sessions), p95 session time against one session
  alone; the same ratio for 24 floor-client sessions is in `detail`, since one
  fake server process and two cores bound what any client can reach here.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from typing import Any

from . import common
from .report import Figure, ratio


def _config(prompts, n_models: int, base_url: str, concurrency: int, max_tokens: int = 1024, behaviour: str = "long"):
    return common.fake_run_config(prompts, behaviour, n_models, base_url, concurrency, max_tokens=max_tokens)


async def _engine(config):
    from orbench_play import engine

    return await engine.collect(config)


def _wrapper_path(config) -> common.Sample:
    """The engine reading through LiteLLM's CustomStreamWrapper (the path before issue 10)."""
    from orbench_play.engine import streams

    old = os.environ.get(streams.ENV_FAST)
    os.environ[streams.ENV_FAST] = "0"
    try:
        sample, _ = common.measure(_engine, config)
    finally:
        if old is None:
            os.environ.pop(streams.ENV_FAST, None)
        else:
            os.environ[streams.ENV_FAST] = old
    return sample


def _pair(
    server: common.FakeServerProcess, n_prompts: int, n_models: int, rounds: int, behaviour: str = "long"
) -> dict[str, Any]:
    config = _config(common.prompts(n_prompts), n_models, server.base_url, n_prompts * n_models, behaviour=behaviour)
    work = common.floor_work(config)
    cells = len(work)
    samples: dict[str, list[common.Sample]] = {"floor": [], "engine": []}
    errors: list[str] = []
    for _ in range(rounds):
        s, texts = common.measure(common.floor_httpx, server.base_url, work, cells)
        assert len(texts) == cells and all(texts)
        samples["floor"].append(s)
        s, results = common.measure(_engine, config)
        bad = [r.error for r in results if not r.ok]
        if bad or len(results) != cells:
            errors.append(f"{len(bad)} failed cells of {len(results)}: {bad[:2]}")
        samples["engine"].append(s)
    return {"cells": cells, "samples": samples, "errors": errors, "config": config, "results": results}


def _follow_up_pair(server: common.FakeServerProcess, config, first, rounds: int) -> dict[str, Any]:
    """One follow-up round over `first`'s cells, engine and floor alternating."""
    from dataclasses import replace

    from orbench_play.asking import followups

    follow_ups = tuple(followups.plan(first, followups.WHY, all_cells=True))
    config = replace(config, follow_ups=follow_ups)
    wire = {m.name: m.litellm_model.split("/", 1)[1] for m in config.models}
    work: list[tuple[str, Any]] = [(wire[f.model], config.params.conversation(f.history, f.text)) for f in follow_ups]
    samples: dict[str, list[common.Sample]] = {"floor": [], "engine": []}
    errors: list[str] = []
    for _ in range(rounds):
        s, texts = common.measure(common.floor_httpx, server.base_url, work, len(work))
        assert len(texts) == len(work) and all(texts)
        samples["floor"].append(s)
        s, results = common.measure(_engine, config)
        bad = [r.error for r in results if not r.ok or r.turn != 2]
        if bad or len(results) != len(work):
            errors.append(f"{len(bad)} failed cells of {len(results)}: {bad[:2]}")
        samples["engine"].append(s)
    return {"cells": len(work), "samples": samples, "errors": errors}


async def _sessions(runner, configs) -> list[float]:
    async def one(config) -> float:
        start = time.perf_counter()
        await runner(config)
        return time.perf_counter() - start

    return list(await asyncio.gather(*(one(c) for c in configs)))


def _session_figures(server: common.FakeServerProcess, sessions: int, per_session: int) -> dict[str, Any]:
    """p95 of `sessions` concurrent runs vs one alone, for the engine and for the floor client."""
    prompts = common.prompts(sessions * per_session // 2)
    # Each session its own prompts and max tokens: nothing shared between visitors.
    configs = [
        _config(prompts[i * per_session // 2 : (i + 1) * per_session // 2], 2, server.base_url, 64, 1024 + i)
        for i in range(sessions)
    ]

    async def floor_session(config):
        return await common.floor_httpx(server.base_url, common.floor_work(config), len(common.floor_work(config)))

    out: dict[str, Any] = {}
    for name, runner in (("floor", floor_session), ("engine", _engine)):
        alone = min(asyncio.run(_sessions(runner, configs[:1]))[0] for _ in range(2))
        c0 = time.process_time()
        times = asyncio.run(_sessions(runner, configs))
        cpu = time.process_time() - c0
        out[name] = {
            "alone_s": common.rnd(alone),
            "p50_s": common.rnd(statistics.median(times)),
            "p95_s": common.rnd(common.p95(times)),
            "p95_vs_alone": common.rnd(common.p95(times) / alone, 3),
            "cpu_ms_per_cell": common.rnd(1000 * cpu / (sessions * per_session), 2),
        }
    return out


def figures(quick: bool, command: str) -> list[Figure]:
    n_prompts, n_models = (4, 4) if quick else (32, 4)
    words, seconds = (60, 0.5) if quick else (300, 2.0)
    rounds = 1 if quick else 3
    sessions, per_session = (4, 4) if quick else (24, 16)
    extra = ("--words", str(words), "--long-seconds", str(seconds), "--think-words", "40" if quick else "200")
    with common.FakeServerProcess(extra=extra) as server:
        warm = _config(common.prompts(2), 2, server.base_url, 4)
        asyncio.run(_engine(warm))
        asyncio.run(common.floor_httpx(server.base_url, common.floor_work(warm), 4))
        raw = _pair(server, n_prompts, n_models, rounds)
        thinking = _pair(server, n_prompts, n_models, rounds, behaviour="long-think")
        follow = _follow_up_pair(server, raw["config"], raw["results"], rounds)
        wrapper = None if quick else _wrapper_path(raw["config"])
        sess = _session_figures(server, sessions, per_session)
    cells = raw["cells"]
    s = raw["samples"]
    wall = {k: common.median([x.wall_s for x in v]) for k, v in s.items()}
    cpu = {k: 1000 * common.median([x.cpu_s for x in v]) / cells for k, v in s.items()}
    server_cmd = f"python tests/fake_openai.py --port {server.port} --words {words} --long-seconds {seconds:g}"
    setup = (
        f"{n_prompts} prompts x {n_models} models = {cells} cells of the `long` model ({words} words, one per chunk, "
        f"over {seconds:g} s), fake server ({server_cmd}) in its own process, concurrency {cells}, no cache, "
        f"{rounds} alternating rounds, medians"
    )
    detail = {
        "setup": setup,
        "command": command,
        "errors": raw["errors"],
        "raw": {k: [{"wall_s": common.rnd(x.wall_s), "cpu_s": common.rnd(x.cpu_s)} for x in v] for k, v in s.items()},
        "reference_wrapper_path": None
        if wrapper is None
        else {"wall_s": common.rnd(wrapper.wall_s), "cpu_ms_per_cell": common.rnd(1000 * wrapper.cpu_s / cells, 2)},
    }
    wall_ratio = ratio(wall["engine"], wall["floor"])
    cpu_ratio = ratio(cpu["engine"], cpu["floor"])
    name = "live_engine_128x300"  # the full-size name, also for --quick's smaller run
    engine_ratio = sess["engine"]["p95_vs_alone"]
    t = thinking["samples"]
    t_wall = {k: common.median([x.wall_s for x in v]) for k, v in t.items()}
    t_cpu = {k: 1000 * common.median([x.cpu_s for x in v]) / cells for k, v in t.items()}
    t_wall_ratio, t_cpu_ratio = ratio(t_wall["engine"], t_wall["floor"]), ratio(t_cpu["engine"], t_cpu["floor"])
    t_detail = {
        **detail,
        "setup": setup.replace("`long` model", "`long-think` model (200 words of inline thoughts, then").replace(
            f"({words} words, one per chunk", f"the {words}-word answer, one word per chunk"
        )
        + "; the engine splits thoughts from the answer",
        "errors": thinking["errors"],
        "raw": {k: [{"wall_s": common.rnd(x.wall_s), "cpu_s": common.rnd(x.cpu_s)} for x in v] for k, v in t.items()},
        "reference_wrapper_path": None,
    }
    f = follow["samples"]
    f_wall = {k: common.median([x.wall_s for x in v]) for k, v in f.items()}
    f_ratio = ratio(f_wall["engine"], f_wall["floor"])
    f_detail = {
        **detail,
        "setup": setup.replace("cells of the `long` model", "cells of the `long` model one turn further")
        + "; each request carries the prompt, the first answer and the follow-up (“Why did you refuse?”)",
        "errors": follow["errors"],
        "raw": {k: [{"wall_s": common.rnd(x.wall_s), "cpu_s": common.rnd(x.cpu_s)} for x in v] for k, v in f.items()},
        "first_turn_ratio": wall_ratio,
        "engine_vs_first_turn": {
            "wall": ratio(f_wall["engine"], wall["engine"]),
            "cpu_per_cell": ratio(
                common.median([x.cpu_s for x in f["engine"]]), common.median([x.cpu_s for x in s["engine"]])
            ),
        },
        "cpu_ms_per_cell": {k: common.rnd(1000 * common.median([x.cpu_s for x in v]) / cells, 3) for k, v in f.items()},
        "reference_wrapper_path": None,
    }
    return [
        Figure(
            f"{name}_follow_up",
            f_wall["engine"],
            "s",
            f_wall["floor"],
            f_ratio,
            {
                "floor_name": f"minimal httpx SSE client, same {cells} conversations",
                "target": "ratio <= 1.3 (as a first turn's)",
                "meets_target": None if quick else bool(f_ratio is not None and f_ratio <= 1.3),
                **f_detail,
            },
        ),
        Figure(
            f"{name}_thinking",
            t_wall["engine"],
            "s",
            t_wall["floor"],
            t_wall_ratio,
            {
                "floor_name": f"minimal httpx SSE client, same {cells} streams (thoughts read as text)",
                "target": "ratio <= 1.3",
                "meets_target": None if quick else bool(t_wall_ratio is not None and t_wall_ratio <= 1.3),
                **t_detail,
            },
        ),
        Figure(
            f"{name}_thinking_cpu_per_cell",
            t_cpu["engine"],
            "ms CPU/cell",
            t_cpu["floor"],
            t_cpu_ratio,
            {
                "floor_name": "httpx client CPU/cell",
                "target": "ratio <= 2",
                "meets_target": None if quick else bool(t_cpu_ratio is not None and t_cpu_ratio <= 2),
                **t_detail,
            },
        ),
        Figure(
            f"{name}_wall",
            wall["engine"],
            "s",
            wall["floor"],
            wall_ratio,
            {
                "floor_name": f"minimal httpx SSE client, same {cells} streams",
                "target": "ratio <= 1.3",
                "meets_target": None if quick else bool(wall_ratio is not None and wall_ratio <= 1.3),
                **detail,
            },
        ),
        Figure(
            f"{name}_cpu_per_cell",
            cpu["engine"],
            "ms CPU/cell",
            cpu["floor"],
            cpu_ratio,
            {
                "floor_name": "httpx client CPU/cell",
                "target": "ratio <= 2",
                "meets_target": None if quick else bool(cpu_ratio is not None and cpu_ratio <= 2),
                **detail,
            },
        ),
        Figure(
            f"live_engine_sessions_{sessions}x{per_session}",
            sess["engine"]["p95_s"],
            "s",
            sess["engine"]["alone_s"],
            engine_ratio,
            {
                "floor_name": "the same session alone (ratio = p95 / alone)",
                "target": "ratio <= 3 (engine side of the 24-session target)",
                "meets_target": None if quick else bool(engine_ratio is not None and engine_ratio <= 3),
                "engine": sess["engine"],
                "floor_client": sess["floor"],
                "setup": f"{sessions} concurrent engine runs of {per_session} `long` cells ({words} words over "
                f"{seconds:g} s) in one process, each with its own prompts and max tokens; the floor client's "
                "24 sessions are measured the same way, against the same fake server",
                "command": command,
            },
        ),
    ]
