"""`resources_50x_1mib`: one visitor re-rolls the prompts 50 times through the served
app's API, with models that send 1 MiB answers; the process's memory and the
session's disk over those runs.

Set-up: the playground served in this process (as `python app.py` serves it), the
fake server in this process too (its `echo` model, never cut at max tokens: 1 MiB in
20 chunks), one `gradio_client` session calling `/run` with 2 new hard-1k prompts x
2 models each time (4 cells of 1 MiB), the session's spool capped at 12 MB. RSS and
the session's disk (Gradio's upload folder plus the spool) are read after every run.

Value: RSS after the last run (MB); floor: RSS after run WARM (MB), so ratio 1.0 is
flat. Targets (a leak check, not a speed): RSS grows by less than a quarter of the
answers moved after run WARM (45 runs x 4 MiB: 45 MiB), the session's disk by less
than 3 MiB after run WARM, and no run fails. Before issue 13 six runs of 8 cells took
Gradio's cache from 16 to 352 MB and the process from 505 to 689 MB.

The same flow at 10 runs is `tests/test_ui_resources.py`, which checks the disk, the
downloads and the clean-up; the 50-run soak and its memory figure are measured here,
since beside the suite 50 runs took a worker for half a minute and a visitor's
gradio_client stream was once cut under the load.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from . import common
from .report import Figure, ratio, skipped

WARM = 5
ANSWER = 2**20
SPOOL_MB = 12
MODELS = ("fake-big-a", "fake-big-b")
CELLS = 2 * len(MODELS)


def _du(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


@contextlib.contextmanager
def _settings(upload: Path, spool: Path, runs: int):
    """Gradio's upload folder, the spool's temp folder and the session's limits for this
    figure only; the benchmark process runs other figures after it."""
    saved = {k: os.environ.get(k) for k in ("GRADIO_TEMP_DIR", "ORBENCH_SESSION_SPOOL_MB", "ORBENCH_SESSION_RUNS")}
    saved_tempdir = tempfile.tempdir
    os.environ.update(GRADIO_TEMP_DIR=str(upload), ORBENCH_SESSION_SPOOL_MB=str(SPOOL_MB))
    os.environ["ORBENCH_SESSION_RUNS"] = str(runs)  # the run list keeps every run
    tempfile.tempdir = str(spool)  # where sessions spool long answers
    try:
        yield
    finally:
        tempfile.tempdir = saved_tempdir
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def figures(quick: bool, command: str) -> list[Figure]:
    name = "resources_50x_1mib"
    try:
        import psutil
        from gradio_client import Client
    except ImportError as exc:
        return [skipped(name, "MB", f"{exc.name} is not installed", command)]
    tests = str(common.REPO / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from fake_openai import FakeOpenAIServer

    from orbench_play.models import load_catalog
    from orbench_play.ui import build_demo, launch
    from orbench_play.ui.state.warmup import warm_up_in_background

    runs = 8 if quick else 50
    folder = Path(tempfile.mkdtemp(prefix="orbench-bench-resources-"))
    upload, spool = folder / "gradio", folder / "tmp"
    spool.mkdir()
    server = FakeOpenAIServer().start()
    disk: list[int] = []
    rss: list[int] = []
    failed: list[str] = []
    proc = psutil.Process()
    try:
        lines = ["model_list:"]
        for model in MODELS:
            server.set_text(f"echo:{model}", (model + " says: " + "lorem ipsum dolor sit amet " * 40_000)[:ANSWER])
            lines += [
                f"  - model_name: {model}",
                f"    litellm_params: {{model: 'openai/echo:{model}', api_base: '{server.base_url}', api_key: sk-fake,"
                f" max_tokens: {ANSWER // 32 + 1024}}}",
            ]
        config = folder / "models.yaml"
        config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with _settings(upload, spool, runs):
            demo = build_demo(load_catalog(config, include_local=False))
            port = common.free_port()
            launch(demo, server_name="127.0.0.1", server_port=port, quiet=True)
            warm_up_in_background().join(60)
            try:
                client = Client(f"http://127.0.0.1:{port}/", verbose=False, ssl_verify=False, download_files=False)
                started = time.monotonic()
                for run in range(runs):
                    try:
                        out = client.predict(
                            list(MODELS), "hard-1k", ["privacy", "illegal"], 1, run, 512, api_name="/run"
                        )
                        payload = out[6]["run"]
                        if payload["done"] != CELLS or any(r["error"] for r in payload["results"]):
                            failed.append(f"run {run}: {payload['done']} of {CELLS} cells done")
                    except Exception as exc:  # counted, reported
                        failed.append(f"run {run}: {type(exc).__name__}: {exc}"[:200])
                    disk.append(_du(upload) + _du(spool))
                    rss.append(proc.memory_info().rss)
                seconds = time.monotonic() - started
            finally:
                demo.close()
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    mb = [x / 2**20 for x in disk]
    rss_mb = [x / 2**20 for x in rss]
    rss_growth = rss_mb[-1] - rss_mb[WARM - 1]
    disk_growth = max(mb[WARM - 1 :]) - mb[WARM - 1]
    moved_mb = CELLS * ANSWER * (runs - WARM) / 2**20
    detail = {
        "setup": (
            f"{runs} /run calls of one gradio_client session, each 2 new hard-1k prompts x 2 fake-server models "
            f"of 1 MiB answers ({CELLS} cells), app and fake server in this process, spool capped at {SPOOL_MB} MB"
        ),
        "runs": runs,
        "seconds": round(seconds, 1),
        "failed_runs": failed[:3],
        "rss_mb": [round(x, 1) for x in rss_mb],
        "rss_growth_after_warm_mb": round(rss_growth, 1),
        "session_disk_mb": [round(x, 1) for x in mb],
        "disk_growth_after_warm_mb": round(disk_growth, 2),
        "answers_moved_after_warm_mb": round(moved_mb),
        "floor_name": f"RSS after run {WARM}",
        "target": f"RSS growth < {moved_mb / 4:.0f} MB (a quarter of the answers moved), disk growth < 3 MB, no failed run",
        "meets_target": None if quick else bool(rss_growth < moved_mb / 4 and disk_growth < 3 and not failed),
    }
    value, floor = rss_mb[-1], rss_mb[WARM - 1]
    return [Figure(name, value, "MB", floor, ratio(value, floor), detail)]
