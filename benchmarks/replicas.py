"""`load_50x_replicas`: 50 visitors at once against one replica, then against two
replicas sharing one Redis (issue 21).

Set-up: `python app.py` processes with `ORBENCH_REDIS_URL` pointing at a
`redis-server` of their own (the cache, budget and secret in Redis, as a
deployment of replicas has them); the fake provider in its own process (an
asyncio server: aiohttp, the `long` answer, 300 words one per SSE event over
2 s, written a tick's worth at a time); the 50 visitors in this process as raw
HTTP calls to `/run` over one aiohttp session (`gradio_http`), each visitor
3 models x 10 hard-1k prompts (one per category) = 30 cells, with its own
seed and max tokens so nobody replays anybody's cached answers. With two
replicas, visitors alternate between them, as sticky sessions behind a load
balancer would spread them.

Value: p95 visit time with 50 at once; floor: one visitor alone on the same
replica (median of 2, after a warm-up visit). Also: p50, lost cells (must be
0), and every process's CPU over the concurrent phase: the app(s), the fake
provider, redis-server and the measuring clients, with the app's CPU per cell.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import common, gradio_http
from .app_server import AppProcess
from .report import Figure, ratio, skipped

MODELS = {"fake-long-a": "long:a", "fake-long-b": "long:b", "fake-long-c": "long:c"}
CATEGORIES: list[str] = []  # all ten of hard-1k
PER_CATEGORY = 1


class RedisProcess:
    """`redis-server` on a free loopback port, nothing persisted."""

    def __init__(self) -> None:
        self.port = common.free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.folder = tempfile.mkdtemp(prefix="orbench-bench-redis-")
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> RedisProcess:
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.proc = subprocess.Popen(
            [*args, "--dir", self.folder], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        import redis

        client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                client.close()
                return self
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not answer within 20 s") from None
                time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            common.stop_process(self.proc)
        shutil.rmtree(self.folder, ignore_errors=True)


async def _visit(session: Any, root: str, seed: int, max_tokens: int) -> tuple[float, int, str | None]:
    """(seconds, finished cells, error) of one visitor's run."""
    start = time.perf_counter()
    try:
        args = gradio_http.run_args(list(MODELS), "hard-1k", CATEGORIES, PER_CATEGORY, seed, max_tokens)
        rows = gradio_http.results(await gradio_http.call(session, root, "run", args)).get("results", [])
        done = sum(1 for r in rows if r.get("verdict") != "error" and not r.get("error"))
        return time.perf_counter() - start, done, None
    except Exception as exc:  # counted, reported
        return time.perf_counter() - start, 0, f"{type(exc).__name__}: {exc}"[:200]


async def _visits(roots: list[str], n: int, seed0: int, tokens0: int) -> list[tuple[float, int, str | None]]:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=900)) as session:
        return await asyncio.gather(*(_visit(session, roots[i % len(roots)], seed0 + i, tokens0 + i) for i in range(n)))


def _phase(name: str, replicas: int, visitors: int, server: Any, redis_server: RedisProcess, tokens0: int) -> Figure:
    cells = len(MODELS) * 10 * PER_CATEGORY
    env = {"ORBENCH_REDIS_URL": redis_server.url}
    apps = [AppProcess(server.base_url, MODELS, max_parallel=40, env=env) for _ in range(replicas)]
    for app in apps:
        app.__enter__()
    try:
        roots = [app.root for app in apps]
        for root in roots:  # warm-up: LiteLLM's import, pools, first-call set-up on every replica
            asyncio.run(_visits([root], 1, 8999, tokens0 - 10))
        solo = [asyncio.run(_visits(roots[:1], 1, 9000 + i, tokens0 - 5 + i))[0] for i in range(2)]
        solo_s = statistics.median(s for s, _, _ in solo)
        app0 = [app.cpu_s() for app in apps]
        server0, redis0 = common.process_cpu_s(server.proc.pid), common.process_cpu_s(redis_server.proc.pid)
        clients0, wall0 = time.process_time(), time.perf_counter()
        with _profiles(apps, name) as profiled:
            results = asyncio.run(_visits(roots, visitors, 100, tokens0))
        wall = time.perf_counter() - wall0
        clients_cpu = time.process_time() - clients0
        app_cpu = [app.cpu_s() - c for app, c in zip(apps, app0, strict=True)]
        server_cpu = common.process_cpu_s(server.proc.pid) - server0
        redis_cpu = common.process_cpu_s(redis_server.proc.pid) - redis0
    finally:
        for app in apps:
            app.__exit__(None, None, None)
    times = sorted(s for s, _, _ in results)
    p50 = statistics.median(times)
    p95 = common.p95(times)
    errors = [e for _, _, e in results if e]
    total_cells = visitors * cells
    detail = {
        "setup": (
            f"{visitors} visitors at once (raw HTTP /run over one aiohttp session), each {len(MODELS)} models x "
            f"10 hard-1k prompts ({cells} cells), against {replicas} app.py replica(s) sharing one redis-server; "
            "fake provider `long` (300 words, one per SSE event, over 2 s) in its own process"
        ),
        "replicas": replicas,
        "visitors": visitors,
        "cells_per_visitor": cells,
        "solo_s": [round(s, 3) for s, _, _ in solo],
        "p50_s": round(p50, 3),
        "p95_s": round(p95, 3),
        "p50_ratio": round(p50 / solo_s, 2) if solo_s else None,
        "wall_s": round(wall, 3),
        "app_cpu_s": [round(c, 3) for c in app_cpu],
        "app_cpu_ms_per_cell": round(1000 * sum(app_cpu) / total_cells, 2),
        "fake_server_cpu_s": round(server_cpu, 3),
        "redis_cpu_s": round(redis_cpu, 3),
        "clients_cpu_s": round(clients_cpu, 3),
        "cpu_total_s": round(sum(app_cpu) + server_cpu + redis_cpu + clients_cpu, 3),
        "lost_cells": total_cells - sum(d for _, d, _ in results),
        **({"profile_top_self": profiled} if profiled else {}),
        "visit_errors": errors[:3],
        "floor_name": "one visitor alone (median of 2)",
        "target": "ratio <= 3",
        "meets_target": bool(p95 <= 3 * solo_s),
    }
    return Figure(name, p95, "s", solo_s, ratio(p95, solo_s), detail)


@contextlib.contextmanager
def _profiles(apps: list[AppProcess], name: str) -> Iterator[dict[str, Any]]:
    """With BENCH_PYSPY=<folder> and py-spy installed, sample every replica during the
    concurrent phase (py-spy record, raw collapsed stacks into the folder) and put
    each one's functions with the most self time in the figure's detail. Off by default:
    the sampler's own CPU would be in the figure."""
    folder = os.environ.get("BENCH_PYSPY")
    tool = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    found: dict[str, Any] = {}
    if not folder or not Path(tool).exists():
        yield found
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    spies = []
    for i, app in enumerate(apps):
        out = Path(folder) / f"{name}-app{i}.txt"
        args = [tool, "record", "--pid", str(app.proc.pid), "--format", "raw", "--rate", "50", "--nonblocking"]
        spies.append(
            (out, subprocess.Popen([*args, "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        )
    try:
        yield found
    finally:
        for out, spy in spies:
            spy.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                spy.wait(timeout=60)
            if out.exists():
                found[out.name] = _top_self(out)


def _top_self(path: Path, n: int = 12) -> list[tuple[str, float]]:
    """The functions with the most self time in a py-spy raw profile (share of samples)."""
    own: Counter[str] = Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frame = stack.rsplit(";", 1)[-1]
        own[frame] += int(count)
        total += int(count)
    return [(frame, round(count / total, 3)) for frame, count in own.most_common(n)] if total else []


def figures(quick: bool, command: str) -> list[Figure]:
    names = ["load_50x_1replica", "load_50x_2replicas"]
    if shutil.which("redis-server") is None:
        return [skipped(n, "s", "redis-server is not installed (apt-get install redis-server)", command) for n in names]
    visitors, words, seconds = (6, 60, 0.5) if quick else (50, 300, 2.0)
    extra = ("--words", str(words), "--long-seconds", str(seconds))
    with common.FakeServerProcess(extra=extra) as server, RedisProcess() as redis_server:
        one = _phase(names[0], 1, visitors, server, redis_server, 1000)
        two = _phase(names[1], 2, visitors, server, redis_server, 1200)
    if quick:
        for fig in (one, two):
            fig.detail["meets_target"] = None
    return [one, two]
