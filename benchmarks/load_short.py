"""`load_30x_short`: 30 API sessions at once with short answers (issue 25's load figure).

Set-up: `python app.py` in its own process, the fake server in a third
(`slow`: the ~200-character answer in 10 chunks over 0.5 s). Each session is a
`gradio_client` calling `/run` with 2 models x 4 categories x 2 prompts
(8 prompts x 2 models = 16 cells), with its own `max_tokens` so no session
replays another's cached answers.

Value: the p95 session time with 30 sessions at once (of the sessions that
finished; failed ones are counted apart); floor: one session alone (median of
three, after a warm-up run). Also reported: p50, each
process's CPU seconds over the concurrent phase (the app, the fake server,
this process with the 30 clients), the 1-minute load average before and
after (the machine may be shared), lost cells, and, when `py-spy` is on the
PATH or beside the interpreter, where the app's Python time went during the
concurrent phase (`--gil`: the thread holding the GIL, so idle threads and
waits are not counted): the share of its samples by package, by the
innermost of our code / Gradio / LiteLLM that was running, and the top
functions by their own time.
"""

from __future__ import annotations

import collections
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import common
from .app_server import AppProcess
from .load import CATEGORIES, CELL_ERRORS, PER_CATEGORY, _session
from .report import Figure, ratio, skipped

MODELS = {"fake-short-a": "slow:a", "fake-short-b": "slow:b"}
CLIENT_TIMEOUT_S = 300.0
"""gradio_client's HTTP time limit here: its default (seconds) cut sessions off on a busy
machine; the figure is how long a session takes, not whether the client gives up."""


def _loadavg() -> float | None:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _py_spy() -> str | None:
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else shutil.which("py-spy")


def _where(frame: str) -> str:
    """The package a py-spy frame belongs to: `function (gradio/blocks.py:123)` is `gradio`,
    `orbench_play/engine/streams.py` is `orbench_play.engine`, `asyncio/events.py` is `asyncio`
    (py-spy shows paths from the folder they were imported from)."""
    path = frame.rpartition(" (")[2].rstrip(")").rsplit(":", 1)[0]
    if "site-packages/" in path:
        path = path.split("site-packages/", 1)[1]
    elif "/lib/python" in path:
        path = path.split("/lib/python", 1)[1].split("/", 1)[-1]
    elif "/orbench_play/" in path:
        path = "orbench_play/" + path.split("/orbench_play/", 1)[1]
    parts = [part.removesuffix(".py") for part in path.strip("/").split("/")]
    if parts[0] == "orbench_play" and len(parts) > 1:
        return f"orbench_play.{parts[1]}"
    return parts[0] or "?"


def summarise_profile(raw: Path, top: int = 8) -> dict:
    """py-spy's raw (collapsed) stacks as shares: by the package of the innermost frame,
    by the innermost orbench_play / gradio / litellm frame, and the top functions by self time."""
    by_package: collections.Counter[str] = collections.Counter()
    by_owner: collections.Counter[str] = collections.Counter()
    by_function: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        try:
            count = int(count_text)
        except ValueError:
            continue
        frames = [f for f in stack.split(";") if "(" in f]
        if not frames:
            continue
        total += count
        leaf = frames[-1]
        by_package[_where(leaf)] += count
        by_function[leaf.split(" (", 1)[0] + " · " + _where(leaf)] += count
        owner = next(
            (w for w in map(_where, reversed(frames)) if w.split(".")[0] in ("orbench_play", "gradio", "litellm")),
            "other",
        )
        by_owner[owner.split(".")[0] if owner.startswith(("gradio", "litellm")) else owner] += count

    def shares(counter: collections.Counter[str]) -> dict[str, float]:
        return {k: round(100 * v / total, 1) for k, v in counter.most_common(top)} if total else {}

    return {
        "samples": total,
        "by_package_pct": shares(by_package),
        "by_caller_pct": shares(by_owner),
        "top_self_pct": shares(by_function),
    }


def figures(quick: bool, command: str) -> list[Figure]:
    name = "load_30x_short"
    sessions = 6 if quick else 30
    cells = len(MODELS) * len(CATEGORIES) * PER_CATEGORY
    try:
        import gradio_client  # noqa: F401 -- only checking that it is there
    except ImportError:
        return [skipped(name, "x", "gradio_client is not installed", command)]
    CELL_ERRORS.clear()
    spy, profile = _py_spy(), None
    with (
        common.FakeServerProcess(delay=0.5, chunks=10) as server,
        AppProcess(server.base_url, MODELS) as app,
        tempfile.TemporaryDirectory(prefix="orbench-bench-spy-") as spy_dir,
    ):
        url = app.root + "/"
        _session(url, 8999, 1500, MODELS, CLIENT_TIMEOUT_S)  # warm-up: imports, pools, first-call set-up
        solo = [_session(url, 9000 + i, 1600 + i, MODELS, CLIENT_TIMEOUT_S) for i in range(3)]
        solo_s = statistics.median(s for s, _, _ in solo)
        results: list[tuple[float, int, str | None]] = [(0.0, 0, "not run")] * sessions
        barrier = threading.Barrier(sessions + 1)

        def visitor(i: int) -> None:
            barrier.wait()
            results[i] = _session(url, 100 + i, 1700 + i, MODELS, CLIENT_TIMEOUT_S)

        threads = [threading.Thread(target=visitor, args=(i,)) for i in range(sessions)]
        for t in threads:
            t.start()
        raw = Path(spy_dir) / "app.txt"
        recorder = None
        if spy is not None and app.proc is not None:
            recorder = subprocess.Popen(
                [spy, "record", "--pid", str(app.proc.pid), "--format", "raw", "--rate", "97", "--gil",
                 "--output", str(raw)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            )  # fmt: skip
            time.sleep(1.0)  # attached before the sessions start
        load_before = _loadavg()
        cpu0, wall0 = app.cpu_s(), time.perf_counter()
        server0, clients0 = common.process_cpu_s(server.proc.pid), time.process_time()
        barrier.wait()
        for t in threads:
            t.join(600)
        wall, app_cpu = time.perf_counter() - wall0, app.cpu_s() - cpu0
        server_cpu = common.process_cpu_s(server.proc.pid) - server0
        clients_cpu = time.process_time() - clients0
        load_after = _loadavg()
        if recorder is not None:
            recorder.send_signal(signal.SIGINT)
            try:
                _, err = recorder.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                recorder.kill()
                _, err = recorder.communicate()
            if raw.exists():
                profile = summarise_profile(raw)
            else:
                profile = {"error": (err or b"").decode(errors="replace")[-300:]}
    times = sorted(s for s, _, e in results if not e) or [0.0]
    p50 = statistics.median(times)
    p95 = common.p95(times)
    errors = [e for _, _, e in results if e]
    detail = {
        "setup": (
            f"{sessions} gradio_client sessions at once, each /run with {len(MODELS)} models x "
            f"{len(CATEGORIES)} categories x {PER_CATEGORY} hard-1k prompts ({cells} cells); fake server `slow` "
            "(~200 characters in 10 chunks over 0.5 s) in its own process; app.py in its own process"
        ),
        "sessions": sessions,
        "cells_per_session": cells,
        "solo_s": [round(s, 3) for s, _, _ in solo],
        "p50_s": round(p50, 3),
        "p95_s": round(p95, 3),
        "p50_ratio": round(p50 / solo_s, 2) if solo_s else None,
        "wall_s": round(wall, 3),
        "app_cpu_s": round(app_cpu, 3),
        "app_cpu_share_of_wall": round(app_cpu / wall, 2) if wall else None,
        "app_cpu_ms_per_cell": round(1000 * app_cpu / (sessions * cells), 2),
        "fake_server_cpu_s": round(server_cpu, 3),
        "clients_cpu_s": round(clients_cpu, 3),
        "loadavg_1min_before_after": [load_before, load_after],
        "cpus": os.cpu_count(),
        "lost_cells": sessions * cells - sum(d for _, d, _ in results),
        "failed_sessions": len(errors),
        "session_errors": errors[:3],
        "cell_errors": dict(CELL_ERRORS.most_common(4)),
        "app_profile": profile if profile is not None else "py-spy not found (pip install py-spy)",
        "floor_name": "one session alone (median of 3)",
    }
    return [Figure(name, p95, "s", solo_s, ratio(p95, solo_s), detail)]
