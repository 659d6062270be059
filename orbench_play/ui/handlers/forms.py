"""Form values to typed settings: the checks behind every run control.

Pure functions (no Gradio): each raises ValueError with a sentence the page
shows as it is.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from ...asking.prompts import SYSTEM_PROMPTS, PromptError, resolve_system_prompt
from ...types import REASONING_EFFORTS, GenerationParams, Prompt
from ..state.query import DEFAULT_MAX_TOKENS, MAX_MAX_TOKENS, MAX_REPEATS, MAX_SYSTEM_CHARS

MAX_PROMPT_CHARS = MAX_SYSTEM_CHARS
REPEAT_HINT = (
    "⚠ Repeats at temperature 0 (or the provider's default) mostly give the same answer k times: "
    "set a temperature such as 0.7 to see how stable the verdicts are."
)


def custom_prompt(text: str) -> Prompt:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    return Prompt(row_id=f"custom:{digest}", split="custom", category="custom", text=text)


def optional_float(value: Any, name: str, lo: float, hi: float, *, low_open: bool = False) -> float | None:
    """A form number that may be empty (None = the provider's default)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number (got {value!r}).") from None
    if math.isnan(number) or not (lo < number <= hi if low_open else lo <= number <= hi):
        bounds = f"{'above' if low_open else 'from'} {lo:g} {'up to' if low_open else 'to'} {hi:g}"
        raise ValueError(f"{name} must be {bounds}, or empty for the provider's default (got {number:g}).")
    return number


def repeats_value(value: Any) -> int:
    try:
        k = int(value if value not in (None, "") else 1)
    except (TypeError, ValueError):
        raise ValueError(f"Repeats must be a whole number from 1 to {MAX_REPEATS}.") from None
    if not 1 <= k <= MAX_REPEATS:
        raise ValueError(f"Repeats must be from 1 to {MAX_REPEATS} (got {k}).")
    return k


def repeat_hint(repeats: Any, temperature: Any) -> str:
    """The warning shown when repeats > 1 but the temperature is unset or 0."""
    try:
        k = int(repeats or 1)
    except (TypeError, ValueError):
        k = 1
    try:
        t = float(temperature) if temperature not in (None, "") else 0.0
    except (TypeError, ValueError):
        t = 0.0
    return REPEAT_HINT if k > 1 and t <= 0 else ""


def generation_params(
    max_tokens: Any,
    preset: str | None = "none",
    custom_system: str | None = "",
    temperature: Any = None,
    top_p: Any = None,
    reasoning_effort: Any = None,
) -> GenerationParams:
    """The run's generation settings from the form. A non-empty custom system
    prompt wins over the preset; empty temperature/top_p/reasoning effort mean
    the provider's default. Raises ValueError with a message for the page."""
    effort = str(reasoning_effort or "").strip().lower() or None
    if effort is not None and effort not in REASONING_EFFORTS:
        raise ValueError(f"Reasoning effort must be one of {', '.join(REASONING_EFFORTS)}, or empty (got {effort!r}).")
    try:
        tokens = int(max_tokens)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an infinite number from the API
        tokens = DEFAULT_MAX_TOKENS
    custom = (custom_system or "").strip()
    if len(custom) > MAX_PROMPT_CHARS:
        raise ValueError(f"The system prompt is too long ({len(custom):,} characters; at most {MAX_PROMPT_CHARS:,}).")
    if custom:
        try:
            text, pid = resolve_system_prompt(custom, allow_files=False)
        except PromptError as exc:
            raise ValueError(str(exc)) from None
    else:
        key = (preset or "none").strip() or "none"
        if key not in SYSTEM_PROMPTS:
            raise ValueError(f"Unknown system prompt preset {key!r}; choose one of {', '.join(SYSTEM_PROMPTS)}.")
        text, pid = resolve_system_prompt(key, allow_files=False)
    return GenerationParams(
        system_prompt=text,
        system_prompt_id=pid,
        temperature=optional_float(temperature, "Temperature", 0.0, 2.0),
        top_p=optional_float(top_p, "top_p", 0.0, 1.0, low_open=True),
        max_tokens=max(16, min(MAX_MAX_TOKENS, tokens)),
        reasoning_effort=effort,
    )
