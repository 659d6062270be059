"""`load_24x_long`: 24 visitors at once, at real answer length.

Set-up: `python app.py` in its own process, the fake server in a third
process streaming the `long` answer (300 words, one word per chunk, over
2 s). Each session is a `gradio_client` calling `/run` with 2 models x 4
categories x 2 prompts (16 cells, as `tests/test_load.py`), with its own
`max_tokens` so no session replays another's cached answers.

Value: the p95 session time with 24 sessions at once; floor: one session
alone (median of two, after a warm-up run). Also reported: p50, the app's CPU
seconds over the concurrent phase, what its garbage collector cost in that
phase (`app_gc`: app.py runs under benchmarks/gc_probe.py), and lost cells
(must be 0).
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import Counter

from . import common
from .app_server import AppProcess
from .report import Figure, ratio, skipped

CATEGORIES = ["privacy", "illegal", "harmful", "deception"]
PER_CATEGORY = 2
MODELS = {"fake-long": "long", "fake-long-b": "long:b"}


CELL_ERRORS: Counter[str] = Counter()
"""Why cells failed, by the start of their message (a figure's detail)."""


def _session(
    url: str, seed: int, max_tokens: int, models: dict[str, str] | None = None, client_timeout: float | None = None
) -> tuple[float, int, str | None]:
    """(seconds, finished cells, error) of one visitor's run (of `models`, default MODELS);
    `client_timeout`: gradio_client's HTTP time limit (its own default when None)."""
    from gradio_client import Client

    names = list(models or MODELS)
    start = time.perf_counter()
    phase = "connect"
    try:
        extra = {} if client_timeout is None else {"httpx_kwargs": {"timeout": client_timeout}}
        # download_files=False: the figure is the run, not file downloads
        client = Client(url, verbose=False, download_files=False, **extra)
        phase = "run"
        out = client.predict(names, "hard-1k", CATEGORIES, PER_CATEGORY, seed, max_tokens, api_name="/run")
        rows = out[6]["run"]["results"]
        done = sum(1 for r in rows if r.get("verdict") != "error" and not r.get("error"))
        CELL_ERRORS.update(str(r["error"])[:48] for r in rows if r.get("error"))
        return time.perf_counter() - start, done, None
    except Exception as exc:  # counted, reported
        import traceback

        where = traceback.extract_tb(exc.__traceback__)[-1]
        return (
            time.perf_counter() - start,
            0,
            f"{phase}: {type(exc).__name__}: {exc} ({where.filename.rsplit('/', 1)[-1]}:{where.lineno})",
        )


def _gc_phase(before: dict | None, after: dict | None) -> dict | None:
    """What the app's cyclic garbage collector cost over the concurrent phase
    (benchmarks/gc_probe.py): full collections, their CPU time in all and the
    longest (each holds the GIL: every stream waits), and all generations' CPU time."""
    if before is None or after is None:
        return None
    was, now = before["generations"], after["generations"]
    return {
        "full_collections": now["2"]["collections"] - was["2"]["collections"],
        "full_cpu_ms": round(now["2"]["cpu_ms"] - was["2"]["cpu_ms"], 1),
        "longest_full_cpu_ms": now["2"]["longest_cpu_ms_since_last_report"],
        "all_generations_cpu_ms": round(sum(now[g]["cpu_ms"] - was[g]["cpu_ms"] for g in now), 1),
        "frozen_objects": after["frozen_objects"],
    }


def figures(quick: bool, command: str) -> list[Figure]:
    name = "load_24x_long"
    sessions, words, seconds = (4, 60, 0.5) if quick else (24, 300, 2.0)
    cells = len(MODELS) * len(CATEGORIES) * PER_CATEGORY
    try:
        import gradio_client  # noqa: F401 -- only checking that it is there
    except ImportError:
        return [skipped(name, "x", "gradio_client is not installed", command)]
    extra = ("--words", str(words), "--long-seconds", str(seconds))
    CELL_ERRORS.clear()
    with common.FakeServerProcess(extra=extra) as server, AppProcess(server.base_url, MODELS, gc_probe=True) as app:
        url = app.root + "/"
        _session(url, 8999, 1500)  # warm-up: imports, pools, first-call set-up
        solo = [_session(url, 9000 + i, 1600 + i) for i in range(2)]
        solo_s = statistics.median(s for s, _, _ in solo)
        results: list[tuple[float, int, str | None]] = [(0.0, 0, "not run")] * sessions
        barrier = threading.Barrier(sessions)

        def visitor(i: int) -> None:
            barrier.wait()
            results[i] = _session(url, 100 + i, 1700 + i)

        threads = [threading.Thread(target=visitor, args=(i,)) for i in range(sessions)]
        gc0 = app.gc_report()
        cpu0, wall0 = app.cpu_s(), time.perf_counter()
        server0, clients0 = common.process_cpu_s(server.proc.pid), time.process_time()
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)
        wall, app_cpu = time.perf_counter() - wall0, app.cpu_s() - cpu0
        server_cpu = common.process_cpu_s(server.proc.pid) - server0
        clients_cpu = time.process_time() - clients0
        gc1 = app.gc_report()
    times = sorted(s for s, _, _ in results)
    p50 = statistics.median(times)
    p95 = common.p95(times)
    errors = [e for _, _, e in results if e]
    detail = {
        "setup": (
            f"{sessions} gradio_client sessions at once, each /run with {len(MODELS)} models x "
            f"{len(CATEGORIES)} categories x {PER_CATEGORY} hard-1k prompts ({cells} cells); fake server `long` "
            f"({words} words, one per chunk, over {seconds:g} s) in its own process; app.py in its own process"
        ),
        "sessions": sessions,
        "cells_per_session": cells,
        "solo_s": [round(s, 3) for s, _, _ in solo],
        "p50_s": round(p50, 3),
        "p95_s": round(p95, 3),
        "wall_s": round(wall, 3),
        "app_cpu_s": round(app_cpu, 3),
        "app_cpu_ms_per_cell": round(1000 * app_cpu / (sessions * cells), 2),
        # The other two users of the 2 cores in the same phase: the fake provider and
        # the 24 gradio_client sessions (this process).
        "fake_server_cpu_s": round(server_cpu, 3),
        "clients_cpu_s": round(clients_cpu, 3),
        "app_gc": _gc_phase(gc0, gc1),
        "lost_cells": sessions * cells - sum(d for _, d, _ in results),
        "session_errors": errors[:3],
        "cell_errors": dict(CELL_ERRORS.most_common(4)),
        "floor_name": "one session alone (median of 2)",
        "target": "ratio <= 3",
        "meets_target": None if quick else bool(p95 <= 3 * solo_s),
    }
    return [Figure(name, p95, "s", solo_s, ratio(p95, solo_s), detail)]
