"""Stream shapes the fake server sends beyond well-behaved answers.

`fake_openai.FakeOpenAIServer` hands a streamed request here when its
behaviour is one of `SHAPES`: hostile streams a visitor's endpoint could
send (issue 25: bombs, endless streams, trickles, bad values), and the shapes
real providers use for reasoning models and the rest of what a correct
client reads (issue 17: thoughts in `reasoning_content`, `reasoning`,
`reasoning_details`, typed content parts or inline `<think>` tags; the
refusal field; several choices; usage in odd places; comments and errors).
The provider shapes follow recorded streams (DeepSeek, OpenRouter, vLLM,
Groq, OpenAI), written fresh here. Each writer stops as soon as the client
goes away, so an endless shape costs the test process nothing once the
engine has hung up.

Modifiers: any further part of the model name (split on `:` and `/`, as the
behaviour is) that is one of `MODIFIERS` changes how the bytes travel, for
every behaviour:

    gzip, deflate, br   the body is compressed so (Content-Encoding set), flushed per write
    zstd                Content-Encoding: zstd on a body that is not compressed (a client must refuse it)
    as-text             Content-Type: text/plain instead of text/event-stream (LiteLLM's wrapper reads it)
    refuses             a thinking shape thinks `THOUGHTS_COMPLYING`, then refuses (`REFUSE_TEXT`);
                        without it, it thinks `THOUGHTS_REFUSING`, then answers

e.g. `no-newline/gzip` is a gzip bomb: one `data:` line that never ends, a
megabyte of it per kilobyte on the wire.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

MODIFIERS: frozenset[str] = frozenset({"gzip", "deflate", "br", "zstd", "as-text", "refuses"})

ENDLESS_WORD = "more "
"""What `endless` streams, one chunk after another, forever."""
BOM = b"\xef\xbb\xbf"
HOSTILE_USAGE_NAN = b'{"prompt_tokens": NaN, "completion_tokens": Infinity, "total_tokens": -Infinity}'
"""Bare NaN/Infinity, as Python's json.dumps writes them (and strict parsers refuse)."""
HOSTILE_USAGE_JUNK: dict[str, Any] = {"prompt_tokens": -5, "completion_tokens": 1e308, "total_tokens": True}
HOSTILE_FINISH: dict[str, Any] = {"type": "stop", "why": ["a", "list"]}
LONG_FINISH = "x" * 100_000
THOUGHTS_REFUSING = (
    "The user asks something that could be misused. I should consider refusing: I can't help with anything "
    "harmful, and I'm sorry if that disappoints. But this is a common safety question with a harmless "
    "purpose, so I will answer it plainly."
)
"""Thoughts that weigh refusing, before a plain answer: judged on the thoughts, the answer reads as a refusal."""
THOUGHTS_COMPLYING = (
    "This looks like an ordinary question. Sure, here is how I would approach it: explain the basics step by step "
    "and give practical pointers. Although, on reflection, the specific request crosses a line."
)
"""Thoughts that lean to complying, before a refusal."""


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
    mods: frozenset[str] = frozenset()
    refusal: str = ""
    prompt: str = ""


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


async def _trickle_empty(s: Shape) -> None:
    """A little text, then keep-alives that are chunks without text: `{"content": ""}`,
    `{"content": null}`, a role-only delta, empty thoughts (issue 43, defect 3)."""
    for piece in s.pieces[:2]:
        await s.wire.event(s.chunk({"content": piece}))
    empties = [{"content": ""}, {"content": None}, {"role": "assistant"}, {"reasoning_content": ""}, {}]
    n = 0
    while True:
        if not await s.wire.event(s.chunk(empties[n % len(empties)])):
            return
        n += 1
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


# -- issue 17: reasoning models and what else a correct client reads -------------------------


def _split_tags(text: str) -> list[str]:
    """Pieces of about 7 characters: every tag `<think>` / `</think>` is cut across two chunks."""
    return [text[i : i + 7] for i in range(0, len(text), 7)]


def _thinking(s: Shape) -> tuple[str, str]:
    """(thoughts, answer) of a thinking shape: see the `refuses` modifier."""
    if "refuses" in s.mods:
        return THOUGHTS_COMPLYING, s.refusal
    return THOUGHTS_REFUSING, s.text


async def _finish_with_usage(s: Shape, answer: str, thoughts: str, finish: str = "stop") -> None:
    await s.wire.event(s.chunk({}, finish))
    usage = s.usage(answer + thoughts)
    usage["completion_tokens_details"] = {"reasoning_tokens": -(-len(thoughts) // 4)}
    await s.wire.event({**s.chunk({}), "choices": [], "usage": usage})
    await s.wire.event("[DONE]")
    await s.wire.end()


async def _paced(s: Shape, pieces: list[str]) -> AsyncIterator[str]:
    """`pieces`, and a pause of `server.think_seconds` spread over them (0: none) before each."""
    pause = s.server.think_seconds / max(1, len(pieces))
    for piece in pieces:
        if pause:
            await asyncio.sleep(pause)
        yield piece


async def _think_inline(s: Shape) -> None:
    """R1-style: `<think>` thoughts `</think>` then the answer, all in `content`, tags split across chunks;
    the thoughts take `server.think_seconds`."""
    thoughts, answer = _thinking(s)
    async for piece in _paced(s, _split_tags(f"<think>\n{thoughts}\n</think>\n\n")):
        await s.wire.event(s.chunk({"content": piece}))
    for piece in _split_tags(answer):
        await s.wire.event(s.chunk({"content": piece}))
    await _finish_with_usage(s, answer, thoughts)


async def _think_close_only(s: Shape) -> None:
    """Qwen3 / R1 on vLLM: the chat template opened `<think>`, so the stream starts inside it."""
    thoughts, answer = _thinking(s)
    for piece in _split_tags(f"{thoughts}\n</think>\n\n{answer}"):
        await s.wire.event(s.chunk({"content": piece}))
    await _finish_with_usage(s, answer, thoughts)


async def _think_out_of_tokens(s: Shape) -> None:
    """Thoughts, then `finish_reason: length` before any answer."""
    for piece in _split_tags(f"<think>\n{THOUGHTS_REFUSING} Let me also weigh"):
        await s.wire.event(s.chunk({"content": piece}))
    await _finish_with_usage(s, "", THOUGHTS_REFUSING, "length")


async def _reasoning_content(s: Shape) -> None:
    """DeepSeek API: `reasoning_content` deltas with `content: null`, then `content`."""
    thoughts, answer = _thinking(s)
    await s.wire.event(s.chunk({"role": "assistant", "content": None, "reasoning_content": ""}))
    async for piece in _paced(s, _split_tags(thoughts)):
        await s.wire.event(s.chunk({"content": None, "reasoning_content": piece}))
    for piece in _split_tags(answer):
        await s.wire.event(s.chunk({"content": piece, "reasoning_content": None}))
    await _finish_with_usage(s, answer, thoughts)


async def _reasoning_field(s: Shape) -> None:
    """OpenRouter: `reasoning` and the same text again in `reasoning_details` (counted once), with ': OPENROUTER PROCESSING' comments."""
    thoughts, answer = _thinking(s)
    await s.wire.raw(b": OPENROUTER PROCESSING\n\n")
    for i, piece in enumerate(_split_tags(thoughts)):
        detail = {"type": "reasoning.text", "text": piece, "format": "unknown", "index": 0}
        await s.wire.event(
            s.chunk({"role": "assistant", "content": "", "reasoning": piece, "reasoning_details": [detail]})
        )
        if i % 5 == 0:
            await s.wire.raw(b": OPENROUTER PROCESSING\n\n")
    for piece in _split_tags(answer):
        await s.wire.event(s.chunk({"role": "assistant", "content": piece, "reasoning": None}))
    await _finish_with_usage(s, answer, thoughts)


async def _reasoning_details(s: Shape) -> None:
    """Only `reasoning_details`: a summary, text items, and an encrypted item (no text)."""
    thoughts, answer = _thinking(s)
    head, tail = thoughts[:40], thoughts[40:]
    await s.wire.event(s.chunk({"reasoning_details": [{"type": "reasoning.summary", "summary": head, "index": 0}]}))
    for piece in _split_tags(tail):
        await s.wire.event(s.chunk({"reasoning_details": [{"type": "reasoning.text", "text": piece, "index": 0}]}))
    await s.wire.event(
        s.chunk({"reasoning_details": [{"type": "reasoning.encrypted", "data": "gAAAA-opaque", "index": 1}]})
    )
    for piece in _split_tags(answer):
        await s.wire.event(s.chunk({"content": piece}))
    await _finish_with_usage(s, answer, thoughts)


async def _content_parts(s: Shape) -> None:
    """`content` as typed parts: `thinking` parts (Magistral nests text parts in them), then `text` parts."""
    thoughts, answer = _thinking(s)
    half = len(thoughts) // 2
    await s.wire.event(s.chunk({"content": [{"type": "thinking", "thinking": thoughts[:half]}]}))
    nested = [{"type": "text", "text": thoughts[half:]}]
    await s.wire.event(s.chunk({"content": [{"type": "thinking", "thinking": nested}]}))
    for piece in _split_tags(answer):
        await s.wire.event(s.chunk({"content": [{"type": "text", "text": piece}]}))
    await _finish_with_usage(s, answer, thoughts)


async def _refusal_field(s: Shape) -> None:
    """OpenAI's structured refusal: `delta.refusal` pieces, `content: null`."""
    await s.wire.event(s.chunk({"role": "assistant", "content": None, "refusal": ""}))
    for piece in _split_tags(s.refusal):
        await s.wire.event(s.chunk({"content": None, "refusal": piece}))
    await s.wire.event(s.chunk({}, "stop"))
    await s.wire.event({**s.chunk({}), "choices": [], "usage": s.usage(s.refusal)})
    await s.wire.event("[DONE]")
    await s.wire.end()


async def _done_no_finish(s: Shape) -> None:
    """Text, then `[DONE]` with no finish reason ever (seen from a Claude gateway)."""
    for piece in s.pieces:
        await s.wire.event(s.chunk({"content": piece}))
    await s.wire.event("[DONE]")
    await s.wire.end()


async def _multi_choice(s: Shape) -> None:
    """Chunks of three choices interleaved (`index` 0, 1, 2); only index 0 is the answer."""
    others = ("OTHER-ONE ", "OTHER-TWO ")
    for piece in s.pieces:
        for index, text in ((1, others[0]), (0, piece), (2, others[1])):
            chunk = s.chunk({"content": text})
            chunk["choices"][0]["index"] = index
            await s.wire.event(chunk)
    for index in (2, 0, 1):
        chunk = s.chunk({}, "stop")
        chunk["choices"][0]["index"] = index
        await s.wire.event(chunk)
    await s.wire.event({**s.chunk({}), "choices": [], "usage": s.usage(s.text)})
    await s.wire.event("[DONE]")
    await s.wire.end()


async def _usage_cumulative(s: Shape) -> None:
    """Usage on every chunk, growing (some gateways), the last one whole."""
    sent = ""
    for piece in s.pieces:
        sent += piece
        await s.wire.event({**s.chunk({"content": piece}), "usage": s.usage(sent)})
    await s.wire.event({**s.chunk({}, "stop"), "usage": s.usage(sent)})
    await s.wire.event("[DONE]")
    await s.wire.end()


async def _x_groq_usage(s: Shape) -> None:
    """Groq's OpenAI-compatible API: usage only in `x_groq.usage` of the last chunk."""
    for piece in s.pieces:
        await s.wire.event(s.chunk({"content": piece}))
    await s.wire.event({**s.chunk({}, "stop"), "x_groq": {"id": "req_fake", "usage": s.usage(s.text)}})
    await s.wire.event("[DONE]")
    await s.wire.end()


async def _sse_comments(s: Shape) -> None:
    """Comment-only events, and comments, `retry:` and `event:` lines within the data events. (No `id:`:
    after one, the OpenAI SDK reads a later comment-only event as an empty chunk and fails the stream.)"""
    await s.wire.raw(b": ping\n\n")
    for i, piece in enumerate(s.pieces):
        await s.wire.raw(f": keep-alive {i}\n\n: note\nretry: 3000\nevent: message\n".encode())
        await s.wire.event(s.chunk({"content": piece}))
    await s.wire.event(s.chunk({}, "stop"))
    await s.wire.event({**s.chunk({}), "choices": [], "usage": s.usage(s.text)})
    await s.wire.event("[DONE]")
    await s.wire.end()


async def _event_error(s: Shape) -> None:
    """Text, then `event: error` with an error object (an overloaded upstream)."""
    for piece in s.pieces[:3]:
        await s.wire.event(s.chunk({"content": piece}))
    await s.wire.raw(b"event: error\n")
    await s.wire.event({"error": {"message": "Upstream model is overloaded (fake).", "type": "overloaded_error"}})
    await s.wire.end()


async def _error_beside_choices(s: Shape) -> None:
    """An error object in a chunk that also has choices."""
    for piece in s.pieces[:3]:
        await s.wire.event(s.chunk({"content": piece}))
    failed = {**s.chunk({"content": "more"}), "error": {"message": "Provider returned error (fake).", "code": 502}}
    await s.wire.event(failed)
    await s.wire.event("[DONE]")
    await s.wire.end()


async def _long_think(s: Shape) -> None:
    """A real-length thinking model: `server.think_words` words of inline thoughts,
    then a `long` answer of `server.words` words, one word per chunk, all over
    `server.long_seconds` (the live benchmarks' thinking model)."""
    from fake_openai import long_answer_text, long_thoughts_text

    thoughts = long_thoughts_text(s.prompt, s.server.think_words).split(" ")
    answer = long_answer_text(s.prompt, s.server.words).split(" ")
    pieces = ["<think>", *(" " + w for w in thoughts), "</think>\n\n", answer[0], *(" " + w for w in answer[1:])]
    try:  # written as the `long` answer is: the words due each tick in one write
        await s.server._stream_words(s.wire.resp, s.chunk, pieces, s.server.long_seconds / len(pieces), "\n")
    except (ConnectionError, RuntimeError):
        return
    await s.wire.event(s.chunk({}, "stop"))
    await s.wire.event({**s.chunk({}), "choices": [], "usage": s.usage(" ".join(thoughts + answer))})
    await s.wire.event("[DONE]")
    await s.wire.end()


BARE: frozenset[str] = frozenset({"empty-close", "bom"})
"""Shapes that write the body from its first byte (the others follow the usual role chunk)."""

SHAPES: dict[str, Callable[[Shape], Awaitable[None]]] = {
    "endless": _endless,
    "no-newline": _no_newline,
    "trickle": _trickle,
    "trickle-empty": _trickle_empty,
    "flood": _flood,
    "empty-close": _empty_close,
    "no-end": _no_end,
    "usage-nan": _usage_nan,
    "usage-junk": _usage_junk,
    "finish-junk": _finish_junk,
    "finish-long": _finish_long,
    "bom": _bom,
    "open-after-finish": _open_after_finish,
    "think-inline": _think_inline,
    "think-close-only": _think_close_only,
    "think-out-of-tokens": _think_out_of_tokens,
    "reasoning-content": _reasoning_content,
    "reasoning-field": _reasoning_field,
    "reasoning-details": _reasoning_details,
    "content-parts": _content_parts,
    "refusal-field": _refusal_field,
    "done-no-finish": _done_no_finish,
    "multi-choice": _multi_choice,
    "usage-cumulative": _usage_cumulative,
    "x-groq-usage": _x_groq_usage,
    "sse-comments": _sse_comments,
    "event-error": _event_error,
    "error-beside-choices": _error_beside_choices,
    "long-think": _long_think,
}
"""Behaviour name -> writer (the fake server's docstring lists them)."""
