"""Untrusted text made safe for HTML, and the small formatters every view shares.

Everything a model, a dataset row or a user typed is untrusted text: it goes
through `safe_text` (html.escape plus visible stand-ins for control and
bidi-override characters) and is only ever placed in text or quoted-attribute
positions, so an answer full of `<script>` or `onerror=` shows as characters and
never becomes an element. No Gradio import in the `ui` view modules: they are
pure functions from state to HTML, unit-tested on their own.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any

from ...types import CLASS_LABELS, VERDICTS
from ...verdicts.classes import CLASSES

VERDICT_TEXT: dict[str, str] = {**{c.label: c.name for c in CLASSES}, "error": "error", "pending": "waiting"}
"""A verdict in words: the classes by their one definition's names."""
OVERRIDE_LABELS: tuple[str, ...] = CLASS_LABELS
MAX_SHOWN_CHARS = 4000
"""Longer answers are cut in the grid (the export keeps everything)."""

# C0/C1 controls except tab and newline, the Unicode bidi controls
# (embeddings, overrides, isolates, marks) that can make text lie about itself,
# and lone surrogates (never valid text; they cannot be encoded for the page).
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI + "\ud800-\udfff]")


def _stand_in(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟: the Control Pictures block
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\u27e8U+{code:04X}\u27e9"  # ⟨U+202E⟩


def neutralise(text: str) -> str:
    """Replace control and bidi-override characters with visible stand-ins."""
    return _UNSAFE_CHARS.sub(_stand_in, text)


def safe_text(text: Any) -> str:
    """Untrusted text → HTML text that renders as the same characters, inert.

    `{`, `}` and `$` are entity-encoded too, so no client-side template syntax
    (`${...}`, `{{...}}`) can ever be formed from model output.
    """
    out = html.escape(neutralise("" if text is None else str(text)), quote=True)
    return out.replace("$", "&#36;").replace("{", "&#123;").replace("}", "&#125;").replace("`", "&#96;")


def attr(text: Any) -> str:
    """A value for a double-quoted attribute."""
    return safe_text(text)


JUDGE_FAILED = " (judge failed)"
"""The end of a `verdict_source` whose LLM judge fell back (`engine.judging.judged_source`)."""

SOURCE_TEXT: dict[str, str] = {
    "provider": "provider signal",
    "phrases": "refusal phrases",
    "classifier": "classifier",
    "baseline": "string match",
    "keyword": "classifier",
    "user": "set by you",
}
"""Which layer decided a verdict, in words (`data-source` keeps the raw name)."""


def source_text(source: str) -> str:
    """A short human label for a `verdict_source`: "classifier", "judge: gpt-4o", "set by you"."""
    if not source:
        return ""
    if source.endswith(JUDGE_FAILED):  # the offline verdict stood in for a judge that gave none
        return source_text(source[: -len(JUDGE_FAILED)]) + JUDGE_FAILED
    if source.startswith("llm:"):
        return "judge: " + source[4:]
    return SOURCE_TEXT.get(source, source)


# --- small formatters ---------------------------------------------------------------


def fmt_seconds(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def fmt_cost(value: float | None) -> str:
    if not value:
        return "$0"
    return f"${value:.4f}" if value >= 0.0001 else f"${value:.2e}"


def fmt_pct(rate: float | None) -> str:
    return "–" if rate is None else f"{100 * rate:.1f}%"


def verdict_counts_text(labels: Iterable[str]) -> str:
    counts = dict.fromkeys(VERDICTS, 0)
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return ", ".join(f"{VERDICT_TEXT.get(k, k)} {v}" for k, v in counts.items() if v)
