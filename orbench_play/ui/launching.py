"""Serving the page: Gradio's launch with the page's settings, and a start-up
check that waits for a loaded machine.

Before `launch` returns, Gradio checks that the page answers on its local URL
(`gradio.networking.url_ok`): HEAD requests with a 3 s timeout, and on the first
timeout it gives up and raises "When localhost is not accessible, a shareable
link must be created". The page's first render builds the config of every
component, and on a busy 2-core machine that can take longer than 3 s, so a
healthy server failed to start (seen in a loaded test run). `launch` swaps in a
check that retries until the page answers, for up to `LOCAL_CHECK_S`.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from .layout import launch_kwargs

LOCAL_CHECK_S = 30.0
"""How long the start-up check waits for the page to answer on its local URL."""
CHECK_TRY_S = 10.0
"""One request's timeout within it."""
_UP = (200, 301, 302, 303, 307, 308, 401)
"""The statuses Gradio's own check accepts (401 with auth, redirects)."""


def page_answers(url: str, *, within_s: float = LOCAL_CHECK_S, try_s: float = CHECK_TRY_S) -> bool:
    """Does `url` answer a HEAD request within `within_s`? Retries after a
    timeout or a refused connection, where Gradio's check gives up."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            if httpx.head(url, timeout=try_s).status_code in _UP:
                return True
        except httpx.HTTPError:
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)


def launch(demo: Any, *, server_name: str, server_port: int, **extra: Any) -> None:
    """`demo.launch` on `server_name:server_port` without blocking, with the
    page's settings (`launch_kwargs`) and the patient start-up check."""
    from gradio import networking

    from ..guards import visitors

    visitors.serve_untrusting()  # the visitor's address follows ORBENCH_PROXY_HOPS alone, never uvicorn's trust
    gradio_check = networking.url_ok
    networking.url_ok = page_answers
    try:
        demo.launch(
            server_name=server_name, server_port=server_port, prevent_thread_lock=True, **launch_kwargs(), **extra
        )
    finally:
        networking.url_ok = gradio_check
