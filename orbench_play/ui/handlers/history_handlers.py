"""The run list's handlers: switch the grid, scoreboard, plot and downloads to
any earlier run of the session, or back to "All runs" (the session-wide
scoreboard, which combines the runs of the same variants). Page-only events
(`layout.py` wires them with `api_visibility="private"`); the model is `history`.

Switching is refused while a run streams: the live grid is the run's until it
ends (or is stopped), and a run that starts shows "All runs" again.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from ..state.history import ALL_RUNS, ALL_RUNS_LABEL, parse_choice
from ..state.session import Session, usable_session
from .base import PlaygroundBase
from .frames import Frame, toast

RUN_LIST_INFO = "Show an earlier run's grid, scoreboard, plot and downloads; “All runs” pools the whole session."


def run_list_dropdown() -> gr.Dropdown:
    """The run list (built by `layout` beside the download buttons; the README's pictures stay as they were)."""
    return gr.Dropdown(
        [(ALL_RUNS_LABEL, ALL_RUNS)], value=ALL_RUNS, label="Runs of this session", info=RUN_LIST_INFO,
        elem_id="run_history", interactive=True, scale=3,
    )  # fmt: skip


class HistoryHandlers(PlaygroundBase):
    def run_list(self, sess: Session) -> dict[str, Any]:
        """The run list as the session has it now (chained after every run and a reload)."""
        history = sess.history if isinstance(sess, Session) else None
        if history is None:
            return gr.update(choices=[(ALL_RUNS_LABEL, ALL_RUNS)], value=ALL_RUNS)
        return gr.update(choices=history.choices(), value=history.value())

    async def show_run(self, choice: Any, sess: Session) -> tuple:
        """The run list's choice: the page's run outputs (`frames.PAGE_OUTPUTS`) for that
        run, drawn again through the live feed's snapshot, then the run list itself."""
        pg: Any = self  # the Playground: the frames render through it
        sess = usable_session(sess)
        sess.touch()
        try:
            error = sess.select_run(parse_choice(choice))
        except ValueError as exc:
            error = str(exc)
        if error:
            toast(error)
            frame = Frame(pg, sess, kind="message", message=error, refused=True)
        else:
            frame = Frame(pg, sess, snapshot=True, final=True)
        return (*frame.page(), self.run_list(sess))
