"""A run's updates as the handlers produce them, and the two ways they leave.

Handlers yield `Frame`s: "this session changed; this is the run's start, an
ordinary frame, or the end". A frame becomes outputs only when it leaves:

- to the **page** (`Frame.page`): the progress line, the grid's skeleton once
  per run, then per frame one `live_feed` batch of what changed, and the
  scoreboard and plot when results changed (at most once a second) and at the end;
- to **API callers** (`Frame.api`, the `/run`, `/run_prompt`, `/stop`,
  `/override` endpoints): the progress line while running, then everything at
  the end: the whole grid's HTML, scoreboard, plot, files and `results_json`.

So neither path renders the whole grid per frame, and the page never gets the
whole grid's HTML again while it streams. Indexing a frame (`frame[6]`) gives
the API's outputs, which is what code calling the handlers directly expects.
`for_page` / `for_api` wrap a handler (same signature) for `layout.py`.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import gradio as gr

from ..state.session import Session
from ..views import grid_view, safe_html


def toast(message: str, *, level: str = "warning") -> None:
    """A toast on the visitor's page (Gradio's `gr.Warning` / `gr.Info`). The text is
    escaped: Gradio renders a toast's message as HTML, and messages quote what the
    visitor typed (a model string, an endpoint)."""
    text = safe_html.safe_text(message)
    if level == "info":
        gr.Info(text)
    else:
        gr.Warning(text)


def showing_note(sess: Session) -> str:
    """The progress line's word while the page shows an earlier run."""
    return (
        f"Showing run {sess.history.selected} of this session: choose “All runs” in the run list for the whole session."
    )


def _skip() -> Any:
    """No change to that output (a fresh update dict per use)."""
    return gr.skip()


@dataclass
class Frame:
    """One update of a visitor's session (see the module docstring)."""

    pg: Any
    """The Playground (scores, plot, files and results are rendered by it)."""
    sess: Session
    kind: Literal["run", "override", "message"] = "run"
    message: str = ""
    start: bool = False
    """The run's first frame: the page gets the grid's skeleton."""
    final: bool = False
    scores: bool = True
    """Let the scoreboard and plot follow the results (paced, see `live_feed.Pacing`;
    the API gets them at the end)."""
    heartbeat: bool = False
    """A quiet moment of a live run: the page's feed still hears from it."""
    snapshot: bool = False
    """The page gets the whole run at once (a reloaded page adopting the session)."""
    refused: bool = False
    """A message saying why a run did not start (shown as such in the progress line)."""
    notes: list[str] = field(default_factory=list)
    _api: tuple | None = None

    # -- outputs ------------------------------------------------------------------

    def _progress(self) -> str:
        if self.kind == "message":
            kind = ' data-state="refused" role="alert"' if self.refused else ""
            return f'<div class="progress-box"{kind}><div class="prog-status">{safe_html.safe_text(self.message)}</div></div>'
        sess = self.sess
        if sess.shown_run is not sess.run:  # an earlier run, drawn again (`history`)
            return grid_view.render_progress(sess.shown_run, [*self.notes, showing_note(sess)])
        return grid_view.render_progress(sess.run, self.notes)

    def _final_extras(self) -> tuple[Any, Any, Any]:
        csv_path, jsonl_path = self.pg._export_files(self.sess)
        return csv_path, jsonl_path, gr.update(choices=self.sess.overridable_cells())

    def page(self) -> tuple:
        """The page's outputs: `[progress, grid, grid_feed, scoreboard, plot,
        download_csv, download_jsonl, override_cell, state]` (an override:
        the same without progress and grid)."""
        sess, now = self.sess, time.monotonic()
        pace = sess.feed.pacing
        progress = self._progress() if self.kind != "override" else ""
        if self.kind == "message":
            pace.sent_progress(progress, now)
            return (progress, *(_skip() for _ in range(7)), sess)
        grid = feed = _skip()
        if self.snapshot and sess.shown_run is not None:
            feed = sess.feed.snapshot(sess.shown_run, sess.overrides) or _skip()
        elif self.start and sess.run is not None:
            grid, feed = sess.feed.start(sess.run, sess.overrides)
            pace = sess.feed.pacing
        else:
            batch = sess.feed.batch(sess.shown_run, sess.overrides, heartbeat=self.heartbeat)
            if batch is not None:
                feed = batch
        board = plot = _skip()
        if self.final or self.kind == "override" or (self.scores and pace.scores_due(sess.version, now)):
            board, plot = self.pg._score_outputs(sess)
            pace.sent_scores(sess.version, now, len(board) + len(plot))
        csv_path, jsonl_path, choices = self._final_extras() if self.final else (_skip(), _skip(), _skip())
        if self.kind == "override":
            return (feed, board, plot, csv_path, jsonl_path, choices, sess)
        if self.final or self.start or self.snapshot or pace.progress_due(progress, now):
            pace.sent_progress(progress, now)
        else:
            progress = _skip()
        return (progress, grid, feed, board, plot, csv_path, jsonl_path, choices, sess)

    def api(self) -> tuple:
        """The API's outputs: `[progress, grid, scoreboard, plot, download_csv,
        download_jsonl, results_json, override_cell, state]` (an override: the
        same without progress). Computed once."""
        if self._api is None:
            self._api = self._api_outputs()
        return self._api

    def api_update(self) -> tuple | None:
        """`api()` as an API caller's stream gets it: while a run streams, the
        progress line at most every `PROGRESS_EVERY_S` and only when it changed
        (None: nothing to send), so 24 callers at once are not sent ten messages
        a second each that they must parse."""
        if self.final or self.kind != "run" or self.start:
            return self.api()
        progress, now = self._progress(), time.monotonic()
        pace = self.sess.feed.api_pacing
        if not pace.progress_due(progress, now):
            return None
        pace.sent_progress(progress, now)
        return self.api()

    def _api_outputs(self) -> tuple:
        sess = self.sess
        if self.kind == "message":
            return (self._progress(), *(_skip() for _ in range(7)), sess)
        if not self.final:  # while running: the progress line only
            return (self._progress(), *(_skip() for _ in range(7)), sess)
        grid = grid_view.render_grid(sess.shown_run, sess.overrides)
        board, plot = self.pg._score_outputs(sess)
        csv_path, jsonl_path, choices = self._final_extras()
        outputs = (grid, board, plot, csv_path, jsonl_path, self.pg._results_json(sess), choices, sess)
        return outputs if self.kind == "override" else (self._progress(), *outputs)

    # -- the API's outputs by index (handlers called directly, tests) -------------

    def __getitem__(self, index):
        return self.api()[index]

    def __len__(self) -> int:
        return len(self.api())

    def __iter__(self):
        return iter(self.api())


PAGE_OUTPUTS = (
    "progress", "grid", "grid_feed", "scoreboard", "plot", "download_csv", "download_jsonl", "override_cell", "state",
)  # fmt: skip
"""The order of `Frame.page()`'s run outputs (`layout.py` wires the components in it)."""
PAGE_REPEATED_AT_CLOSE = frozenset(
    PAGE_OUTPUTS.index(name) for name in ("download_csv", "download_jsonl", "override_cell")
)
"""Outputs of a run's last page frame that the closing message repeats (see `_wrap`)."""


def _stamp(args: tuple) -> None:
    for arg in args:
        if isinstance(arg, Session):
            arg.requested_at = time.monotonic()
            arg.touch()


def _wrap(handler: Callable, convert: Callable[[Frame], tuple | None], *, close_with_skips: bool = False) -> Callable:
    """`handler` with its frames converted; the signature Gradio inspects stays the handler's.

    Gradio's closing message of a generator repeats the last frame's values in
    full; with `close_with_skips` a last frame of "no change" makes it repeat
    nothing (the page already has everything; API callers need the repeat).
    The visitor's session is stamped with the time of the request, so a Stop
    pressed while a run is still loading keeps it from starting."""
    if inspect.isasyncgenfunction(handler):

        @functools.wraps(handler)
        async def frames(*args, **kwargs):
            _stamp(args)
            last = None
            async with contextlib.aclosing(handler(*args, **kwargs)) as handled:  # closed with this one
                async for frame in handled:
                    out = convert(frame) if isinstance(frame, Frame) else frame
                    if out is None:  # nothing new for this caller
                        continue
                    last = out
                    yield last
            if close_with_skips and isinstance(last, tuple) and len(last) > 1:
                # Outputs given as a value in the last frame (files, the override menu) are
                # repeated: Gradio's closing message would otherwise leave a download button
                # enabled with no file behind it. They are small; the rest is not repeated.
                yield (*(v if i in PAGE_REPEATED_AT_CLOSE else _skip() for i, v in enumerate(last[:-1])), last[-1])

        return frames

    @functools.wraps(handler)
    async def once(*args, **kwargs):
        frame = handler(*args, **kwargs)
        if inspect.isawaitable(frame):
            frame = await frame
        return convert(frame) if isinstance(frame, Frame) else frame

    return once


def for_page(handler: Callable) -> Callable:
    return _wrap(handler, Frame.page, close_with_skips=True)


def for_api(handler: Callable) -> Callable:
    return _wrap(handler, Frame.api_update)
