"""One streamed answer: LiteLLM makes the request, we read the stream.

Every request is made by `litellm.acompletion(stream=True)`: provider
resolution, keys, parameters, `api_base`, guards' pinned clients and cost
data all stay LiteLLM's. What comes back is LiteLLM's `CustomStreamWrapper`,
which turns every chunk into its own objects at ~0.25 ms of CPU per chunk: for
a 300-chunk answer that is most of the engine's cost. So there are two readers:

- **Fast path.** Where LiteLLM served the call through its OpenAI-compatible
  path (the wrapper's `custom_llm_provider` is `openai`: the `openai/`
  provider, custom endpoints, the embedded model and the many providers
  LiteLLM sends through the OpenAI SDK), its `completion_stream` is an OpenAI
  SDK `AsyncStream` of `ChatCompletionChunk` whose HTTP response has not been
  read yet. We read that response's bytes ourselves: SSE lines, `json.loads`,
  plain dicts. That is ~12x cheaper than the wrapper and ~3x cheaper than the
  SDK's per-chunk pydantic objects (see docs/performance.md), and it keeps
  what the SDK does that matters here: SSE framing (LF, CRLF or CR lines,
  multi-line data, comments), `[DONE]` and draining the rest of the body so
  the connection is reused, `{"error": ...}` events raised as errors.
- **Wrapper path** for everything else (Anthropic, Gemini, Bedrock, providers
  with their own chunk handler such as Groq or Mistral), or when any of the
  fast path's checks fails, or with `ORBENCH_FAST_STREAMS=0`.

Both readers fill the same `StreamState` (text, finish_reason, usage, time to
first text) and hand every piece of text, repaired (see `textrepair`), to the
caller's sink. They agree on what a stream may do (`tests/test_stream_paths.py`
runs the same scenarios through both and compares):

- **Bounded** (`bounds`): under every OpenAI SDK stream, whichever reader
  reads it, the HTTP body is replaced by a bounded one (bytes per event and
  per cell, compressed bodies inflated in steps); both readers count chunks
  and stop the answer at its character bound, as a failure of its own.
- **Complete** means a finish reason or `[DONE]`. A stream that ends with
  neither, with or without text, was cut: never cached, and retried when
  nothing was shown. After a finish reason, a server that keeps the
  connection open without `[DONE]` gets a short grace, then the answer is
  complete.
- **Idle** means no new text: only chunks carrying text or a finish reason
  reset the idle limit; comments and empty chunks do not.
- **Values** (`values`): token counts and finish reasons are checked; anything
  else is dropped with a note. On the wrapper, an SDK stream's chunks are
  checked before LiteLLM reads them (LiteLLM would fail the stream on them).

`tests/test_litellm_canary.py` fails loudly when a LiteLLM or OpenAI SDK
upgrade changes what either reader relies on.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from ..textrepair import StreamRepair
from .bounds import BodyWatch, StreamBounds, bound_body, chunks_over_cap, text_over_cap
from .failures import CellFailure, cut_stream, malformed_stream, provider_stream_error
from .llm import litellm_module
from .timeouts import Limits, Watchdog
from .values import Notes, finish_reason, token_count

log = logging.getLogger(__name__)

FAST_PROVIDERS: frozenset[str] = frozenset({"openai"})
"""Values of `CustomStreamWrapper.custom_llm_provider` (LiteLLM's own provider
resolution) whose raw stream is OpenAI chat chunks read by the OpenAI SDK."""

ENV_FAST = "ORBENCH_FAST_STREAMS"
_DRAIN_S = 0.1


@dataclass(slots=True)
class StreamState:
    """What one attempt collected, kept even when it fails (partial text stays visible)."""

    parts: list[str] = field(default_factory=list)
    chars: int = 0
    finish_reason: str | None = None
    completion_tokens: int | None = None
    prompt_tokens: int | None = None
    ttft_s: float | None = None
    responded: bool = False
    """The provider accepted the request and started streaming: from here on it bills."""
    path: str = ""
    """`fast` or `wrapper`: which reader read it."""
    done: bool = False
    """The stream said `[DONE]`."""
    chunks: int = 0
    notes: Notes = field(default_factory=Notes)
    """Values the stream sent that were dropped (see `values`)."""

    @property
    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""

    @property
    def complete(self) -> bool:
        """The provider said the answer ended: a finish reason, or `[DONE]`."""
        return self.finish_reason is not None or self.done


Sink = Callable[[str], None]


class _Text:
    """Text into the state and the sink: repaired, under its character bound."""

    __slots__ = ("bounds", "repair", "sink", "started", "state", "watchdog")

    def __init__(self, state: StreamState, sink: Sink, bounds: StreamBounds, watchdog: Watchdog, started: float):
        self.state, self.sink, self.bounds, self.watchdog, self.started = state, sink, bounds, watchdog, started
        self.repair = StreamRepair()

    def add(self, piece: str) -> None:
        state = self.state
        self.watchdog.last = time.monotonic()  # new text: the idle limit starts again
        if state.ttft_s is None:
            state.ttft_s = time.perf_counter() - self.started
        piece = self.repair.feed(piece)
        if piece:
            self._keep(piece)

    def _keep(self, piece: str) -> None:
        state = self.state
        room = self.bounds.text_chars - state.chars
        if len(piece) > room:
            if room > 0:
                self._keep(piece[:room])
            raise text_over_cap(self.bounds, "answer", state.chars)
        state.parts.append(piece)
        state.chars += len(piece)
        self.sink(piece)

    def flush(self) -> None:
        last = self.repair.flush()
        if last and self.state.chars < self.bounds.text_chars:
            self._keep(last)

    def finish(self, value: Any) -> None:
        """A finish reason arrived (checked; an unusable one is dropped with a note)."""
        reason = finish_reason(value, self.state.notes)
        if reason is None:
            return
        _check_finish(reason)
        self.state.finish_reason = reason
        self.watchdog.finished()

    def chunk(self) -> None:
        self.state.chunks += 1
        if self.state.chunks > self.bounds.chunks:
            raise chunks_over_cap(self.bounds, self.state.chars)


def _usage(state: StreamState, prompt: Any, completion: Any, total: Any) -> bool:
    """Take a chunk's usage when every count in it is a count; False (and a
    note) when one is not: the whole usage is dropped, on both readers."""
    notes = state.notes
    counts = [token_count(v, n, notes) for v, n in ((prompt, "prompt_tokens"), (completion, "completion_tokens"))]
    checked = token_count(total, "total_tokens", notes)
    if any(c is None and v is not None for c, v in zip([*counts, checked], (prompt, completion, total), strict=True)):
        return False
    state.prompt_tokens = counts[0] or state.prompt_tokens
    state.completion_tokens = counts[1] or state.completion_tokens
    return True


@functools.cache
def _sdk_types() -> tuple[type, type] | None:
    try:
        from openai import AsyncStream
        from openai.types.chat import ChatCompletionChunk
    except ImportError:
        return None
    return AsyncStream, ChatCompletionChunk


def sdk_response(response: Any) -> Any | None:
    """The unread HTTP response under a LiteLLM stream that LiteLLM reads
    through the OpenAI SDK (`AsyncStream` of `ChatCompletionChunk`); None otherwise."""
    types = _sdk_types()
    stream = getattr(response, "completion_stream", None)
    if types is None or type(stream) is not types[0] or getattr(stream, "_cast_to", None) is not types[1]:
        return None
    http = getattr(stream, "response", None)
    if http is None or getattr(http, "is_stream_consumed", True) is not False or not hasattr(http, "aiter_bytes"):
        return None
    return http


def raw_response(response: Any) -> Any | None:
    """The unread HTTP response under a LiteLLM stream, when the fast path can
    read it (see the module docstring); None means: use the wrapper."""
    if os.environ.get(ENV_FAST, "1").strip() == "0":
        return None
    if getattr(response, "custom_llm_provider", None) not in FAST_PROVIDERS:
        return None
    http = sdk_response(response)
    if http is None:
        return None
    try:
        content_type = str(http.headers.get("content-type", ""))
    except Exception:
        return None
    return http if "text/event-stream" in content_type else None


async def stream_answer(
    kwargs: dict[str, Any], state: StreamState, sink: Sink, limits: Limits, started: float, bounds: StreamBounds
) -> None:
    """Make the request through LiteLLM and read its stream into `state`;
    `started` (perf_counter) is when the cell's first attempt began."""
    litellm = litellm_module()
    async with Watchdog(limits, lambda: state.chars) as watchdog:
        response = await litellm.acompletion(**kwargs)
        state.responded = True
        try:
            sdk = sdk_response(response)
            watch = bound_body(sdk, bounds, lambda: state.chars) if sdk is not None else None
            http = raw_response(response) if watch is not None else None
            text = _Text(state, sink, bounds, watchdog, started)
            if http is not None:
                state.path = "fast"
                await _read_sse(http, state, text)
            else:
                state.path = "wrapper"
                guard = _SdkGuard(response.completion_stream, text) if watch is not None else None
                if guard is not None:
                    response.completion_stream = guard.chunks()
                await _read_wrapper(response, state, text, guard, watch)
        finally:
            with contextlib.suppress(Exception):
                await response.aclose()
    if state.notes:
        log.warning("%s sent values that were dropped: %s", kwargs.get("model"), state.notes)
    if state.complete and (state.completion_tokens is None or state.prompt_tokens is None):
        _count_usage(kwargs, state)


def _count_usage(kwargs: dict[str, Any], state: StreamState) -> None:
    """The provider sent no usage: count tokens as LiteLLM's wrapper does for
    the same stream, so both readers report the same numbers."""
    if state.path != "fast":
        return
    counter = litellm_module().token_counter
    model = str(kwargs.get("model", ""))
    with contextlib.suppress(Exception):
        if state.prompt_tokens is None:
            state.prompt_tokens = counter(model=model, messages=kwargs.get("messages"))
        if state.completion_tokens is None:
            state.completion_tokens = counter(model=model, text=state.text, count_response_tokens=True) or None


def _check_finish(reason: str) -> None:
    """Finish reasons the wrapper raises on, raised the same way here."""
    if reason == "abort":
        raise CellFailure("Provider error (500): the provider aborted the answer.", retryable=True)
    if reason == "error":
        raise CellFailure("The provider ended the answer with an error (finish_reason=error).")


async def _read_sse(http: Any, state: StreamState, text: _Text) -> None:
    """The fast path: SSE over the (bounded) raw bytes, one `json.loads` per chunk."""
    chunks = http.aiter_bytes()
    loads = json.loads
    tail = bytearray()
    data: list[bytes] = []
    try:
        async for raw in chunks:
            if b"\n" not in raw and b"\r" not in raw:
                tail += raw
                continue
            buf = bytes(tail) + raw if tail else raw
            keep = b""
            if b"\r" in buf:  # CRLF or CR line ends; a CR at the very end may be half of a CRLF
                if buf.endswith(b"\r"):
                    buf, keep = buf[:-1], b"\r"
                buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            lines = buf.split(b"\n")
            tail = bytearray(lines.pop())
            tail += keep
            for line in lines:
                if line:
                    if line.startswith(b"data:"):
                        data.append(line[6:] if line[5:6] == b" " else line[5:])
                    continue  # comments, event:, id:, retry: carry nothing we use
                if not data:
                    continue
                payload = data[0] if len(data) == 1 else b"\n".join(data)
                data = []
                if payload.startswith(b"[DONE]"):
                    state.done = True
                    break
                text.chunk()
                chunk = loads(payload)
                if chunk.__class__ is not dict:
                    raise ValueError("a chunk is not a JSON object")
                if chunk.get("error"):
                    raise provider_stream_error(chunk["error"], state.chars)
                choices = chunk.get("choices")
                if choices and choices[0].__class__ is dict:
                    choice = choices[0]
                    delta = choice.get("delta")
                    piece = delta.get("content") if delta.__class__ is dict else None
                    if piece and piece.__class__ is str:
                        text.add(piece)
                    reason = choice.get("finish_reason")
                    if reason is not None:
                        text.finish(reason)
                usage = chunk.get("usage")
                if usage.__class__ is dict:
                    _usage(state, usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens"))
            if state.done:
                break
    except UnicodeDecodeError:
        raise malformed_stream("utf8", state.chars) from None
    except ValueError as exc:  # json.JSONDecodeError, or a chunk of the wrong shape
        raise malformed_stream("json", state.chars) from exc
    except Exception as exc:
        failure = cut_stream(exc, state.chars)
        if failure is None:
            raise
        raise failure from exc
    finally:
        text.flush()
    if state.done:  # read the end of the body (it is usually there already) so the connection is reused
        with contextlib.suppress(Exception):
            async with asyncio.timeout(_DRAIN_S):
                async for _ in chunks:
                    pass


class _SdkGuard:
    """The OpenAI SDK's chunks on their way to LiteLLM's wrapper: counted, and
    their usage and finish values checked (LiteLLM fails a whole stream on a
    NaN token count or a dict finish reason; the fast path drops the value)."""

    __slots__ = ("ended", "stream", "text")

    def __init__(self, stream: Any, text: _Text):
        self.stream = stream
        self.text = text
        self.ended = False
        """The SDK's stream ended by itself ([DONE], or the body's end)."""

    async def chunks(self) -> AsyncIterator[Any]:
        state = self.text.state
        try:
            async for chunk in self.stream:
                self.text.chunk()
                usage = getattr(chunk, "usage", None)
                if usage is not None:
                    counts = [getattr(usage, n, None) for n in ("prompt_tokens", "completion_tokens", "total_tokens")]
                    if not _usage(state, *counts):
                        chunk.usage = None
                for choice in getattr(chunk, "choices", None) or ():
                    value = getattr(choice, "finish_reason", None)
                    if value is not None and finish_reason(value, state.notes) is None:
                        choice.finish_reason = None
                yield chunk
            self.ended = True
        finally:
            with contextlib.suppress(Exception):
                await self.stream.close()


async def _read_wrapper(
    response: Any, state: StreamState, text: _Text, guard: _SdkGuard | None, watch: BodyWatch | None
) -> None:
    """The wrapper path: LiteLLM's normalised chunks, one object per chunk."""
    finished = False
    try:
        async for chunk in response:
            if guard is None:
                text.chunk()
            usage = getattr(chunk, "usage", None)
            if usage is not None:
                _usage(
                    state, *(getattr(usage, n, None) for n in ("prompt_tokens", "completion_tokens", "total_tokens"))
                )
            choices = chunk.choices
            if choices:
                choice = choices[0]
                piece = choice.delta.content if choice.delta is not None else None
                if piece:
                    text.add(piece)
                if choice.finish_reason and _provider_finished(response):
                    text.finish(choice.finish_reason)
                    finished = True
            if not finished and _provider_finished(response):  # LiteLLM holds the finish chunk until the end
                text.finish(getattr(response, "received_finish_reason", None) or "stop")
                finished = True
    except Exception as exc:
        if isinstance(exc, CellFailure) or not ((guard is not None and guard.ended) or _eof_complaint(response, exc)):
            raise
        # LiteLLM refuses a stream that ended without a finish reason. Under an
        # SDK stream we saw the bytes: `[DONE]` alone is a complete answer;
        # anything else (and any stream we did not see) is cut (see calls).
        state.done = watch is not None and watch.done
    finally:
        text.flush()
    if guard is not None and guard.ended and watch is not None and watch.done:
        state.done = True


def _eof_complaint(response: Any, exc: BaseException) -> bool:
    """`exc` is LiteLLM's wrapper saying the stream ended without a finish
    reason (it keeps no cause to recognise it by, so its own message is compared)."""
    make = getattr(type(response), "_stream_eof_error", None)
    try:
        said = str(make()) if callable(make) else ""
    except Exception:
        return False
    return bool(said) and said in str(exc)


def _provider_finished(response: Any) -> bool:
    """LiteLLM's wrapper synthesises `finish_reason="stop"` at the end of any
    stream; only these say the provider itself sent one."""
    return getattr(response, "received_finish_reason", None) is not None or (
        getattr(response, "intermittent_finish_reason", None) is not None
    )
