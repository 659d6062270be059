"""The Gradio playground: `build_demo()` returns the Blocks, `main()` serves it.

Importing this package imports Gradio but not LiteLLM or the dataset, so the
page is served within seconds; LiteLLM is warmed in the background after launch.

By role, one floor over the next (docs/architecture.md draws them):
`layout` builds the page and wires it (with `dataset_panel`) and `launching`
serves it (Gradio's launch with a patient start-up check); `handlers/` drive
the engine (`playground`: run, stop, override; the mixins over the shared
state in `base`; `frames` turns a handler's frames into outputs); `state/` is
what the server keeps for visitors (`session`, `history`, `exports`,
`lifetime`, `live_feed`: the live grid's wire protocol, `shared_state`: what
the page says and needs about Redis, `warmup`); `views/` are pure functions
from state to escaped HTML (`safe_html`, `run_view`, `grid_view`,
`scoreboard_view`, `plot_view`, `plot_labels`, `compare_view`, `style`);
`assets/` holds the page's script (`live_grid.js`) and the About text.

May import everything below it (engine, services, domain, analysis). Nothing
in the package imports the UI; the UI never imports LiteLLM itself (only
through `engine`).
"""

from __future__ import annotations

import os

from .launching import launch
from .layout import build_demo, launch_kwargs
from .state.warmup import warm_up_in_background

__all__ = ["build_demo", "launch", "launch_kwargs", "main"]


def main() -> None:
    """Serve on GRADIO_SERVER_NAME:GRADIO_SERVER_PORT (default 127.0.0.1:7860)."""
    from .state.shared_state import startup_check

    startup_check()  # ORBENCH_REDIS_URL set but unreachable: one line; a public demo stops here
    demo = build_demo()
    launch(
        demo,
        server_name=os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1",
        server_port=int(os.environ.get("GRADIO_SERVER_PORT") or 7860),
    )
    warm_up_in_background(getattr(demo, "embedded_defaults", ()))
    demo.block_thread()
