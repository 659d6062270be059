"""`first_run_browser`: a newcomer's first run, in a real browser (issue 46).

`python app.py` from a fresh start (its own process; no model list, no data folder,
an empty cache, the Hub unreachable), headless Debian Chromium opens the page with
its defaults (no query: the embedded models it preselects, 20 prompts of hard-1k and
toxic, settling as the page's switch starts) and clicks Run. The figure is the time
from the click to the last final verdict (every `.verdict` final and the run's last
frame in), measured `RUNS` times, each with a fresh app and cache and the load
average (`os.getloadavg`) before and after: other work shares the 2 cores, and the
load says more about a figure than the figure itself.

Qwen's GGUF is joined from its pieces once, into a folder kept between runs
(`ORBENCH_GGUF_DIR`): on a real first start that takes ~2.5 s in the warm-up,
before anyone can click. Target: 90 s.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import common
from .live import CHROMIUM, CHROMIUM_ARGS
from .report import Figure, skipped

RUNS = 2
TARGET_S = 90.0
DROP = ("ORBENCH_DATA_DIR", "ORBENCH_DATA_SOURCE", "ORBENCH_MODELS", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
FINAL_JS = """n => { const v = [...document.querySelectorAll('#grid .verdict')];
  return v.length === n && v.every(e => e.dataset.verdict !== 'pending')
    && ['finished', 'stopped'].includes(document.querySelector('#progress .progress-box')?.dataset.state); }"""
VERDICTS_JS = "els => els.map(e => ({model: e.dataset.model, row: e.dataset.row, verdict: e.dataset.verdict}))"
GRID_CELLS_JS = """() => [...document.querySelectorAll('#grid td.cell, #grid .rep')].map(td => ({
  settled: !!td.querySelector('.msg-settle'), error: !!td.querySelector('.msg-err')}))"""


def _gguf_dir() -> Path:
    folder = Path(tempfile.gettempdir()) / "orbench-bench-gguf"
    folder.mkdir(exist_ok=True)
    return folder


def _one(quick: bool) -> dict:
    """One fresh app, one click on Run with the defaults: what the page showed and when."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="orbench-bench-first-") as tmp:
        port = common.free_port()
        env = {k: v for k, v in os.environ.items() if k not in DROP and k != "PYTHONPATH"}
        env.update(
            HF_ENDPOINT=f"http://127.0.0.1:{common.free_port()}",
            ORBENCH_CACHE_DIR=str(Path(tmp) / "cache"),
            ORBENCH_GGUF_DIR=str(_gguf_dir()),
            GRADIO_SERVER_NAME="127.0.0.1",
            GRADIO_SERVER_PORT=str(port),
        )
        with open(Path(tmp) / "app.log", "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, str(common.REPO / "app.py")], cwd=str(common.REPO), env=env, stdout=log, stderr=log
            )
            try:
                root = f"http://127.0.0.1:{port}/"
                _wait_http(root, proc)
                query = "?categories=privacy,violence" if quick else ""
                with sync_playwright() as pw:
                    browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
                    try:
                        page = browser.new_page(viewport={"width": 1500, "height": 1100})
                        page.goto(root + query)
                        page.wait_for_function(
                            "() => (document.querySelector('#share textarea')?.value || '').includes('split=hard-1k,toxic')",
                            timeout=120_000,
                        )
                        share = page.locator("#share textarea").input_value()
                        models = [m for m in share.split("models=", 1)[1].split("&", 1)[0].split(",") if m]
                        settle = page.locator("#settle input").is_checked()
                        cells = (4 if quick else 20) * len(models)
                        page.wait_for_timeout(1000)  # a person reads the page before clicking
                        load_before = os.getloadavg()
                        clicked = time.monotonic()
                        page.click("#run button, button#run")
                        page.wait_for_function(FINAL_JS, arg=cells, timeout=900_000, polling=100)
                        run_s = time.monotonic() - clicked
                        load_after = os.getloadavg()
                        verdicts = page.eval_on_selector_all("#grid .verdict", VERDICTS_JS)
                        grid = page.evaluate(GRID_CELLS_JS)
                        page.wait_for_timeout(1500)  # the last frame's scoreboard and plot
                        points = page.locator("#plot .session-pt").count()
                        saved = page.locator("#scoreboard .sb-settle").get_attribute("data-saved-tokens", timeout=5000)
                    finally:
                        browser.close()
            finally:
                common.stop_process(proc)
    by_model: dict[str, dict] = {}
    for v in verdicts:
        m = by_model.setdefault(v["model"], {"refused_hard_1k": 0, "refused_toxic": 0, "errors": 0})
        refused = v["verdict"] in ("direct_refusal", "indirect_refusal")
        m["refused_hard_1k" if v["row"].startswith("hard-1k:") else "refused_toxic"] += refused
        m["errors"] += v["verdict"] == "error"
    return {
        "run_s": round(run_s, 1),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "models": models,
        "settle_switch": settle,
        "cells": cells,
        "settled_cells": sum(c["settled"] for c in grid),
        "error_cells": sum(c["error"] for c in grid),
        "saved_tokens_at_most": int(saved) if saved else 0,
        "points_on_plot": points,
        "per_model": by_model,
    }


def _wait_http(url: str, proc: subprocess.Popen, within: float = 120.0) -> None:
    import httpx

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("app.py exited before it served the page")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"app.py gave no HTTP 200 within {within:.0f} s")


def figures(quick: bool, command: str) -> list[Figure]:
    name = "first_run_browser"
    if not Path(CHROMIUM).exists():
        return [skipped(name, "s", f"no browser at {CHROMIUM} (apt-get install chromium)", command)]
    try:
        import playwright  # noqa: F401
    except ImportError:
        return [skipped(name, "s", "playwright is not installed", command)]
    from orbench_play.models import embedded

    missing = [m.install_hint for m in embedded.MODELS.values() if not embedded.is_available(m.name)]
    if missing:
        return [skipped(name, "s", missing[0], command)]
    runs = [_one(quick) for _ in range(1 if quick else RUNS)]
    times = [r["run_s"] for r in runs]
    return [
        Figure(
            name,
            common.median(times),
            "s",
            None,
            None,
            {
                "setup": "python app.py from a fresh start (no model list or data folder, empty cache, Hub "
                "unreachable); headless chromium opens the page with its defaults and clicks Run; click to the "
                "last final verdict" + (" (quick: 2 categories)" if quick else ""),
                "runs": runs,
                "times_s": times,
                "target": f"every run <= {TARGET_S:g} s",
                "meets_target": None if quick else all(t <= TARGET_S for t in times),
                "command": command,
            },
        )
    ]
