"""Repair text that is not valid Unicode before anything keeps it.

JSON may escape a character outside the Basic Multilingual Plane as a UTF-16
surrogate pair (`"\\ud83d\\ude00"`), and a streaming server may split that pair
over two chunks, or send half a pair on its own. Python decodes each half to a
lone surrogate code point, which cannot be encoded as UTF-8: writing it to a
file, a cache or a web page raises `UnicodeEncodeError`. So the engine repairs
text at its boundary: a pair split over two chunks is joined, any surrogate
left alone becomes U+FFFD (the replacement character). Text without
surrogates (nearly all of it) costs one regex scan.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR_OR_LONE = re.compile("([\ud800-\udbff][\udc00-\udfff])|[\ud800-\udfff]")


def _fix(match: re.Match[str]) -> str:
    pair = match.group(1)
    if pair is None:
        return REPLACEMENT
    return chr(0x10000 + ((ord(pair[0]) - 0xD800) << 10) + (ord(pair[1]) - 0xDC00))


def repair_text(text: str) -> str:
    """`text` with surrogate pairs joined and lone surrogates replaced by U+FFFD."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _PAIR_OR_LONE.sub(_fix, text)


def _is_high(char: str) -> bool:
    return "\ud800" <= char <= "\udbff"


class StreamRepair:
    """`repair_text` for text that arrives in pieces: a high surrogate at the end
    of one piece is held back until the next piece says whether it completes a
    pair. Call `flush()` when the stream ends."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        if self._held:
            piece, self._held = self._held + piece, ""
        elif piece.isascii():
            return piece
        if piece and _is_high(piece[-1]) and _SURROGATE.search(piece) is not None:
            piece, self._held = piece[:-1], piece[-1]
        return repair_text(piece)

    def flush(self) -> str:
        held, self._held = self._held, ""
        return REPLACEMENT if held else ""
