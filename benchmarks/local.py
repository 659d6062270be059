"""Figure 6: the embedded model, 4 concurrent answers vs 4 sequential ones.

The embedded SmolLM2 server (`local_model.ensure_server()`, llama.cpp in this
process) answers 4 OR-Bench prompts with `max_tokens` 64, `temperature` 0 and
`ignore_eos` (so every answer is exactly 64 tokens and both sides generate the
same work): first one after the other (the floor), then all 4 at once, round
after round. ratio = concurrent tokens/s / sequential tokens/s (target >= 1.5
from the server's parallel slots). RSS: this process before the server starts,
after, and at peak.
"""

from __future__ import annotations

import asyncio
import time

from . import common
from .report import Figure, ratio, skipped


async def _one(client, url: str, model: str, text: str, max_tokens: int) -> int:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": text}],
        "max_tokens": max_tokens,
        "temperature": 0,
        "ignore_eos": True,
    }
    r = await client.post(url, json=body, headers={"Authorization": "Bearer none"})
    r.raise_for_status()
    return int((r.json().get("usage") or {}).get("completion_tokens") or 0)


async def _batch(base_url: str, model: str, texts: list[str], max_tokens: int, parallel: bool) -> tuple[float, int]:
    import httpx

    async with httpx.AsyncClient(timeout=300) as client:
        url = base_url + "/chat/completions"
        t0 = time.perf_counter()
        if parallel:
            toks = await asyncio.gather(*(_one(client, url, model, t, max_tokens) for t in texts))
        else:
            toks = [await _one(client, url, model, t, max_tokens) for t in texts]
        return time.perf_counter() - t0, sum(toks)


def figures(quick: bool, command: str) -> list[Figure]:
    from orbench_play import local_model

    if not local_model.is_available():
        return [skipped("local_parallel_speedup", "x", local_model.INSTALL_HINT, command)]
    import psutil

    proc = psutil.Process()
    rss0 = proc.memory_info().rss / 2**20
    t0 = time.perf_counter()
    base = local_model.ensure_server()
    start_s = time.perf_counter() - t0
    rss1 = proc.memory_info().rss / 2**20
    model = local_model.served_model_id()
    max_tokens = 16 if quick else 64
    rounds = 1 if quick else 3
    texts = [p.text for p in common.prompts(4)]
    asyncio.run(_batch(base, model, texts[:1], 8, False))  # warm-up
    seq, par = [], []
    budget = time.monotonic() + (30 if quick else 60)  # a loaded machine can make llama.cpp crawl
    with common.RssSampler() as rss:
        for _ in range(rounds):
            if seq and time.monotonic() > budget:
                break
            seq.append(asyncio.run(_batch(base, model, texts, max_tokens, False)))
            par.append(asyncio.run(_batch(base, model, texts, max_tokens, True)))
    seq_tps = common.median([tok / dt for dt, tok in seq])
    par_tps = common.median([tok / dt for dt, tok in par])
    r = ratio(par_tps, seq_tps)
    setup = (
        f"4 hard-1k prompts, max_tokens {max_tokens}, temperature 0, ignore_eos, "
        f"{local_model.slots()} slots, {len(seq)} alternating rounds (time budget), medians; server started in {start_s:.2f} s"
    )
    detail = {
        "setup": setup,
        "command": command,
        "server": local_model.status(),
        "rss_before_server_mb": round(rss0, 1),
        "rss_after_server_mb": round(rss1, 1),
        "peak_rss_mb": round(rss.peak_mb or 0, 1),
        "raw_sequential": [{"wall_s": common.rnd(dt), "tokens": tok} for dt, tok in seq],
        "raw_concurrent": [{"wall_s": common.rnd(dt), "tokens": tok} for dt, tok in par],
    }
    return [
        Figure(
            "local_parallel_speedup",
            par_tps,
            "tokens/s",
            seq_tps,
            r,
            {
                "floor_name": "same 4 answers one after the other",
                "ratio_means": "concurrent tokens/s / sequential tokens/s (higher is better)",
                "concurrent_wall_s": common.rnd(common.median([dt for dt, _ in par])),
                "sequential_wall_s": common.rnd(common.median([dt for dt, _ in seq])),
                "target": "ratio >= 1.5",
                "meets_target": None if quick else bool(r is not None and r >= 1.5),
                **detail,
            },
        ),
        Figure(
            "local_peak_rss",
            rss.peak_mb,
            "MB",
            rss0,
            ratio(rss.peak_mb, rss0),
            {"floor_name": "process RSS before the model server started", "target": "report", **detail},
        ),
    ]
