"""Helpers several test modules share: loopback ports, the playground served
in-process, and Debian Chromium for browser tests.

Browser tests fail (not skip) when Chromium is missing: `.ci/run` installs it,
and a silently skipped browser suite would pass off as coverage.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


PORTS_FROM = 10_000
"""Test servers take ports from here up to the kernel's ephemeral range."""


def _port_slice() -> range:
    """This xdist worker's own ports: below the kernel's ephemeral range, which
    every outgoing connection (and `bind(0)`) draws from, and split between the
    workers. A port taken with `bind(0)` could be handed to another process's
    connection or server before ours bound it (a loaded full run lost a test to
    "Cannot find empty port" so)."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32_768
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").lstrip("gw") or 0) % workers
    size = max(1, (low - PORTS_FROM) // workers)
    start = PORTS_FROM + worker * size
    return range(start, start + size)


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now, from this
    worker's own slice (`_port_slice`); the kernel's choice if the slice is full."""
    ports = _port_slice()
    for _ in range(100):
        port = random.choice(ports)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fake_models_yaml(path: Path, base_url: str, models: dict[str, str], api_key: str = "sk-fake") -> Path:
    """A LiteLLM model_list of fake-server models: name -> behaviour (e.g. `long:1`).
    Names are quoted, so any text (`[bold]x[/]`) is a name, not YAML."""
    lines = ["model_list:"]
    for name, behaviour in models.items():
        lines += [
            f"  - model_name: {json.dumps(name)}",
            f"    litellm_params: {{model: 'openai/{behaviour}', api_base: '{base_url}', api_key: {api_key}}}",
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def fake_playground(path: Path, base_url: str, models: dict[str, str]):
    """The playground's handlers (`ui.handlers.playground.Playground`) over fake-server models
    only (name -> behaviour; the model_list is written to `path`), without the embedded model."""
    from orbench_play.models import load_catalog
    from orbench_play.ui.handlers.playground import Playground

    return Playground(load_catalog(fake_models_yaml(path, base_url, models), include_local=False))


async def drain(agen) -> list:
    """Every frame an async generator (a handler) yields, to its end."""
    return [frame async for frame in agen]


def run_cli(args: list[str], *, timeout: float = 180, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """`python -m orbench_play ARGS` in its own process, output captured as text;
    the exit code is the caller's to check (`check=False`). `kwargs`: env, cwd."""
    return subprocess.run(
        [sys.executable, "-m", "orbench_play", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


def api_client(url: str, **kwargs: Any):
    """A gradio_client `Client` for an app served here on loopback HTTP.

    `ssl_verify=False` skips only loading the CA bundle into the SSL context
    that httpx builds for every request, HTTP or not. That load is 32 ms of
    CPU, and the client makes several requests per `predict`: the config, the
    queue join, the event stream and each file it downloads. Over the suite
    that was more than a minute of CPU. Nothing here speaks TLS."""
    from gradio_client import Client

    return Client(url, verbose=False, ssl_verify=False, **kwargs)


def require_chromium() -> None:
    assert os.path.exists(CHROMIUM), (
        f"{CHROMIUM} is missing: browser tests need Debian's chromium (apt-get install chromium; .ci/run does this)"
    )


@contextlib.contextmanager
def serve_playground(models_yaml: Path, *, warm: bool = True) -> Iterator[str]:
    """The playground on a free loopback port, as `python app.py` serves it; yields its URL."""
    with serve_playground_demo(models_yaml, warm=warm) as (url, _demo):
        yield url


@contextlib.contextmanager
def serve_playground_demo(models_yaml: Path, *, warm: bool = True) -> Iterator[tuple[str, Any]]:
    """As `serve_playground`, yielding (URL, the running `gr.Blocks`) for tests that
    look at Gradio's own state (e.g. end a visitor's session)."""
    from orbench_play.models import load_catalog
    from orbench_play.ui import build_demo, launch
    from orbench_play.ui.state.warmup import warm_up_in_background

    demo = build_demo(load_catalog(models_yaml, include_local=False))
    port = free_port()
    launch(demo, server_name="127.0.0.1", server_port=port, quiet=True)
    if warm:
        warm_up_in_background().join(60)  # as app.py does right after launch
    try:
        yield f"http://127.0.0.1:{port}/", demo
    finally:
        demo.close()


@contextlib.contextmanager
def app_py(cwd: Path, env: dict[str, str], log: Path, *, within: float = 90) -> Iterator[tuple[str, str]]:
    """`python app.py` in `cwd` with `env` (which sets GRADIO_SERVER_PORT), its output in
    `log`; yields (URL, body of the first page) once it serves HTTP 200, then stops it.
    Fails the test with the log's tail if the app exits or serves nothing in time."""
    url = f"http://127.0.0.1:{env['GRADIO_SERVER_PORT']}/"
    with log.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + within
            while True:
                if proc.poll() is not None:
                    raise AssertionError(f"app.py exited with {proc.returncode}:\n{_tail(log)}")
                try:
                    with urllib.request.urlopen(url, timeout=5) as response:
                        if response.status == 200:
                            body = response.read().decode("utf-8", "replace")
                            break
                except (urllib.error.URLError, OSError):
                    pass
                if time.monotonic() > deadline:
                    raise AssertionError(f"app.py served no page within {within:.0f} s:\n{_tail(log)}")
                time.sleep(0.5)
            yield url, body
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=20)


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-4000:]


def watch_errors(page) -> list[str]:
    """Collect `page`'s uncaught script errors; the list is returned and kept for `errors_of`."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.orbench_errors = errors
    return errors


def errors_of(page) -> list[str]:
    """The uncaught script errors of a page opened by `browser_page` (or watched by `watch_errors`)."""
    return page.orbench_errors


@contextlib.contextmanager
def browser_page(browser, **context_args) -> Iterator[Any]:
    """A page in a browser context of its own (closed afterwards), its script errors watched."""
    context = browser.new_context(**context_args)
    page = context.new_page()
    watch_errors(page)
    try:
        yield page
    finally:
        context.close()


def open_share_link(page, app_url: str, query: str, *, timeout_ms: int = 20_000) -> None:
    """Open the playground at `query` and wait until the page load has pre-filled the
    controls from it (the share box then ends with the same query)."""
    page.goto(app_url + query)
    page.wait_for_selector("#run")
    page.wait_for_function(
        "q => (document.querySelector('#share textarea')?.value || '').endsWith(q)", arg=query, timeout=timeout_ms
    )


@contextlib.contextmanager
def chromium():
    """A headless Debian Chromium driven by playwright (never `playwright install`)."""
    from playwright.sync_api import sync_playwright

    require_chromium()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


RUN_ENDED = "() => ['finished', 'stopped'].includes(document.querySelector('#progress .progress-box')?.dataset.state)"
"""A page script: the run's last frame has arrived (it also brings the scoreboard, plot
and downloads, which follow a live run at most once a second)."""
ALL_FINAL = (
    "n => { const v = [...document.querySelectorAll('#grid .verdict')];"
    " return (n == null ? v.length > 0 : v.length === n) && v.every(e => e.dataset.verdict !== 'pending')"
    f" && ({RUN_ENDED})(); }}"
)
"""A page script: the grid has `n` answers (any, without an argument), every verdict is
final and the run has ended. The grid's verdicts arrive by the live feed, ahead of the
last frame: a test that read the scoreboard once the verdicts were final read one a
frame old (CI, stop 34)."""
VARIANT_FINAL = (
    "v => { const els = [...document.querySelectorAll(`#grid .verdict[data-variant='${v}']`)];"
    f" return els.length > 0 && els.every(e => e.dataset.verdict !== 'pending') && ({RUN_ENDED})(); }}"
)
"""A page script: every answer of variant `v` (its `data-variant`) has its final verdict
and the run has ended."""


def choose(page, elem_id: str, text: str, *, once_listed: str | None = None) -> None:
    """Pick a Gradio dropdown option by its visible text. With `once_listed`, first wait
    until an option with that text is in the open list: a list the server is about to
    update re-uses its items, so a click aimed at one option can land on another."""
    page.click(f"#{elem_id} input")
    if once_listed is not None:
        page.locator(f"#{elem_id} li[role=option]", has_text=once_listed).first.wait_for(timeout=60_000)
    page.locator(f"#{elem_id} li[role=option]", has_text=text).first.click()


def run_then_run_with_safety(page, model: str) -> None:
    """In an open page of `model`: run it, pick the safety preset in the page, run again
    (the spot-check flow; its second variant is `model · safety`)."""
    page.click("#run button, button#run")
    page.wait_for_function(VARIANT_FINAL, arg=model, timeout=60_000)
    page.click("#gen_settings button.label-wrap, #gen_settings > button")
    choose(page, "system_preset", "safety —")
    page.click("#run button, button#run")
    page.wait_for_function(VARIANT_FINAL, arg=f"{model} · safety", timeout=60_000)


_BOX_VALUE = "id => document.querySelector(`#${id} textarea, #${id} input`)?.value"
"""A page script: the value of the Gradio text box `id` (a textarea or an input), if it is there."""


def type_into(page, elem_id: str, text: str) -> None:
    """Type `text` key by key into the empty box `elem_id` (a textbox's `input` event,
    which the share box follows, comes from keys) and wait until it holds all of it.
    The click first waits for the box to be visible and still: typed into while an
    accordion was still opening, a box lost its first keys on a loaded machine."""
    box = page.locator(f"#{elem_id} textarea, #{elem_id} input").first
    box.click()
    box.press_sequentially(text)
    page.wait_for_function(f"([id, text]) => ({_BOX_VALUE})(id) === text", arg=[elem_id, text])


def filled_value(page, elem_id: str) -> str:
    """The value of the box `elem_id` once it holds one: an accordion renders what it
    holds after the click that opens it, and a read before then found no box."""
    page.wait_for_function(f"id => !!({_BOX_VALUE})(id)", arg=elem_id)
    return page.evaluate(_BOX_VALUE, elem_id)
