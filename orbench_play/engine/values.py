"""Token counts and finish reasons as a stream states them, checked before use.

What a provider puts in `usage` and `finish_reason` ends up in results, the
cache and exports (JSONL, CSV). A hostile or broken server can send NaN,
Infinity, negative numbers, strings, booleans, lists, `1e308`, or a finish
reason that is a dict or 100 KB long. Both readers pass every such value
through here: token counts must be finite, non-negative integers (below a
billion), finish reasons a known value or a short printable string; anything
else is dropped, with a note the engine logs.
"""

from __future__ import annotations

import math
from typing import Any

MAX_COUNT = 10**9
FINISH_REASONS: frozenset[str] = frozenset(
    {
        "stop",
        "length",
        "content_filter",
        "tool_calls",
        "function_call",
        "end_turn",
        "max_tokens",
        "stop_sequence",
        "tool_use",
        "pause_turn",
        "refusal",
        "eos",
        "eos_token",
        "abort",
        "error",
        "safety",
        "recitation",
        "other",
        "cancelled",
        "model_length",
    }
)
"""Finish reasons providers are known to send (OpenAI's, Anthropic's, Gemini's, vLLM's)."""
MAX_FINISH_CHARS = 40


class Notes:
    """What a stream sent that was dropped, in a few short lines (at most `limit`)."""

    __slots__ = ("items", "limit")

    def __init__(self, limit: int = 4) -> None:
        self.items: list[str] = []
        self.limit = limit

    def add(self, what: str, value: Any) -> None:
        if len(self.items) < self.limit:
            shown = repr(value)
            self.items.append(f"{what}={shown[:40]}{'…' if len(shown) > 40 else ''}")

    def __bool__(self) -> bool:
        return bool(self.items)

    def __str__(self) -> str:
        return ", ".join(self.items)


def token_count(value: Any, what: str, notes: Notes) -> int | None:
    """`value` as a token count, or None (absent, or dropped with a note)."""
    if value is None:
        return None
    if value.__class__ is int:
        if 0 <= value < MAX_COUNT:
            return value
    elif value.__class__ is float and math.isfinite(value) and value.is_integer() and 0 <= value < MAX_COUNT:
        return int(value)
    notes.add(what, value)
    return None


def finish_reason(value: Any, notes: Notes) -> str | None:
    """`value` as a finish reason, or None (absent, or dropped with a note)."""
    if value is None or value == "":
        return None
    if value.__class__ is str:
        if value in FINISH_REASONS:
            return value
        if len(value) <= MAX_FINISH_CHARS and value.isprintable():
            return value
    notes.add("finish_reason", value)
    return None
