"""The Gradio playground: `build_demo()` returns the Blocks, `main()` serves it.

Importing this package imports Gradio but not LiteLLM or the dataset, so the
page is served within seconds; LiteLLM is warmed in the background after launch.

Modules: `layout` builds the page and wires it; `handlers` (run, stop,
override), `setup_handlers` and `compare_handlers` drive the engine over the
shared state in `base`; `frames` turns a handler's frames into outputs;
`live_feed` (+ `live_grid.js`) is the live grid's wire protocol;
`launching` serves the page (Gradio's launch with a patient start-up check);
`shared_state` is what the page says and needs about Redis; `session`,
`run_view` and `exports` are per-visitor state; the views (`safe_html`,
`grid_view`, `scoreboard_view`, `plot_view`, `plot_labels`, `compare_view`,
`style`) are pure functions from state to escaped HTML.

May import everything below it (engine, services, domain, analysis). Nothing
in the package imports the UI; the UI never imports LiteLLM itself (only
through `engine`).
"""

from __future__ import annotations

import os

from .launching import launch
from .layout import build_demo, launch_kwargs
from .warmup import warm_up_in_background

__all__ = ["build_demo", "launch", "launch_kwargs", "main"]


def main() -> None:
    """Serve on GRADIO_SERVER_NAME:GRADIO_SERVER_PORT (default 127.0.0.1:7860)."""
    from .shared_state import startup_check

    startup_check()  # ORBENCH_REDIS_URL set but unreachable: one line; a public demo stops here
    demo = build_demo()
    launch(
        demo,
        server_name=os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1",
        server_port=int(os.environ.get("GRADIO_SERVER_PORT") or 7860),
    )
    warm_up_in_background()
    demo.block_thread()
