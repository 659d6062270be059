"""Figure 6: the embedded model, 4 concurrent answers vs 4 sequential ones; and
`local_pair_default_run`, the default first run with both embedded models and
settling on, against the same run without settling, with `local_settle_agreement`
(the settle judgement on the embedded models' real answers; see `pair_figures`).

The embedded SmolLM2 server (`embedded.ensure_server()`, llama.cpp in this
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
    return speedup_figures(quick, command) + pair_figures(quick, command)


def speedup_figures(quick: bool, command: str) -> list[Figure]:
    from orbench_play.models import embedded

    if not embedded.is_available():
        return [skipped("local_parallel_speedup", "x", embedded.INSTALL_HINT, command)]
    import psutil

    proc = psutil.Process()
    rss0 = proc.memory_info().rss / 2**20
    t0 = time.perf_counter()
    base = embedded.ensure_server()
    start_s = time.perf_counter() - t0
    rss1 = proc.memory_info().rss / 2**20
    model = embedded.served_model_id()
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
        f"{embedded.slots()} slots, {len(seq)} alternating rounds (time budget), medians; server started in {start_s:.2f} s"
    )
    detail = {
        "setup": setup,
        "command": command,
        "server": embedded.status(),
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


def _default_run(models: tuple, prompts: tuple, settle: bool) -> tuple[float, list]:
    """The playground's default run through the engine: every cell at once, as the page
    sends it (global limit: the models' slots added up), each model's own max tokens."""
    from orbench_play import engine
    from orbench_play.types import GenerationParams, RunConfig

    config = RunConfig(
        models=models,
        prompts=prompts,
        params=GenerationParams(max_tokens=None),
        use_cache=False,
        concurrency=max(16, sum(m.max_concurrency for m in models)),
        settle=settle,
    )
    t0 = time.perf_counter()
    results = asyncio.run(engine.collect(config))
    return time.perf_counter() - t0, results


def _per_model(results: list) -> dict:
    out: dict = {}
    for m in dict.fromkeys(r.model for r in results):
        rs = [r for r in results if r.model == m]
        out[m] = {
            "cells": len(rs),
            "errors": sum(r.verdict == "error" for r in rs),
            "refused_hard_1k": sum(
                r.split == "hard-1k" and r.verdict in ("direct_refusal", "indirect_refusal") for r in rs
            ),
            "refused_toxic": sum(
                r.split == "toxic" and r.verdict in ("direct_refusal", "indirect_refusal") for r in rs
            ),
            "completion_tokens": sum(r.completion_tokens or 0 for r in rs),
            "settled": sum(bool(r.settled) for r in rs),
            "saved_tokens_at_most": sum(r.saved_tokens or 0 for r in rs),
            "slowest_s": common.rnd(max((r.latency_s or 0.0) for r in rs)),
        }
    return out


def _replayed(results: list) -> dict:
    """The whole answers of a run replayed word by word through the settle judgement,
    as `make eval` replays labelled ones: per model, the settled verdict against the
    whole answer's, and the share of output not generated."""
    from orbench_play.evaluation.data import LabelledRow
    from orbench_play.evaluation.settling import settle_figures

    out: dict = {}
    for m in dict.fromkeys(r.model for r in results):
        rows = [
            LabelledRow(r.prompt, r.response, "direct_answer", m, clear=False)
            for r in results
            if r.model == m and not r.error
        ]
        f = settle_figures(rows)
        out[m] = {
            "answers": f.answers,
            "settled": f.settled,
            "settled_eq_whole_binary": common.rnd(f.binary),
            "settled_eq_whole_3class": common.rnd(f.classes),
            "median_saved_share": common.rnd(f.median_saved),
            "median_saved_share_of_settled": common.rnd(f.median_saved_settled),
            "saved_share_all_output": common.rnd(f.saved_share),
            "_figures": f,
        }
    return out


def pair_figures(quick: bool, command: str) -> list[Figure]:
    """`local_pair_default_run`: the default first run (1 prompt per category of hard-1k
    and toxic) × both embedded models at once, settling on (as the page runs them),
    against the same run without settling (every answer to its end or its cap).
    Target: within 90 s on 2 cores. The load average is reported: on a shared machine
    it says more than the figure.

    `local_settle_agreement`: the unsettled run's real answers replayed through the
    settle judgement: the settled verdict against the whole answer's (the bar of
    `make eval`: 99% answer vs refusal, 98% three classes), and the output saved."""
    import os

    from orbench_play import data
    from orbench_play.models import embedded, embedded_spec

    name = "local_pair_default_run"
    missing = [m.install_hint for m in embedded.MODELS.values() if not embedded.is_available(m.name)]
    if missing:
        return [skipped(name, "s", missing[0], command), skipped("local_settle_agreement", "%", missing[0], command)]
    import psutil

    proc = psutil.Process()
    smol, qwen = (embedded_spec(n) for n in embedded.MODELS)
    picked = data.sample_splits(None, per_category=1, seed=0)
    prompts = tuple(picked.prompts)[: 4 if quick else None]
    t0 = time.perf_counter()
    for m in embedded.MODELS:
        embedded.ensure_server(m)
    start_s = time.perf_counter() - t0
    load_whole = os.getloadavg()
    whole_s, whole = _default_run((smol, qwen), prompts, settle=False)
    load_before = os.getloadavg()
    cpu0 = proc.cpu_times()
    with common.RssSampler() as rss:
        pair_s, pair = _default_run((smol, qwen), prompts, settle=True)
    cpu1 = proc.cpu_times()
    load_after = os.getloadavg()
    replayed = _replayed(whole)
    settings = {
        m: {
            "slots": embedded.slots(m),
            "threads": embedded.threads(m),
            "max_tokens": embedded.get(m).max_tokens,
        }
        for m in embedded.MODELS
    }
    figs = {k: v.pop("_figures") for k, v in replayed.items()}
    settled = sum(f.settled for f in figs.values())
    same = sum(f.same_binary for f in figs.values())
    same3 = sum(f.same_classes for f in figs.values())
    tokens_whole = sum(r.completion_tokens or 0 for r in whole)
    tokens_settled = sum(r.completion_tokens or 0 for r in pair)
    setup = (
        f"{len(prompts)} prompts (hard-1k + toxic, 1 per category, seed 0) × 2 embedded models, no cache, each "
        f"model's own max tokens; servers started beforehand in {start_s:.1f} s"
    )
    return [
        Figure(
            name,
            pair_s,
            "s",
            whole_s,
            ratio(pair_s, whole_s),
            {
                "floor_name": "the same run without settling (whole answers), just before",
                "ratio_means": "settling run time / whole-answer run time",
                "setup": setup,
                "settings": settings,
                "target": "value <= 90 s",
                "meets_target": None if quick else pair_s <= 90,
                "load_average_whole_run": [round(x, 2) for x in load_whole],
                "load_average_before": [round(x, 2) for x in load_before],
                "load_average_after": [round(x, 2) for x in load_after],
                "process_cpu_s": round((cpu1.user + cpu1.system) - (cpu0.user + cpu0.system), 1),
                "peak_rss_mb": round(rss.peak_mb or 0, 1),
                "settling": _per_model(pair),
                "whole": _per_model(whole),
                "output_tokens_settling_vs_whole": [tokens_settled, tokens_whole],
                "command": command,
            },
        ),
        Figure(
            "local_settle_agreement",
            100 * same / settled if settled else None,
            "%",
            None,
            None,
            {
                "what": "the whole answers of the run without settling, replayed word by word through the "
                "settle judgement: settled verdict = whole answer's verdict (answer vs refusal) over the "
                "answers that settled; per model also three classes and the output not generated",
                "three_classes_pct": common.rnd(100 * same3 / settled) if settled else None,
                "settled_answers": settled,
                "per_model": replayed,
                "target": "binary >= 99%, three classes >= 98%",
                "meets_target": None
                if quick or not settled
                else bool(same / settled >= 0.99 and same3 / settled >= 0.98),
                "real_output_tokens": {"settling_run": tokens_settled, "whole_run": tokens_whole},
                "command": command,
            },
        ),
    ]
