"""The review queue's panel: one answer at a time, the prompt and the answer's
opening large, the verdict and how sure it is, and one key per decision shown
on screen (`review_queue.js` listens for them while the panel has the focus).
Pure: state in, escaped HTML out."""

from __future__ import annotations

from ...types import CellResult
from .grid_view import how_sure
from .safe_html import VERDICT_TEXT, attr, safe_text

OPENING_CHARS = 700
"""How much of the answer the panel shows: where a refusal or a redirection shows itself."""
CHOICES: tuple[tuple[str, str, str], ...] = (
    ("A", "direct_answer", "answer"),
    ("R", "direct_refusal", "refusal"),
    ("I", "indirect_refusal", "indirect refusal"),
    ("S", "skip", "skip"),
)
"""(key, decision, words): the keys the panel answers to, in the order shown."""
WHY = (
    "Unsure verdicts come first; a few sure ones are drawn at random too, so that your answers correct "
    "the score without bias. Each choice is your verdict: it moves the scoreboard at once."
)


def review_button_label(unsure: int, waiting: int) -> str:
    """The control's words: "Review 7 unsure" (the queue also holds sure answers to sample)."""
    if not waiting:
        return "Review: nothing to review"
    return f"Review {unsure} unsure"


def render_review(
    result: CellResult | None,
    *,
    label: str = "",
    p_refusal: float | None = None,
    sure: bool | None = None,
    left: int = 0,
    done: int = 0,
) -> str:
    """The panel for `result` (None: the queue is empty, said so)."""
    if result is None:
        what = f"You reviewed {done} answer{'s' if done != 1 else ''}. " if done else ""
        return (
            '<section class="rq rq-empty" tabindex="-1" role="region" aria-label="Review queue">'
            f'<p class="rq-status">{safe_text(what)}Nothing left to review: every scored answer has a '
            "person's verdict or was skipped.</p>"
            '<p class="rq-keys"><button type="button" class="rq-close"><kbd>Esc</kbd> close</button></p></section>'
        )
    verdict = VERDICT_TEXT.get(label, label)
    sure_words = how_sure(p_refusal, sure, result.verdict_source)
    answer = result.response[:OPENING_CHARS]
    more = "…" if len(result.response) > OPENING_CHARS else ""
    keys = "".join(
        f'<button type="button" class="rq-do" data-label="{attr(decision)}" aria-keyshortcuts="{key}">'
        f"<kbd>{key}</kbd> {safe_text(words)}</button>"
        for key, decision, words in CHOICES
    )
    return (
        f'<section class="rq" tabindex="-1" role="region" aria-label="Review queue" data-cell="{attr(result.cell_id)}" '
        f'data-left="{left}" data-done="{done}">'
        f'<p class="rq-status">{left} left · {done} reviewed · <b>{safe_text(result.model)}</b> · '
        f"{safe_text(result.split)} · {safe_text(result.category)}</p>"
        f'<p class="rq-verdict">The verdict says <b>{safe_text(verdict)}</b>'
        f"{f' ({safe_text(sure_words)})' if sure_words else ''}. What is it?</p>"
        f'<div class="rq-label">Prompt</div><div class="rq-prompt" tabindex="0">{safe_text(result.prompt)}</div>'
        f'<div class="rq-label">Answer (opening)</div>'
        f'<div class="rq-answer" tabindex="0">{safe_text(answer)}{more}</div>'
        f'<p class="rq-keys">{keys}<button type="button" class="rq-close"><kbd>Esc</kbd> close</button></p>'
        f'<p class="rq-why">{safe_text(WHY)}</p></section>'
    )
