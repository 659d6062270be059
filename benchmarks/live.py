"""Figure 5: live rendering in a real browser.

`python app.py` (its own process) with ORBENCH_MODELS pointing at 6 fake-server
models (`openai/slow:N`, 2 s streams in 20 chunks; the fake server runs in this
process, so its CPU is not the app's). Headless Debian chromium, driven by
playwright, opens the share URL for 6 models x 20 hard-1k prompts and clicks Run.

- Lag: from the last byte the fake server wrote (end of the last stream,
  `time.time()` in the server) to the moment every `.verdict[data-verdict]` in
  `#grid` is final (`Date.now()` in a MutationObserver). Same machine clock.
  Floor: 0 (the browser could show the last verdict as its byte arrives); the
  ratio is against the 1 s target instead.
- Updates/s: server-sent messages carrying an update (`process_generating` /
  `process_completed`) counted by wrapping the page's `fetch`/`EventSource`
  streams, over the run (click to last final verdict). Floor: the
  12 updates/s target; DOM mutation batches in `#grid` are in the detail.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from . import common
from .app_server import AppProcess
from .report import Figure, ratio, skipped

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

INIT_JS = r"""
(() => {
  const B = window.__bench = {sse: 0, updates: 0, updateTimes: [], mut: 0, expected: 1e9, allFinalAt: null, finalCount: 0};
  const onMessage = (text) => {
    B.sse++;
    let kind = '';
    try { kind = JSON.parse(text).msg || ''; } catch (e) {}
    if (kind === 'process_generating' || kind === 'process_completed') { B.updates++; B.updateTimes.push(Date.now()); }
  };
  const origFetch = window.fetch;
  window.fetch = async function (...args) {
    const resp = await origFetch.apply(this, args);
    try {
      const ct = resp.headers.get('content-type') || '';
      if (ct.includes('text/event-stream') && resp.body) {
        const [a, b] = resp.body.tee();
        (async () => {
          const reader = b.getReader(); const dec = new TextDecoder(); let buf = '';
          for (;;) {
            const {done, value} = await reader.read(); if (done) break;
            buf += dec.decode(value, {stream: true});
            let i;
            while ((i = buf.indexOf('\n\n')) >= 0) {
              const msg = buf.slice(0, i); buf = buf.slice(i + 2);
              for (const line of msg.split('\n')) if (line.startsWith('data:')) onMessage(line.slice(5).trim());
            }
          }
        })();
        const out = new Response(a, {status: resp.status, statusText: resp.statusText, headers: resp.headers});
        Object.defineProperty(out, 'url', {value: resp.url});
        return out;
      }
    } catch (e) {}
    return resp;
  };
  const OrigES = window.EventSource;
  if (OrigES) {
    const Wrapped = function (url, opts) {
      const es = new OrigES(url, opts);
      es.addEventListener('message', (ev) => onMessage(ev.data));
      return es;
    };
    Wrapped.prototype = OrigES.prototype;
    window.EventSource = Wrapped;
  }
  const check = () => {
    const vs = document.querySelectorAll('#grid .verdict[data-verdict]');
    let final = 0;
    for (const v of vs) if (v.getAttribute('data-verdict') !== 'pending') final++;
    B.finalCount = final;
    if (B.allFinalAt === null && vs.length >= B.expected && final === vs.length) B.allFinalAt = Date.now();
  };
  const observe = () => {
    new MutationObserver((records) => {
      const grid = document.getElementById('grid');
      if (grid && records.some((r) => grid.contains(r.target))) { B.mut++; check(); }
    }).observe(document.documentElement, {subtree: true, childList: true, attributes: true, characterData: true});
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', observe); else observe();
})();
"""


def _fake_server_class():
    tests = str(common.REPO / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from fake_openai import FakeOpenAIServer

    class TimedServer(FakeOpenAIServer):
        """Records when each stream's last byte was written."""

        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.stream_ends: list[float] = []

        async def _respond_stream(self, *a, **kw):
            resp = await super()._respond_stream(*a, **kw)
            self.stream_ends.append(time.time())
            return resp

    return TimedServer


def figures(quick: bool, command: str) -> list[Figure]:
    app = common.REPO / "app.py"
    if not app.exists():
        return [skipped("live_lag", "s", "app.py does not exist yet", command)]
    if not Path(CHROMIUM).exists():
        return [skipped("live_lag", "s", f"no browser at {CHROMIUM} (apt-get install chromium)", command)]
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return [skipped("live_lag", "s", "playwright is not installed", command)]

    n_models, n_prompts = (2, 3) if quick else (6, 20)
    delay = 0.5 if quick else 2.0
    cells = n_models * n_prompts
    server = _fake_server_class()(delay=delay, chunks=20).start()
    try:
        names = [f"fake-{i}" for i in range(1, n_models + 1)]
        models = {n: f"slow:{i}" for i, n in enumerate(names, start=1)}
        with AppProcess(server.base_url, models) as app:
            url = f"{app.root}/?models={','.join(names)}&split=hard-1k&categories=privacy&n={n_prompts}&seed=7"
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
                try:
                    page = browser.new_page()
                    page.add_init_script(INIT_JS)
                    page.goto(url, wait_until="domcontentloaded")
                    page.wait_for_selector("#run", timeout=60_000)
                    page.wait_for_timeout(1500)  # let the query pre-fill land before clicking
                    page.evaluate(f"window.__bench.expected = {cells}")
                    server.reset()
                    server.stream_ends.clear()
                    click_at = time.time()
                    page.click("#run")
                    page.wait_for_function(
                        "window.__bench.allFinalAt !== null", timeout=(60 + cells * delay) * 1000, polling=100
                    )
                    page.wait_for_timeout(500)  # catch trailing updates
                    b = page.evaluate("window.__bench")
                finally:
                    browser.close()
        last_byte = max(server.stream_ends) if server.stream_ends else None
        requests = server.request_count()
    finally:
        server.stop()
    if last_byte is None or requests < cells:
        return [skipped("live_lag", "s", f"only {requests} of {cells} cells reached the fake server", command)]
    all_final = b["allFinalAt"] / 1000
    lag = all_final - last_byte
    times = [t / 1000 for t in b["updateTimes"] if click_at <= t / 1000 <= all_final + 0.001]
    run_s = all_final - click_at
    ups = len(times) / run_s if run_s > 0 else None
    peak_1s = 0
    j = 0
    for i, t in enumerate(times):  # the busiest one-second window
        while times[j] < t - 1.0:
            j += 1
        peak_1s = max(peak_1s, i - j + 1)
    setup = (
        f"{n_models} models x {n_prompts} hard-1k prompts (privacy, seed 7), fake server slow:N "
        f"({delay:g} s streams, 20 chunks) in the benchmark process, app.py in its own process, headless chromium"
    )
    detail = {
        "setup": setup,
        "command": command,
        "cells": cells,
        "requests_seen_by_server": requests,
        "run_s_click_to_all_final": round(run_s, 3),
        "last_server_byte_after_click_s": round(last_byte - click_at, 3),
        "all_final_after_click_s": round(all_final - click_at, 3),
        "updates_in_run": len(times),
        "peak_updates_in_1s": peak_1s,
        "sse_messages_total": b["sse"],
        "grid_mutation_batches": b["mut"],
    }
    return [
        Figure(
            "live_lag",
            lag,
            "s",
            None,
            ratio(lag, 1.0),
            {
                "floor_name": "0 s (ratio is against the 1 s target)",
                "last_byte_epoch_s": round(last_byte, 3),
                "all_final_epoch_s": round(all_final, 3),
                "target": "<= 1 s after the last byte",
                "meets_target": None if quick else bool(lag <= 1.0),
                **detail,
            },
        ),
        Figure(
            "live_updates_per_s",
            ups,
            "updates/s",
            12.0,
            ratio(ups, 12.0),
            {
                "floor_name": "12 updates/s (target)",
                "target": "<= 12 updates/s",
                "meets_target": None if quick else bool(ups is not None and ups <= 12 and peak_1s <= 12),
                **detail,
            },
        ),
    ]
