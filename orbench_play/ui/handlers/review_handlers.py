"""The review queue's handlers (page-only events, wired by `layout.py`): open the
queue at the next answer worth a look, take a decision (a user verdict, through
the same path as a badge menu's override, or a skip) and show the next one, close
it; and the control's label ("Review 7 unsure"). The queue's policy is
`state.review_queue` over `scoring.review_policy`.

A decision answers with the panel's next answer, the control's label, and what
an override answers with (the grid's changed badge through the live feed, the
scoreboard and plot, the downloads): the score moves at once.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from ...scoring import sureness
from ..state.session import Session, usable_session
from ..views.review_view import CHOICES, render_review, review_button_label
from .base import PlaygroundBase
from .frames import Frame, toast

DECISIONS = frozenset(decision for _, decision, _ in CHOICES)


class ReviewHandlers(PlaygroundBase):
    def review_button(self, sess: Session) -> dict[str, Any]:
        """The control as the session has it now (chained after runs, overrides and reviews)."""
        if not isinstance(sess, Session) or sess.closed:
            return gr.update(value=review_button_label(0, 0), interactive=False)
        waiting = sess.queue.waiting(sess.results, sess.overrides)
        unsure = sess.queue.unsure_left(sess.results, sess.overrides)
        return gr.update(value=review_button_label(unsure, len(waiting)), interactive=bool(waiting))

    def review_panel(self, sess: Session) -> str:
        """The panel at the queue's next answer (or saying none is left)."""
        cid = sess.next_review()
        done = len(sess.queue.reviewed)
        if cid is None:
            return render_review(None, done=done)
        result = sess.results[cid]
        p, sure = sureness.of_result(result)
        left = len(sess.queue.waiting(sess.results, sess.overrides))
        return render_review(result, label=result.verdict, p_refusal=p, sure=sure, left=left, done=done)

    async def review_open(self, sess: Session) -> tuple[str, Session]:
        """The control: the panel opens at the next answer."""
        sess = usable_session(sess)
        sess.touch()
        return self.review_panel(sess), sess

    async def review_close(self, sess: Session) -> tuple[str, Session]:
        """Escape or the close button: the panel empties (the page has already hidden it)."""
        sess = usable_session(sess)
        return "", sess

    async def review_decide(self, sess: Session, evt: gr.EventData) -> tuple:
        """A decision in the panel (`review_queue.js`: {cell, label}): the panel's next
        answer, the control, then the override's outputs (`Frame.page` of kind override)."""
        pg: Any = self  # the Playground: the frames render through it
        sess = usable_session(sess)
        sess.touch()
        payload = getattr(evt, "_data", None) or {}
        cid, decision = str(payload.get("cell", "")), str(payload.get("label", ""))
        error = f"Unknown decision {decision!r}." if decision not in DECISIONS else sess.review(cid, decision)
        if error:
            toast(error)
        frame = Frame(pg, sess, kind="override", final=True)
        return (self.review_panel(sess), self.review_button(sess), *frame.page())
