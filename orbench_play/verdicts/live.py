"""Provisional verdicts while an answer streams, re-classified cheaply."""

from __future__ import annotations

from ..types import Verdict
from .indirect import LATE_OFFER_CHARS, SHORT_REFUSAL
from .offline import classify, provider_verdict
from .text import HEAD_CHARS

LIVE_STEP = 40
"""Re-classify a stream at most once per this many new characters (or at a sentence end)."""
LIVE_FIRST = 12
"""The first provisional verdict waits for this many characters (or a sentence end)."""
LIVE_STABLE = HEAD_CHARS + 100
"""Past this length the opening the classifier reads no longer changes."""
LIVE_REFUSAL_STABLE = SHORT_REFUSAL + LATE_OFFER_CHARS
"""…but a direct refusal may still turn indirect until here (an alternative
offered after the reasons), so its stream is read this far."""
LIVE_LATE_STEP = 2 * LIVE_STEP
"""Past LIVE_STABLE, re-check a direct refusal this often (sentence ends no longer count)."""


class LiveVerdict:
    """Turns a stream of deltas into provisional verdicts, cheaply.

    `feed` returns a Verdict only when the provisional label changes, so the
    engine emits a `verdict` event per change rather than per chunk. It
    re-classifies only every `LIVE_STEP` characters or at a sentence end (the
    first time after `LIVE_FIRST` characters), and stops once the text is past
    what the classifier reads: LIVE_STABLE characters, or LIVE_REFUSAL_STABLE
    for a direct refusal so far, whose alternatives may come after its reasons.
    """

    __slots__ = ("_checked_at", "_done", "_last", "_len", "_parts", "_prompt")

    def __init__(self, prompt: str = "") -> None:
        self._prompt = prompt
        """The prompt the answer is for: a long refusal so far is read against
        it (`classify`'s task reading), so an answer that follows a disclaimer
        shows as one while it streams, not only at the end."""
        self._parts: list[str] = []
        self._len = 0
        self._last: str | None = None
        self._checked_at = 0
        self._done = False

    @property
    def label(self) -> str | None:
        """The latest provisional label (None before any text)."""
        return self._last

    def feed(self, delta: str) -> Verdict | None:
        if not delta or self._done:
            return None
        self._parts.append(delta)
        self._len += len(delta)
        boundary = delta.rstrip()[-1:] in (".", "!", "?", ":") or "\n" in delta
        if self._last is not None and self._len - self._checked_at < LIVE_STEP and not boundary:
            return None
        if self._len > LIVE_STABLE and self._len - self._checked_at < LIVE_LATE_STEP:
            return None
        if self._last is None and self._len < LIVE_FIRST and not boundary:
            return None  # one or two words say little ("I" alone reads as a refusal)
        text = "".join(self._parts)
        self._parts = [text]
        if not text.strip():
            return None
        self._checked_at = self._len
        verdict = classify(text, final=False, prompt=self._prompt)
        if self._len >= (LIVE_REFUSAL_STABLE if verdict.label == "direct_refusal" else LIVE_STABLE):
            self._done = True
        if verdict.label != self._last:
            self._last = verdict.label
            return verdict
        return None

    def finish(self, text: str, finish_reason: str | None, prompt: str = "") -> Verdict:
        """The final verdict: the provider's signal, else the classifier, which
        also reads the whole answer against its `prompt` (provisional verdicts
        do not: they stay as cheap and as stable as the opening they read)."""
        return provider_verdict(text, finish_reason) or classify(text, final=True, prompt=prompt)
