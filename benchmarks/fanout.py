"""Figures 1 and 2: fan-out overhead and scale.

N prompts x M models streamed through `engine.collect` against the fake OpenAI
server (its `slow` behaviour: each answer spread over `delay` s in `chunks`
chunks), running in a separate process so that its CPU is not ours. The floor
is the same requests made concurrently, in this process, by a minimal httpx
client and a minimal aiohttp client that parse the SSE stream and join the text
(the faster of the two is the floor). Floor and engine alternate, round after
round, so that both see the same machine load.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from . import common
from .report import Figure, ratio


def _config(prompts, n_models: int, base_url: str, concurrency: int):
    return common.fake_run_config(prompts, "slow", n_models, base_url, concurrency, timeout_s=300)


async def bare_litellm(base_url: str, work: list[tuple[str, str]]) -> list[str]:
    """Reference, not the floor: LiteLLM alone (same kwargs as the engine, no engine)."""
    import litellm

    async def one(model: str, text: str) -> str:
        resp = await litellm.acompletion(
            model="openai/" + model,
            api_base=base_url,
            api_key="sk-fake",
            messages=[{"role": "user", "content": text}],
            stream=True,
            stream_options={"include_usage": True},
            max_tokens=512,
            max_retries=0,
            num_retries=0,
            timeout=300,
        )
        out = []
        async for chunk in resp:
            if chunk.choices and chunk.choices[0].delta is not None and chunk.choices[0].delta.content:
                out.append(chunk.choices[0].delta.content)
        return "".join(out)

    return await asyncio.gather(*(one(m, t) for m, t in work))


async def _engine(config):
    from orbench_play import engine

    return await engine.collect(config)


def warm_up(server: common.FakeServerProcess) -> dict[str, float]:
    """Import LiteLLM and open connections once, outside any timed run; report the import."""
    t0 = time.perf_counter()
    c0 = time.process_time()
    import litellm  # noqa: F401 -- imported only to time the import

    from orbench_play import engine  # noqa: F401 -- likewise

    imp = (time.perf_counter() - t0, time.process_time() - c0)
    cfg = _config(common.prompts(2), 2, server.base_url, 4)
    asyncio.run(_engine(cfg))
    asyncio.run(common.floor_httpx(server.base_url, common.floor_work(cfg), 4))
    asyncio.run(common.floor_aiohttp(server.base_url, common.floor_work(cfg), 4))
    return {"litellm_import_wall_s": round(imp[0], 3), "litellm_import_cpu_s": round(imp[1], 3)}


def run_pair(
    server: common.FakeServerProcess,
    n_prompts: int,
    n_models: int,
    concurrency: int,
    rounds: int,
    rss: bool = False,
    litellm_ref: bool = False,
) -> dict[str, Any]:
    """Alternate floor clients and engine `rounds` times; return the raw samples."""
    cfg = _config(common.prompts(n_prompts), n_models, server.base_url, concurrency)
    work = common.floor_work(cfg)
    cells = len(work)
    out: dict[str, list] = {"httpx": [], "aiohttp": [], "engine": [], **({"litellm_alone": []} if litellm_ref else {})}
    errors: list[str] = []
    for _ in range(rounds):
        s, texts = common.measure(common.floor_httpx, server.base_url, work, concurrency)
        assert len(texts) == cells and all(texts)
        out["httpx"].append(s)
        s, texts = common.measure(common.floor_aiohttp, server.base_url, work, concurrency)
        assert len(texts) == cells and all(texts)
        out["aiohttp"].append(s)
        s, results = common.measure(_engine, cfg, rss=rss)
        bad = [r.error for r in results if not r.ok]
        if bad or len(results) != cells:
            errors.append(f"{len(bad)} failed cells of {len(results)}: {bad[:2]}")
        out["engine"].append(s)
        if litellm_ref:
            s, texts = common.measure(bare_litellm, server.base_url, work)
            out["litellm_alone"].append(s)
    return {"cells": cells, "samples": out, "errors": errors}


def _summary(raw: dict[str, Any]) -> dict[str, Any]:
    cells = raw["cells"]
    s = raw["samples"]
    med = {k: common.median([x.wall_s for x in v]) for k, v in s.items()}
    cpu = {k: common.median([x.cpu_s for x in v]) for k, v in s.items()}
    floor_client = "httpx" if med["httpx"] <= med["aiohttp"] else "aiohttp"
    return {
        "cells": cells,
        "engine_wall_s": med["engine"],
        "floor_wall_s": med[floor_client],
        "floor_client": floor_client,
        "engine_cpu_s": cpu["engine"],
        "floor_cpu_s": cpu[floor_client],
        "engine_cpu_ms_per_cell": 1000 * cpu["engine"] / cells,
        "floor_cpu_ms_per_cell": 1000 * cpu[floor_client] / cells,
        "raw": {
            k: [
                {
                    "wall_s": common.rnd(x.wall_s),
                    "cpu_s": common.rnd(x.cpu_s),
                    **(
                        {
                            "peak_rss_mb": round(x.peak_rss_mb, 1),
                            "rss_before_mb": round(x.extra.get("rss_before_mb", 0), 1),
                        }
                        if x.peak_rss_mb
                        else {}
                    ),
                }
                for x in v
            ]
            for k, v in s.items()
        },
        "peak_rss_mb": max((x.peak_rss_mb or 0) for x in s["engine"]) or None,
        "rss_before_mb": min((x.extra.get("rss_before_mb") or 0) for x in s["engine"]) or None,
        "errors": raw["errors"],
        **(
            {
                "litellm_alone_wall_s": med["litellm_alone"],
                "litellm_alone_cpu_ms_per_cell": 1000 * cpu["litellm_alone"] / cells,
            }
            if "litellm_alone" in med
            else {}
        ),
    }


def figures_fanout(quick: bool, command: str) -> tuple[list[Figure], dict[str, Any]]:
    n_prompts, n_models = (4, 2) if quick else (16, 4)
    delay, chunks = (0.3, 5) if quick else (1.0, 20)
    rounds = 1 if quick else 3
    concurrency = n_prompts * n_models
    with common.FakeServerProcess(delay, chunks) as server:
        warm = warm_up(server)
        sm = _summary(run_pair(server, n_prompts, n_models, concurrency, rounds, litellm_ref=True))
    setup = (
        f"{n_prompts} prompts x {n_models} models, fake server ({server.command}) in its own process, "
        f"engine concurrency {concurrency} (per model {concurrency}), no cache, {rounds} alternating rounds, medians"
    )
    wall_ratio = ratio(sm["engine_wall_s"], sm["floor_wall_s"])
    common_detail = {
        "setup": setup,
        "command": command,
        "errors": sm["errors"],
        "reference_litellm_alone": {  # not the floor: what LiteLLM costs without the engine
            "wall_s": common.rnd(sm.get("litellm_alone_wall_s")),
            "cpu_ms_per_cell": common.rnd(sm.get("litellm_alone_cpu_ms_per_cell"), 2),
        },
        **warm,
    }
    figs = [
        Figure(
            "fanout_wall",
            sm["engine_wall_s"],
            "s",
            sm["floor_wall_s"],
            wall_ratio,
            {
                "floor_name": f"minimal {sm['floor_client']} client, same {sm['cells']} streams",
                "engine_wall_s": common.rnd(sm["engine_wall_s"]),
                "floor_wall_s": common.rnd(sm["floor_wall_s"]),
                "target": "ratio <= 1.3",
                "meets_target": None if quick else bool(wall_ratio is not None and wall_ratio <= 1.3),
                "raw": sm["raw"],
                **common_detail,
            },
        ),
        Figure(
            "fanout_cpu_per_cell",
            sm["engine_cpu_ms_per_cell"],
            "ms CPU/cell",
            sm["floor_cpu_ms_per_cell"],
            ratio(sm["engine_cpu_ms_per_cell"], sm["floor_cpu_ms_per_cell"]),
            {
                "floor_name": f"{sm['floor_client']} client CPU/cell",
                "engine_cpu_s": common.rnd(sm["engine_cpu_s"]),
                "floor_cpu_s": common.rnd(sm["floor_cpu_s"]),
                "target": "report (LiteLLM alone ~25 ms)",
                **common_detail,
            },
        ),
    ]
    return figs, sm


def _linear(growth_vs_64: float | None, vs_prev: dict, kind: str) -> bool:
    """Against the previous size at the same concurrency when there is one, else against 64 cells."""
    for k, v in vs_prev.items():
        if k.startswith(kind):
            return v is not None and v <= 1.3
    return growth_vs_64 is not None and growth_vs_64 <= 1.3


def figures_scale(quick: bool, command: str, base: dict[str, Any] | None = None) -> list[Figure]:
    """256 and 1,024 cells (quick: 16 and 32), compared with the floor at the same
    concurrency and with the 64-cell CPU/cell (per-cell growth)."""
    n_models = 2 if quick else 4
    sizes = [(8, 8), (16, 16)] if quick else [(64, 256), (256, 256)]  # (prompts, concurrency)
    delay, chunks = (0.3, 5) if quick else (1.0, 20)
    figs: list[Figure] = []
    with common.FakeServerProcess(delay, chunks) as server:
        warm = warm_up(server)
        if base is None:  # the 64-cell reference for per-cell growth, measured here too
            base = _summary(run_pair(server, 4 if quick else 16, n_models, 8 if quick else 64, 1))
        prev = None
        for n_prompts, conc in sizes:
            rounds = 1 if quick or n_prompts * n_models > 256 else 2  # 1,024 cells: one round (time budget)
            sm = _summary(run_pair(server, n_prompts, n_models, conc, rounds, rss=True))
            n = sm["cells"]
            vs_prev = {}
            if prev is not None:  # same concurrency, 4x the cells: linear means both ratios ~1
                k = n / prev["cells"]
                vs_prev = {
                    f"wall_per_cell_vs_{prev['cells']}_cells": common.rnd(
                        sm["engine_wall_s"] / k / prev["engine_wall_s"], 3
                    ),
                    f"cpu_per_cell_vs_{prev['cells']}_cells": common.rnd(
                        sm["engine_cpu_ms_per_cell"] / prev["engine_cpu_ms_per_cell"], 3
                    ),
                }
            prev = sm
            per_model = conc  # ModelSpec.max_concurrency
            setup = (
                f"{n_prompts} prompts x {n_models} models = {n} cells, global concurrency {conc} "
                f"(per model {per_model}), fake server ({server.command}), no cache, {rounds} alternating rounds, medians"
            )
            wall_r = ratio(sm["engine_wall_s"], sm["floor_wall_s"])
            growth_cpu = ratio(sm["engine_cpu_ms_per_cell"], base["engine_cpu_ms_per_cell"])
            waves = -(-n // conc)
            # "Grows no worse than linearly": wall time per cell against the 64-cell
            # run (CPU-bound on LiteLLM, so more cells in one wave take longer).
            growth_wall = ratio(sm["engine_wall_s"] / n, base["engine_wall_s"] / base["cells"])
            detail = {"setup": setup, "command": command, "errors": sm["errors"], **vs_prev, **warm}
            figs.append(
                Figure(
                    f"scale_{n}_wall",
                    sm["engine_wall_s"],
                    "s",
                    sm["floor_wall_s"],
                    wall_r,
                    {
                        "floor_name": f"minimal {sm['floor_client']} client, same {n} streams",
                        "engine_wall_s": common.rnd(sm["engine_wall_s"]),
                        "floor_wall_s": common.rnd(sm["floor_wall_s"]),
                        "waves": waves,
                        "wall_per_cell_vs_64_cells": common.rnd(growth_wall, 3),
                        "target": "linear: wall per cell <= 1.3x the smaller run's",
                        "meets_target": None if quick else bool(_linear(growth_wall, vs_prev, "wall")),
                        "raw": sm["raw"],
                        **detail,
                    },
                )
            )
            figs.append(
                Figure(
                    f"scale_{n}_cpu_per_cell",
                    sm["engine_cpu_ms_per_cell"],
                    "ms CPU/cell",
                    sm["floor_cpu_ms_per_cell"],
                    ratio(sm["engine_cpu_ms_per_cell"], sm["floor_cpu_ms_per_cell"]),
                    {
                        "floor_name": f"{sm['floor_client']} client CPU/cell",
                        "engine_cpu_s": common.rnd(sm["engine_cpu_s"]),
                        "floor_cpu_s": common.rnd(sm["floor_cpu_s"]),
                        "engine_cpu_ms_per_cell_at_64": common.rnd(base["engine_cpu_ms_per_cell"], 3),
                        "cpu_per_cell_growth_vs_64": common.rnd(growth_cpu, 3),
                        "target": "CPU/cell <= 1.3x smaller run",
                        "meets_target": None if quick else bool(_linear(growth_cpu, vs_prev, "cpu")),
                        **detail,
                    },
                )
            )
            figs.append(
                Figure(
                    f"scale_{n}_peak_rss",
                    sm["peak_rss_mb"],
                    "MB",
                    sm["rss_before_mb"],
                    ratio(sm["peak_rss_mb"], sm["rss_before_mb"]),
                    {
                        "floor_name": "process RSS just before the run",
                        "target": "report",
                        **detail,
                    },
                )
            )
    return figs
