"""The follow-up handlers (the `follow_up` API endpoint, the follow-up box under
the grid and each row's box in it).

A follow-up is a run of its own over the current grid: the cells followed up on
ask their next turn, in the same conversation, with the run's models, system
prompt, settings and judge; the grid's other cells are shown as they were. So
the new answers stream through the same live feed as any run, and each turn
keeps its own verdict, override, export row and score.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import gradio as gr

from ... import guards
from ...asking import followups
from ..state.session import Session
from .base import PlaygroundBase
from .frames import Frame

NOTHING_TO_FOLLOW = "Run some prompts first: a follow-up continues the conversations in the grid."
STILL_RUNNING = "Wait for the answers to finish (or press Stop) before following up."
EARLIER_RUN = "Follow-ups continue the latest run: choose “All runs” in the run list first."


CAPPED = (
    "These conversations have reached the public demo's limit of {caps}; start a new run to ask again, "
    "or run the app yourself for longer conversations."
)


def _within_public_caps(planned: list) -> tuple[list, int]:
    """In public mode, only the follow-ups within the turn and context caps (and how many were left out)."""
    if not guards.public_mode():
        return planned, 0
    return followups.within_caps(planned, guards.FollowUpCaps.from_env())


def follow_up_limits_text() -> str:
    """The caps a visitor should know before a follow-up hits them (empty outside public mode)."""
    if not guards.public_mode():
        return ""
    return f"The public demo allows {guards.FollowUpCaps.from_env().text()}."


def said_text(key: str, typed: str) -> str:
    """What a follow-up run says it sent: the preset's label, or the visitor's words."""
    if key:
        return followups.PRESETS[key]
    return typed if len(typed) <= 80 else typed[:79] + "…"


class FollowUpHandlers(PlaygroundBase):
    def follow_up_choices(self) -> list[tuple[str, str]]:
        return [(label, key) for key, label in followups.PRESETS.items()]

    async def follow_up(
        self, preset: str | None, text: str | None, row: str | None, every: bool | None, sess: Session,
        request: gr.Request | None = None,
    ) -> AsyncIterator[Frame]:  # fmt: skip
        """Follow up on the grid's cells: the `follow_up` API endpoint. `preset` is a
        preset key or label (default: "Clarify benign intent"); typed `text` wins over
        it (capped like a custom prompt). Without `row`, every cell whose latest turn
        is a refusal (every answered cell with `every`); with `row`, every model of that row."""
        pg: Any = self  # the Playground: `_drive` and the frames are its own
        sess = sess if isinstance(sess, Session) else Session()
        prev = sess.run
        if prev is None or not sess.results:
            yield pg.refusal_frame(sess, NOTHING_TO_FOLLOW)
            return
        if sess.running:
            yield pg.refusal_frame(sess, STILL_RUNNING)
            return
        if sess.shown_run is not prev:  # the page shows an earlier run's grid (`history`)
            yield pg.refusal_frame(sess, EARLIER_RUN)
            return
        rows = [str(row)] if row else None
        try:
            key, typed = followups.resolve(preset, text)
            turns = [r for conversation in sess.conversation_turns(prev).values() for r in conversation]
            planned = followups.plan(turns, preset, text, all_cells=bool(every) or rows is not None, rows=rows)
        except followups.FollowUpError as exc:
            yield pg.refusal_frame(sess, str(exc))
            return
        planned, capped = _within_public_caps(planned)
        if not planned and capped:
            yield pg.refusal_frame(sess, CAPPED.format(caps=guards.FollowUpCaps.from_env().text()))
            return
        if not planned:
            where = f"row {row}" if row else "the grid"
            hint = "" if every or row else " (tick “every answered cell” to follow up on answers too)"
            yield pg.refusal_frame(sess, f"Nothing to follow up on in {where}: no answer there is a refusal{hint}.")
            return
        said = said_text(key, typed)
        n = len(planned)
        note = f"Follow-up “{said}” sent to {n} cell{'s' if n != 1 else ''}; earlier turns are collapsed in each cell."
        if capped:
            note += f" {capped} conversation{'s' if capped != 1 else ''} at the public demo's limit left out."
        async for frame in pg._drive(
            sess, list(prev.specs), list(prev.prompts), [note], prev.params, prev.repeats, prev.judge,
            visitor=request, follow_ups=tuple(planned), follow_of=prev, said=said, settle=prev.settles,
        ):  # fmt: skip
            yield frame

    async def follow_up_click(
        self, sess: Session, evt: gr.EventData, request: gr.Request | None = None
    ) -> AsyncIterator[Frame]:
        """A row's follow-up box in the grid (`live_grid.js` sends the feed's `follow_up` event)."""
        payload = getattr(evt, "_data", None) or {}
        async for frame in self.follow_up(
            str(payload.get("preset") or ""), str(payload.get("text") or ""), str(payload.get("row") or ""),
            True, sess, request,
        ):  # fmt: skip
            yield frame


class FollowUpPanel:
    """The follow-up box under the grid (every row at once) and the hidden row input
    of the `follow_up` endpoint; `layout.py` wires them."""

    def __init__(self, pg: FollowUpHandlers):
        with gr.Accordion("Follow up on the refusals (every row)", open=False, elem_id="follow_up"):
            gr.Markdown(
                "Send one more message, in the same conversation, to every cell whose latest answer is a "
                "refusal: each row's box in the grid sends it to every model of that row. The scoreboard "
                "then shows each model's relent rate; the other rates stay first-turn only. " + follow_up_limits_text()
            )
            with gr.Row():
                self.preset = gr.Dropdown(
                    pg.follow_up_choices(), value=followups.DEFAULT_PRESET, label="Follow-up",
                    elem_id="follow_up_preset", scale=2, allow_custom_value=True,  # API callers may pass a label
                )  # fmt: skip
                self.text = gr.Textbox(
                    label="Or your own words (win over the preset)", max_lines=4, elem_id="follow_up_text", scale=3,
                    placeholder="e.g. It's for a chemistry class.",
                )  # fmt: skip
            with gr.Row():
                self.every = gr.Checkbox(
                    False, label="every answered cell, not only refusals", elem_id="follow_up_every"
                )
                self.send = gr.Button("Follow up", variant="secondary", elem_id="follow_up_send", scale=0)
            self.row = gr.Textbox("", visible=False, elem_id="follow_up_row")

    @property
    def inputs(self) -> list[Any]:
        return [self.preset, self.text, self.row, self.every]
