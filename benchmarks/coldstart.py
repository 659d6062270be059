"""Figure 4: cold start, `python app.py` to the first HTTP 200 of the page.

Both the app and the floor (a Gradio Blocks hello-world, written to a temp file)
are started the same way: a fresh `python <file>` process with
GRADIO_SERVER_PORT set, timed from spawn to the first 200 on `/`, then
terminated. One unmeasured start of each warms the OS file cache and .pyc
files; then they alternate.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from . import common
from .report import Figure, ratio, skipped

HELLO = """\
import os
import gradio as gr

with gr.Blocks() as demo:
    gr.Markdown("Hello, world")

demo.launch(server_name="127.0.0.1", server_port=int(os.environ["GRADIO_SERVER_PORT"]))
"""


def start_to_200(script: Path, env: dict[str, str], timeout: float = 120.0) -> float:
    port = common.free_port()
    env = {**env, "GRADIO_SERVER_PORT": str(port), "GRADIO_SERVER_NAME": "127.0.0.1"}
    url = f"http://127.0.0.1:{port}/"
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(script)], cwd=str(common.REPO), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{script.name} exited with {proc.returncode}: {proc.stderr.read().decode()[-400:]}")
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError(f"{script.name} gave no HTTP 200 within {timeout:.0f} s")
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    if r.status == 200:
                        return time.perf_counter() - t0
            except OSError:
                pass
            time.sleep(0.02)
    finally:
        common.stop_process(proc)


def figures(quick: bool, command: str) -> list[Figure]:
    app = common.REPO / "app.py"
    if not app.exists():
        return [skipped("coldstart", "s", "app.py does not exist yet", command)]
    rounds = 1 if quick else 2
    with tempfile.TemporaryDirectory(prefix="orbench-bench-cold-") as tmp:
        hello = Path(tmp) / "hello_blocks.py"
        hello.write_text(HELLO)
        env = {**os.environ, "ORBENCH_CACHE_DIR": str(Path(tmp) / "cache"), "PYTHONUNBUFFERED": "1"}
        env.pop("ORBENCH_MODELS", None)
        start_to_200(hello, env)  # warm-up, not timed
        start_to_200(app, env)
        apps, hellos = [], []
        for _ in range(rounds):
            hellos.append(start_to_200(hello, env))
            apps.append(start_to_200(app, env))
    value, floor = common.median(apps), common.median(hellos)
    r = ratio(value, floor)
    return [
        Figure(
            "coldstart",
            value,
            "s",
            floor,
            r,
            {
                "floor_name": "Gradio Blocks hello-world, started the same way",
                "app_s": common.rnd(value, 3),
                "floor_s": common.rnd(floor, 3),
                "raw_app_s": [common.rnd(x, 3) for x in apps],
                "raw_floor_s": [common.rnd(x, 3) for x in hellos],
                "setup": f"`python app.py` vs `python hello_blocks.py`, spawn to first 200 on /, one warm-up each, {rounds} alternating rounds, medians",
                "target": "ratio <= 1.3",
                "meets_target": None if quick else bool(r is not None and r <= 1.3),
                "command": command,
            },
        )
    ]
