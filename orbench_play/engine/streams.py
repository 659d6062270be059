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
caller's sink. `tests/test_stream_paths.py` runs the same scenarios through
both and compares; `tests/test_litellm_canary.py` fails loudly when a LiteLLM
or OpenAI SDK upgrade changes what the fast path relies on.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..textrepair import StreamRepair
from .failures import CellFailure, cut_stream, malformed_stream, provider_stream_error
from .llm import litellm_module
from .timeouts import Limits, Watchdog

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

    @property
    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""


Sink = Callable[[str], None]


@functools.cache
def _sdk_types() -> tuple[type, type] | None:
    try:
        from openai import AsyncStream
        from openai.types.chat import ChatCompletionChunk
    except ImportError:
        return None
    return AsyncStream, ChatCompletionChunk


def raw_response(response: Any) -> Any | None:
    """The unread HTTP response under a LiteLLM stream, when the fast path can
    read it (see the module docstring); None means: use the wrapper."""
    if os.environ.get(ENV_FAST, "1").strip() == "0":
        return None
    if getattr(response, "custom_llm_provider", None) not in FAST_PROVIDERS:
        return None
    types = _sdk_types()
    stream = getattr(response, "completion_stream", None)
    if types is None or type(stream) is not types[0] or getattr(stream, "_cast_to", None) is not types[1]:
        return None
    http = getattr(stream, "response", None)
    if http is None or getattr(http, "is_stream_consumed", True) is not False or not hasattr(http, "aiter_bytes"):
        return None
    try:
        content_type = str(http.headers.get("content-type", ""))
    except Exception:
        return None
    return http if "text/event-stream" in content_type else None


async def stream_answer(kwargs: dict[str, Any], state: StreamState, sink: Sink, limits: Limits, started: float) -> None:
    """Make the request through LiteLLM and read its stream into `state`;
    `started` (perf_counter) is when the cell's first attempt began."""
    litellm = litellm_module()
    async with Watchdog(limits, lambda: state.chars) as watchdog:
        response = await litellm.acompletion(**kwargs)
        state.responded = True
        try:
            http = raw_response(response)
            if http is not None:
                state.path = "fast"
                await _read_sse(http, state, sink, watchdog, started)
            else:
                state.path = "wrapper"
                await _read_wrapper(response, state, sink, watchdog, started)
        finally:
            with contextlib.suppress(Exception):
                await response.aclose()
    if state.finish_reason is not None and (state.completion_tokens is None or state.prompt_tokens is None):
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


async def _read_sse(http: Any, state: StreamState, sink: Sink, watchdog: Watchdog, started: float) -> None:
    """The fast path: SSE over the raw bytes, one `json.loads` per chunk."""
    chunks = http.aiter_bytes()
    repair = StreamRepair()
    parts = state.parts
    loads = json.loads
    clock = time.monotonic  # asyncio's loop clock
    tail = bytearray()
    data: list[bytes] = []
    done = False
    try:
        async for raw in chunks:
            watchdog.last = clock()
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
                    done = True
                    break
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
                        if state.ttft_s is None:
                            state.ttft_s = time.perf_counter() - started
                        piece = repair.feed(piece)
                        if piece:
                            parts.append(piece)
                            state.chars += len(piece)
                            sink(piece)
                    reason = choice.get("finish_reason")
                    if reason:
                        _check_finish(reason)
                        state.finish_reason = reason
                usage = chunk.get("usage")
                if usage.__class__ is dict:
                    state.completion_tokens = usage.get("completion_tokens") or state.completion_tokens
                    state.prompt_tokens = usage.get("prompt_tokens") or state.prompt_tokens
            if done:
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
        last = repair.flush()
        if last:
            parts.append(last)
            state.chars += len(last)
            sink(last)
    if done:  # read the end of the body (it is usually there already) so the connection is reused
        with contextlib.suppress(Exception):
            async with asyncio.timeout(_DRAIN_S):
                async for _ in chunks:
                    pass


async def _read_wrapper(response: Any, state: StreamState, sink: Sink, watchdog: Watchdog, started: float) -> None:
    """The wrapper path: LiteLLM's normalised chunks, one object per chunk."""
    repair = StreamRepair()
    clock = time.monotonic
    try:
        async for chunk in response:
            watchdog.last = clock()
            usage = getattr(chunk, "usage", None)
            if usage is not None:
                state.completion_tokens = getattr(usage, "completion_tokens", None) or state.completion_tokens
                state.prompt_tokens = getattr(usage, "prompt_tokens", None) or state.prompt_tokens
            choices = chunk.choices
            if not choices:
                continue
            choice = choices[0]
            if choice.finish_reason:
                state.finish_reason = choice.finish_reason
            piece = choice.delta.content if choice.delta is not None else None
            if piece:
                if state.ttft_s is None:
                    state.ttft_s = time.perf_counter() - started
                piece = repair.feed(piece)
                if piece:
                    state.parts.append(piece)
                    state.chars += len(piece)
                    sink(piece)
    finally:
        last = repair.flush()
        if last:
            state.parts.append(last)
            state.chars += len(last)
            sink(last)
