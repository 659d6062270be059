"""Stream shapes the fake server sends beyond well-behaved answers.

`fake_openai.FakeOpenAIServer` hands a streamed request here when its
behaviour is one of `SHAPES`: hostile streams a visitor's endpoint could
send (issue 25: bombs, endless streams, trickles, bad values). Each writer
stops as soon as the client goes away, so an endless shape costs the test
process nothing once the engine has hung up.

Modifiers: any further part of the model name (split on `:` and `/`, as the
behaviour is) that is one of `MODIFIERS` changes how the bytes travel, for
every behaviour:

    gzip, deflate, br   the body is compressed so (Content-Encoding set), flushed per write
    zstd                Content-Encoding: zstd on a body that is not compressed (a client must refuse it)
    as-text             Content-Type: text/plain instead of text/event-stream (LiteLLM's wrapper reads it)

e.g. `no-newline/gzip` is a gzip bomb: one `data:` line that never ends, a
megabyte of it per kilobyte on the wire.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

MODIFIERS: frozenset[str] = frozenset({"gzip", "deflate", "br", "zstd", "as-text"})

ENDLESS_WORD = "more "
"""What `endless` streams, one chunk after another, forever."""
BOM = b"\xef\xbb\xbf"
HOSTILE_USAGE_NAN = b'{"prompt_tokens": NaN, "completion_tokens": Infinity, "total_tokens": -Infinity}'
"""Bare NaN/Infinity, as Python's json.dumps writes them (and strict parsers refuse)."""
HOSTILE_USAGE_JUNK: dict[str, Any] = {"prompt_tokens": -5, "completion_tokens": 1e308, "total_tokens": True}
HOSTILE_FINISH: dict[str, Any] = {"type": "stop", "why": ["a", "list"]}
LONG_FINISH = "x" * 100_000


def modifiers(model: str) -> frozenset[str]:
    """The modifiers named in a model name (`endless/gzip` -> {"gzip"})."""
    return frozenset(p for p in model.replace(":", "/").split("/") if p in MODIFIERS)


class Wire:
    """One streamed response's bytes, compressed as its modifiers ask. Every
    write returns False once the client has gone (the writer then stops)."""

    def __init__(self, resp: web.StreamResponse, request: web.Request, mods: frozenset[str]):
        self.resp = resp
        self.request = request
        self._compress: Callable[[bytes], bytes] | None = None
        self._finish: Callable[[], bytes] = lambda: b""
        if "gzip" in mods or "deflate" in mods:
            packer = zlib.compressobj(9, zlib.DEFLATED, 31 if "gzip" in mods else 15)
            self._compress = lambda data: packer.compress(data) + packer.flush(zlib.Z_SYNC_FLUSH)
            self._finish = packer.flush
        elif "br" in mods:
            import brotli

            squeezer = brotli.Compressor()
            self._compress = lambda data: squeezer.process(data) + squeezer.flush()
            self._finish = squeezer.finish

    @staticmethod
    def headers(mods: frozenset[str]) -> dict[str, str]:
        headers = {
            "Content-Type": "text/plain" if "as-text" in mods else "text/event-stream",
            "Cache-Control": "no-cache",
        }
        for encoding in ("gzip", "deflate", "br", "zstd"):
            if encoding in mods:
                headers["Content-Encoding"] = encoding
        return headers

    @property
    def gone(self) -> bool:
        transport = self.request.transport
        return transport is None or transport.is_closing()

    async def raw(self, data: bytes) -> bool:
        if self.gone:
            return False
        try:
            await self.resp.write(self._compress(data) if self._compress else data)
        except (ConnectionError, RuntimeError):
            return False
        return True

    async def event(self, obj: Any) -> bool:
        payload = obj if isinstance(obj, (str, bytes)) else json.dumps(obj)
        if isinstance(payload, str):
            payload = payload.encode()
        return await self.raw(b"data: " + payload + b"\n\n")

    async def end(self) -> None:
        with _quiet():
            await self.resp.write_eof(self._finish())

    async def hold(self, closing: asyncio.Event) -> None:
        """Keep the connection open, sending nothing, until the client goes."""
        while not self.gone and not closing.is_set():
            with _quiet():
                await asyncio.wait_for(closing.wait(), 0.05)


class _quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return exc[0] is not None and issubclass(exc[0], (ConnectionError, RuntimeError, TimeoutError))  # type: ignore[arg-type]


@dataclass
class Shape:
    """What a shape writer gets: the wire, chunk builders, and the server's knobs."""

    wire: Wire
    chunk: Callable[..., dict[str, Any]]
    usage: Callable[[str], dict[str, Any]]
    text: str
    server: Any
    pieces: list[str]


async def _endless(s: Shape) -> None:
    """Answer text that never ends: 64 chunks per write, as fast as the client
    reads, each word numbered (LiteLLM's wrapper stops a stream that repeats one chunk)."""
    n = 0
    while True:
        words = (f"{ENDLESS_WORD}{n + i} " for i in range(64))
        n += 64
        if not await s.wire.raw(
            b"".join(b"data: " + json.dumps(s.chunk({"content": w})).encode() + b"\n\n" for w in words)
        ):
            return


async def _no_newline(s: Shape) -> None:
    """One `data:` line that never ends."""
    if not await s.wire.raw(b'data: {"choices": [{"index": 0, "delta": {"content": "'):
        return
    block = b"a" * (64 * 1024)
    while await s.wire.raw(block):
        pass


async def _trickle(s: Shape) -> None:
    """A little text, then only keep-alives: comments and chunks with no choices."""
    for piece in s.pieces[:2]:
        await s.wire.event(s.chunk({"content": piece}))
    empty = {**s.chunk({}), "choices": []}
    while True:
        if not await s.wire.raw(b": keepalive\n\n") or not await s.wire.event(empty):
            return
        await asyncio.sleep(s.server.trickle_s)


async def _flood(s: Shape) -> None:
    """A little text, then chunks with no choices as fast as the client reads."""
    await s.wire.event(s.chunk({"content": s.pieces[0]}))
    empty = b"data: " + json.dumps({**s.chunk({}), "choices": []}).encode() + b"\n\n"
    batch = empty * 64
    while await s.wire.raw(batch):
        pass


async def _empty_close(s: Shape) -> None:
    """A 200 event stream that ends at once: no chunk, no finish, no [DONE]."""
    await s.wire.end()


async def _no_end(s: Shape) -> None:
    """Text, then a clean end of the body without a finish reason or [DONE]."""
    for piece in s.pieces:
        await s.wire.event(s.chunk({"content": piece}))
    await s.wire.end()


async def _answer_then(s: Shape, finish: Any, usage: bytes | dict[str, Any] | None) -> None:
    for piece in s.pieces:
        await s.wire.event(s.chunk({"content": piece}))
    await s.wire.event(s.chunk({}, finish))
    if usage is not None:
        chunk = json.dumps({**s.chunk({}), "choices": [], "usage": "USAGE"}).encode()
        body = usage if isinstance(usage, bytes) else json.dumps(usage).encode()
        await s.wire.raw(b"data: " + chunk.replace(b'"USAGE"', body) + b"\n\n")
    await s.wire.event("[DONE]")
    await s.wire.end()


async def _usage_nan(s: Shape) -> None:
    await _answer_then(s, "stop", HOSTILE_USAGE_NAN)


async def _usage_junk(s: Shape) -> None:
    await _answer_then(s, "stop", HOSTILE_USAGE_JUNK)


async def _finish_junk(s: Shape) -> None:
    await _answer_then(s, HOSTILE_FINISH, s.usage(s.text))


async def _finish_long(s: Shape) -> None:
    await _answer_then(s, LONG_FINISH, s.usage(s.text))


async def _bom(s: Shape) -> None:
    """A byte-order mark as the body's first bytes, then an ordinary stream
    whose first event already carries text (a reader that loses it loses text)."""
    await s.wire.raw(BOM)
    await s.wire.event(s.chunk({"role": "assistant", "content": s.pieces[0]}))
    s.pieces = s.pieces[1:]
    await _answer_then(s, "stop", s.usage(s.text))


async def _open_after_finish(s: Shape) -> None:
    """A whole answer with its finish reason and usage, then the connection stays open, silent, without [DONE]."""
    for piece in s.pieces:
        await s.wire.event(s.chunk({"content": piece}))
    await s.wire.event(s.chunk({}, "stop"))
    await s.wire.event({**s.chunk({}), "choices": [], "usage": s.usage(s.text)})
    await s.wire.hold(s.server._closing)


BARE: frozenset[str] = frozenset({"empty-close", "bom"})
"""Shapes that write the body from its first byte (the others follow the usual role chunk)."""

SHAPES: dict[str, Callable[[Shape], Awaitable[None]]] = {
    "endless": _endless,
    "no-newline": _no_newline,
    "trickle": _trickle,
    "flood": _flood,
    "empty-close": _empty_close,
    "no-end": _no_end,
    "usage-nan": _usage_nan,
    "usage-junk": _usage_junk,
    "finish-junk": _finish_junk,
    "finish-long": _finish_long,
    "bom": _bom,
    "open-after-finish": _open_after_finish,
}
"""Behaviour name -> writer (the fake server's docstring lists them)."""
