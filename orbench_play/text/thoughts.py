"""A reasoning model's thoughts apart from its answer, from any stream shape.

Reasoning models send their thoughts in one of several ways, and the verdict
must read only the answer (OR-Bench's checker sees the response, not the chain
of thought). `Splitter` is the one place that turns a stream into (thoughts,
answer), for both stream readers and for cache entries written before it:

- a reasoning field in the delta: `reasoning_content` (DeepSeek, vLLM, xAI),
  `reasoning` (vLLM, Groq, Ollama, OpenRouter), `reasoning_details` (OpenRouter:
  `reasoning.text` / `reasoning.summary` items); a delta that carries the same
  thoughts in several of them is counted once (the first present wins);
- `content` given as a list of typed parts: `thinking` / `reasoning` parts are
  thoughts (their text may itself be a list of parts, as Magistral sends it),
  `text` parts are the answer, `refusal` parts a refusal;
- inline `<think>…</think>` at the start of the content (R1-style models on
  Together, vLLM, Ollama), the tags possibly split across chunks, and a stream
  that only *closes* the tag (the chat template opened it, so the stream starts
  inside the thoughts): the text before a lone `</think>` turns out to have
  been thoughts, and the caller is told to move what it already has.

It works piece by piece; a plain answer costs one `"<" in piece` scan per
piece after its first characters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

OPEN, CLOSE = "<think>", "</think>"
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")
_THOUGHT_PARTS = frozenset({"thinking", "reasoning", "reasoning.text", "reasoning.summary"})

_START, _THINK, _LEAD, _UNSURE, _ANSWER = range(5)
"""Modes: nothing seen yet · inside <think> · just after </think> (the answer's
leading blank space is dropped) · answer a lone </think> may still turn into
thoughts · answer."""


def _held_suffix(text: str, tag: str) -> int:
    """Length of the longest end of `text` that could be the start of `tag`."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-n:]):
            return n
    return 0


def detail_text(item: Any) -> str:
    """The thought text of one `reasoning_details` item ("" for encrypted ones)."""
    if item.__class__ is not dict:
        return ""
    text = item.get("text") or item.get("summary")
    return text if text.__class__ is str else ""


def part_text(value: Any) -> str:
    """The text of a part's payload: a string, or a list of text parts."""
    if value.__class__ is str:
        return value
    if value.__class__ is list:
        return "".join(part_text(p.get("text")) for p in value if p.__class__ is dict)
    return ""


class Splitter:
    """Feed it a stream's pieces; it calls `answer(text)` and `thought(text)`
    in stream order, `moved()` when a lone `</think>` shows that the answer so
    far was thoughts (the caller moves it, then more thoughts may follow), and
    `refused()` when the answer comes in a refusal field."""

    __slots__ = ("_answer", "_held", "_mode", "_moved", "_refused", "_thought")

    def __init__(
        self,
        answer: Callable[[str], None],
        thought: Callable[[str], None],
        moved: Callable[[], None],
        refused: Callable[[], None] = lambda: None,
    ):
        self._answer, self._thought, self._moved, self._refused = answer, thought, moved, refused
        self._mode = _START
        self._held = ""

    # -- what a delta carries ------------------------------------------------------

    def delta(self, delta: dict[str, Any]) -> None:
        """One OpenAI-format delta (a dict): its thoughts, then its content."""
        for name in REASONING_FIELDS:
            value = delta.get(name)
            if not value:
                continue
            if name == "reasoning_details":
                if value.__class__ is list:
                    text = "".join(detail_text(item) for item in value)
                    if text:
                        self._thought(text)
            elif value.__class__ is str:
                self._thought(value)
            break  # one field per delta: some providers send the same thoughts in two
        content = delta.get("content")
        if content:
            if content.__class__ is str:
                self.content(content)
            elif content.__class__ is list:
                self.parts(content)
        refusal = delta.get("refusal")
        if refusal and refusal.__class__ is str:
            self.refusal(refusal)

    def parts(self, parts: list[Any]) -> None:
        """`content` as typed parts."""
        for part in parts:
            if part.__class__ is not dict:
                continue
            kind = part.get("type")
            if kind in _THOUGHT_PARTS:
                text = part_text(
                    part.get("thinking") or part.get("reasoning") or part.get("text") or part.get("summary")
                )
                if text:
                    self._thought(text)
            elif kind == "refusal":
                text = part_text(part.get("refusal"))
                if text:
                    self.refusal(text)
            else:
                text = part_text(part.get("text"))
                if text:
                    self.content(text)

    def refusal(self, text: str) -> None:
        """OpenAI's refusal field: the refusal is the answer."""
        self._settle()
        self._refused()
        self._answer(text)

    def thinking(self, text: str) -> None:
        """Thoughts from a reasoning field (LiteLLM's `reasoning_content`)."""
        if text:
            self._thought(text)

    # -- content, with inline tags -------------------------------------------------

    def content(self, piece: str) -> None:
        mode = self._mode
        if mode == _ANSWER:
            self._answer(piece)
        elif mode == _LEAD:
            piece = piece.lstrip()
            if piece:
                self._mode = _ANSWER
                self._answer(piece)
        elif mode == _UNSURE:
            if "<" not in piece and not self._held:
                self._answer(piece)
            else:
                self._unsure(piece)
        elif mode == _THINK:
            self._think(piece)
        else:
            self._start(piece)

    def _start(self, piece: str) -> None:
        text = self._held + piece
        lead = text.lstrip()
        if not lead or (len(lead) < len(OPEN) and OPEN.startswith(lead)):
            self._held = text  # whitespace, or the start of "<think>": wait for more
            return
        self._held = ""
        if lead.startswith(OPEN):
            self._mode = _THINK
            self._think(lead[len(OPEN) :])
        else:
            self._mode = _UNSURE
            self._unsure(text)

    def _think(self, piece: str) -> None:
        text = self._held + piece
        at = text.find(CLOSE)
        if at < 0:
            keep = _held_suffix(text, CLOSE)
            self._held = text[len(text) - keep :] if keep else ""
            if len(text) > keep:
                self._thought(text[: len(text) - keep])
            return
        self._held = ""
        if at:
            self._thought(text[:at])
        self._mode = _LEAD
        self.content(text[at + len(CLOSE) :])

    def _unsure(self, piece: str) -> None:
        """Answer text that a lone `</think>` may still turn into thoughts."""
        text = self._held + piece
        at = text.find(CLOSE)
        if at >= 0:
            self._held = ""
            self._moved()
            if at:
                self._thought(text[:at])
            self._mode = _LEAD
            self.content(text[at + len(CLOSE) :])
            return
        keep = _held_suffix(text, CLOSE)
        self._held = text[len(text) - keep :] if keep else ""
        if len(text) > keep:
            self._answer(text[: len(text) - keep])

    def _settle(self) -> None:
        """Release held text (it was not a tag after all)."""
        held, self._held = self._held, ""
        if not held:
            return
        if self._mode == _THINK:
            self._thought(held)
        elif held.strip():
            self._mode = _UNSURE if self._mode == _START else _ANSWER
            self._answer(held)

    def flush(self) -> None:
        """The stream ended: whatever was held back goes where it was going."""
        self._settle()


def split_text(text: str) -> tuple[str, str]:
    """(thoughts, answer) of a whole text, e.g. a cache entry written before the split."""
    thoughts: list[str] = []
    answer: list[str] = []

    def moved() -> None:
        thoughts.extend(answer)
        answer.clear()

    splitter = Splitter(answer.append, thoughts.append, moved)
    splitter.content(text)
    splitter.flush()
    return "".join(thoughts), "".join(answer)
