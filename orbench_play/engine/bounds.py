"""How much one answer stream may send, and the byte stream that holds it to that.

A model endpoint is untrusted (a public demo lets visitors add their own), so
nothing it sends may cost more than the answer it was asked for. Each cell
gets `StreamBounds` from its max tokens:

- **text**: the answer, and the thoughts apart, stop at `CHARS_PER_TOKEN` x
  max tokens characters (at least `MIN_TEXT_CHARS`). Real answers use about 4
  characters a token; a stream past 32 is ignoring max tokens, and the cell
  ends there, cut by us, never cached as complete.
- **chunks**: at most `CHUNKS_PER_TOKEN` x max tokens + `SPARE_CHUNKS`, with
  or without text, so a flood of empty chunks costs little CPU on either reader.
- **bytes**: one SSE event (and so one line) at most `EVENT_BYTES_PER_CHAR`
  x the text cap (at least 64 KiB); the decoded body at most `BODY_BYTES_PER_CHUNK`
  per allowed chunk plus two events.

`BoundedBody` enforces the byte bounds where the bytes arrive: it replaces the
unread body of the HTTP response under an OpenAI SDK stream (both readers
use one), decodes gzip, deflate and br itself in 64 KiB steps (any other
content encoding is refused), strips a leading byte-order mark, notes a
`[DONE]` event, and raises `StreamOverCap` the moment a bound is passed. So a
cell's memory is O(its bounds) however the server misbehaves: a gzip bomb
inflates 64 KiB at a time, a line that never ends stops at the event bound.
"""

from __future__ import annotations

import functools
import sys
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .failures import CellFailure, malformed_stream

CHARS_PER_TOKEN = 32
MIN_TEXT_CHARS = 8192
CHUNKS_PER_TOKEN = 4
SPARE_CHUNKS = 1024
EVENT_BYTES_PER_CHAR = 8
MIN_EVENT_BYTES = 64 * 1024
BODY_BYTES_PER_CHUNK = 1024
DECODE_STEP = 64 * 1024
"""A compressed body is inflated at most this many bytes at a time."""

_BOM = b"\xef\xbb\xbf"
_BLANK_LINES = (b"\n\n", b"\r\r", b"\n\r\n")
_DONE_EVENTS = (b"\ndata: [DONE]", b"\ndata:[DONE]", b"\rdata: [DONE]", b"\rdata:[DONE]")


@dataclass(frozen=True, slots=True)
class StreamBounds:
    """What one cell's stream may send (see the module docstring)."""

    max_tokens: int
    text_chars: int
    chunks: int
    event_bytes: int
    body_bytes: int

    @classmethod
    def for_tokens(cls, max_tokens: int) -> StreamBounds:
        tokens = max(1, int(max_tokens))
        text = max(MIN_TEXT_CHARS, CHARS_PER_TOKEN * tokens)
        chunks = CHUNKS_PER_TOKEN * tokens + SPARE_CHUNKS
        event = max(MIN_EVENT_BYTES, EVENT_BYTES_PER_CHAR * text)
        return cls(tokens, text, chunks, event, BODY_BYTES_PER_CHUNK * chunks + 2 * event)


class StreamOverCap(CellFailure):
    """The server sent more than the cell's bounds allow; reading stopped there."""


def _kept(chars: int) -> str:
    return f" after {chars} characters (partial text kept, not scored)" if chars else ""


def text_over_cap(bounds: StreamBounds, what: str, chars: int) -> StreamOverCap:
    return StreamOverCap(
        f"Stopped reading: the {what} passed {bounds.text_chars:,} characters, more than max tokens "
        f"({bounds.max_tokens:,}) allows, so the server was not keeping to it{_kept(chars)}."
    )


def chunks_over_cap(bounds: StreamBounds, chars: int) -> StreamOverCap:
    return StreamOverCap(
        f"Stopped reading: the server sent more than {bounds.chunks:,} chunks, more than max tokens "
        f"({bounds.max_tokens:,}) allows{_kept(chars)}."
    )


def bytes_over_cap(what: str, limit: int, chars: int) -> StreamOverCap:
    return StreamOverCap(f"Stopped reading: {what} passed {limit:,} bytes{_kept(chars)}.")


# -- decoding ---------------------------------------------------------------------


Decoder = Callable[[bytes], Iterator[bytes]]


def _zlib_decoder(wbits: int) -> Decoder:
    inflater = zlib.decompressobj(wbits)

    def decode(data: bytes) -> Iterator[bytes]:
        out = inflater.decompress(data, DECODE_STEP)
        while out:
            yield out
            out = inflater.decompress(inflater.unconsumed_tail, DECODE_STEP)

    return decode


def _deflate_decoder() -> Decoder:
    """`deflate` as servers send it: zlib-wrapped, or (wrongly, but commonly) raw."""
    chosen: list[Decoder] = []

    def decode(data: bytes) -> Iterator[bytes]:
        if not chosen:
            wrapped = len(data) >= 2 and data[0] & 0x0F == 8 and ((data[0] << 8) | data[1]) % 31 == 0
            chosen.append(_zlib_decoder(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS))
        yield from chosen[0](data)

    return decode


def _brotli_decoder() -> Decoder | None:
    try:
        import brotli  # type: ignore[import-untyped]  # C bindings without stubs
    except ImportError:
        return None
    inflater = brotli.Decompressor()
    if not hasattr(inflater, "process"):
        return None

    def decode(data: bytes) -> Iterator[bytes]:
        out = inflater.process(data, output_buffer_limit=DECODE_STEP)
        while out:
            yield out
            out = inflater.process(b"", output_buffer_limit=DECODE_STEP)

    return decode


def decoder_for(encoding: str) -> Decoder | None:
    """A bounded decoder for a Content-Encoding value; None: the identity.
    Raises CellFailure for an encoding we do not read."""
    codings = [c.strip().lower() for c in encoding.split(",") if c.strip().lower() not in ("", "identity", "none")]
    if not codings:
        return None
    if len(codings) == 1:
        coding = codings[0]
        if coding in ("gzip", "x-gzip"):
            return _zlib_decoder(zlib.MAX_WBITS | 16)
        if coding == "deflate":
            return _deflate_decoder()
        if coding == "br":
            found = _brotli_decoder()
            if found is not None:
                return found
    shown = ", ".join(codings)[:40]
    raise CellFailure(
        f"The server sent its answer with Content-Encoding {shown!r}, which is not read here (gzip, deflate and br are)."
    )


# -- the bounded body ---------------------------------------------------------------


class BodyWatch:
    """What the bounded body saw, for the readers: bytes so far, a `[DONE]`."""

    __slots__ = ("bytes", "done", "event", "started", "tail")

    def __init__(self) -> None:
        self.bytes = 0
        self.event = 0
        """Bytes since the last blank line (the event being received)."""
        self.done = False
        self.started = False
        self.tail = b""


def _decoded(decode: Decoder, raw: bytes, chars: Callable[[], int]) -> Iterator[bytes]:
    try:
        yield from decode(raw)
    except Exception as exc:  # zlib.error, brotli.error: a body that does not decode
        raise malformed_stream("encoding", chars()) from exc


def _event_end(tail: bytes, piece: bytes) -> int:
    """Where the last blank line in `tail + piece` ends, as an index into
    `piece` (0 when it ends exactly at the piece's start); -1 when there is none."""
    end = -1
    for blank in _BLANK_LINES:
        at = piece.rfind(blank)
        if at >= 0 and at + len(blank) > end:
            end = at + len(blank)
    if end >= 0:
        return end
    edge = tail[-2:]
    head = edge + piece[:2]  # a blank line across the boundary
    for blank in _BLANK_LINES:
        at = head.rfind(blank)
        if at >= 0:
            end = max(end, at + len(blank) - len(edge))
    return max(end, 0) if end >= 0 else -1


def _check(piece: bytes, bounds: StreamBounds, watch: BodyWatch, chars: Callable[[], int]) -> None:
    """Count one decoded piece against the bounds; note a `[DONE]` event."""
    watch.bytes += len(piece)
    if watch.bytes > bounds.body_bytes:
        raise bytes_over_cap("the answer stream", bounds.body_bytes, chars())
    end = _event_end(watch.tail, piece)
    watch.event = watch.event + len(piece) if end < 0 else len(piece) - end
    if watch.event > bounds.event_bytes:
        raise bytes_over_cap("one event of the answer stream", bounds.event_bytes, chars())
    if not watch.done and (b"[DONE]" in piece or b"[DONE]" in watch.tail[-5:] + piece[:5]):
        window = watch.tail + piece
        watch.done = any(d in window for d in _DONE_EVENTS)
    watch.tail = piece[-16:] if len(piece) >= 16 else (watch.tail + piece)[-16:]


@functools.cache
def _stream_class(module: str) -> type | None:
    """A subclass of the HTTP library's `AsyncByteStream` (httpx or the OpenAI
    SDK's httpx2: each checks `isinstance` against its own) that yields the
    body decoded and counted against the bounds, in one generator."""
    base = getattr(sys.modules.get(module), "AsyncByteStream", None)
    if not isinstance(base, type):
        return None

    class Bounded(base):  # type: ignore[misc, valid-type]  # the library's own base class, found at run time
        def __init__(self, inner: Any, decode: Decoder | None, bounds: StreamBounds, watch: BodyWatch, chars: Any):
            self._inner, self._decode, self._bounds, self._watch, self._chars = inner, decode, bounds, watch, chars

        async def __aiter__(self) -> AsyncIterator[bytes]:
            decode, bounds, watch, chars = self._decode, self._bounds, self._watch, self._chars
            held = b""  # at most the first two bytes of a body, while they could start a BOM
            async for raw in self._inner:
                for piece in (raw,) if decode is None else _decoded(decode, raw, chars):
                    if not watch.started:
                        held += piece
                        if len(held) < 3 and _BOM.startswith(held):
                            continue
                        watch.started = True
                        piece, held = (held[3:] if held.startswith(_BOM) else held), b""
                        watch.tail = b"\n"  # the body's start counts as a line start
                        if not piece:
                            continue
                    _check(piece, bounds, watch, chars)
                    yield piece
            if held:
                watch.bytes += len(held)
                yield held

        async def aclose(self) -> None:
            await self._inner.aclose()

    return Bounded


def bound_body(http: Any, bounds: StreamBounds, chars: Callable[[], int]) -> BodyWatch | None:
    """Put the bounds on an unread HTTP response's body (httpx or httpx2): its
    content encoding is decoded by us, in bounded steps, from now on. None when
    the response is not one we can bound (read, or of an unknown library)."""
    if getattr(http, "is_stream_consumed", True) is not False or hasattr(http, "_decoder"):
        return None
    cls = _stream_class(type(http).__module__)
    stream = getattr(http, "stream", None)
    if cls is None or stream is None:
        return None
    decode = decoder_for(str(http.headers.get("content-encoding", "")))
    if "content-encoding" in http.headers:
        del http.headers["content-encoding"]  # decoded here; the library must not decode again
    watch = BodyWatch()
    http.stream = cls(stream, decode, bounds, watch, chars)
    return watch
