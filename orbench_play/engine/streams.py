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
first text) and hand every piece of text, repaired (see `text.repair`), to the
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
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..text.repair import StreamRepair
from ..text.thoughts import Splitter, detail_text, part_text
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
    """The answer (`parts`) and its length."""
    thought_parts: list[str] = field(default_factory=list)
    thought_chars: int = 0
    """A reasoning model's thoughts (see `thoughts`), kept apart from the answer."""
    finish_reason: str | None = None
    completion_tokens: int | None = None
    prompt_tokens: int | None = None
    reasoning_tokens: int | None = None
    ttft_s: float | None = None
    """Seconds to the first token, thought or answer."""
    ttfa_s: float | None = None
    """Seconds to the first token of the answer."""
    responded: bool = False
    """The provider accepted the request and started streaming: from here on it bills."""
    path: str = ""
    """`fast` or `wrapper`: which reader read it."""
    done: bool = False
    """The stream said `[DONE]`."""
    refused: bool = False
    """The answer came in OpenAI's `refusal` field: a refusal by provider signal."""
    chunks: int = 0
    notes: Notes = field(default_factory=Notes)
    """Values the stream sent that were dropped (see `values`)."""

    @property
    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""

    @property
    def thoughts(self) -> str:
        if len(self.thought_parts) > 1:
            self.thought_parts[:] = ["".join(self.thought_parts)]
        return self.thought_parts[0] if self.thought_parts else ""

    @property
    def complete(self) -> bool:
        """The provider said the answer ended: a finish reason, or `[DONE]`."""
        return self.finish_reason is not None or self.done


class Sink(Protocol):
    """Where a stream's text goes as it arrives (the engine's cell). A sink may
    also have `attach_stop(stop | None)`: it is given a function that ends the
    attempt quietly while the stream is read (the engine's cell calls it when
    the answer's verdict settles), and None when reading is over."""

    def __call__(self, piece: str) -> None: ...

    def thought(self, piece: str) -> None: ...

    def moved(self) -> None: ...


class _Collect:
    """Everything a chunk carries, into the state and the sink: the answer and
    the thoughts apart (`thoughts.Splitter`), repaired, under their bounds; the
    finish reason, checked; the chunk count. Both readers feed one of these."""

    __slots__ = ("bounds", "repair", "sink", "split", "started", "state", "think_repair", "watchdog")

    def __init__(self, state: StreamState, sink: Sink, bounds: StreamBounds, watchdog: Watchdog, started: float):
        self.state, self.sink, self.bounds, self.watchdog, self.started = state, sink, bounds, watchdog, started
        self.repair = StreamRepair()
        self.think_repair = StreamRepair()
        self.split = Splitter(self._answer, self._thought, self._moved, self._refused)

    def _arrived(self) -> float:
        """New text: the idle limit starts again; the first token's time is taken."""
        self.watchdog.last = time.monotonic()
        now = time.perf_counter() - self.started
        if self.state.ttft_s is None:
            self.state.ttft_s = now
        return now

    def _answer(self, piece: str) -> None:
        # the hot path (one call per chunk of answer): kept to stores and one clock read
        if not piece:
            return  # `{"content": ""}` is a keep-alive, not text: the idle clock runs on
        state = self.state
        if state.ttfa_s is None:
            now = self._arrived()
            if piece.strip():
                state.ttfa_s = now
        else:
            self.watchdog.last = time.monotonic()  # new text: the idle limit starts again
        piece = self.repair.feed(piece)
        if piece:
            if state.chars + len(piece) > self.bounds.text_chars:
                self._keep(piece)  # raises, keeping what fits
            state.parts.append(piece)
            state.chars += len(piece)
            self.sink(piece)

    def _keep(self, piece: str, thoughts: bool = False) -> None:
        """Keep `piece` of the answer (or of the thoughts) up to its bound; past
        the bound, keep what fits and stop the stream, cut by us."""
        state = self.state
        have = state.thought_chars if thoughts else state.chars
        room = self.bounds.text_chars - have
        if len(piece) > room:
            if room > 0:
                self._keep(piece[:room], thoughts)
            raise text_over_cap(self.bounds, "thoughts" if thoughts else "answer", state.chars)
        if thoughts:
            state.thought_parts.append(piece)
            state.thought_chars += len(piece)
            self.sink.thought(piece)
        else:
            state.parts.append(piece)
            state.chars += len(piece)
            self.sink(piece)

    def _thought(self, piece: str) -> None:
        if not piece:
            return  # no text, so no reset of the idle clock
        self._arrived()
        piece = self.think_repair.feed(piece)
        if piece:
            self._keep(piece, thoughts=True)

    def _moved(self) -> None:
        """A lone `</think>`: the answer so far was thoughts."""
        state = self.state
        moved = state.text
        state.parts.clear()
        state.chars = 0
        state.ttfa_s = None
        if moved:
            state.thought_parts.append(moved)
            state.thought_chars += len(moved)
        self.sink.moved()

    def _refused(self) -> None:
        self.state.refused = True

    def flush(self) -> None:
        self.split.flush()
        for repair, thoughts, chars in (
            (self.repair, False, self.state.chars),
            (self.think_repair, True, self.state.thought_chars),
        ):
            last = repair.flush()
            if last and chars < self.bounds.text_chars:
                self._keep(last, thoughts)

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


def _usage(state: StreamState, prompt: Any, completion: Any, total: Any, reasoning: Any = None) -> bool:
    """Take a chunk's usage when every count in it is a count; False (and a
    note) when one is not: the whole usage is dropped, on both readers."""
    notes = state.notes
    given = (prompt, completion, total, reasoning)
    names = ("prompt_tokens", "completion_tokens", "total_tokens", "reasoning_tokens")
    counts = [token_count(v, n, notes) for v, n in zip(given, names, strict=True)]
    if any(c is None and v is not None for c, v in zip(counts, given, strict=True)):
        return False
    state.prompt_tokens = counts[0] or state.prompt_tokens
    state.completion_tokens = counts[1] or state.completion_tokens
    if counts[3]:  # 0 is what providers say for a model that does not reason: no figure
        state.reasoning_tokens = counts[3]
    return True


def _usage_dict(state: StreamState, chunk: dict[str, Any]) -> None:
    """The fast path's usage: `usage` on any chunk (the last one counts), or Groq's `x_groq.usage`."""
    usage = chunk.get("usage")
    if usage.__class__ is not dict:
        groq = chunk.get("x_groq")
        usage = groq.get("usage") if groq.__class__ is dict else None
        if usage.__class__ is not dict:
            return
    details = usage.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if details.__class__ is dict else None
    _usage(state, usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens"), reasoning)


def _usage_object(state: StreamState, usage: Any) -> bool:
    """The same for an SDK or LiteLLM usage object."""
    details = getattr(usage, "completion_tokens_details", None)
    if details.__class__ is dict:
        reasoning = details.get("reasoning_tokens")
    else:
        reasoning = getattr(details, "reasoning_tokens", None)
    prompt, completion, total = (
        getattr(usage, n, None) for n in ("prompt_tokens", "completion_tokens", "total_tokens")
    )
    return _usage(state, prompt, completion, total, reasoning)


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
    attach = getattr(sink, "attach_stop", None)
    async with Watchdog(limits, lambda: state.chars) as watchdog:
        response = await litellm.acompletion(**kwargs)
        state.responded = True
        try:
            if attach is not None:  # the sink may end the attempt (its verdict settled): the watchdog's quiet stop
                attach(watchdog.settle)
            sdk = sdk_response(response)
            watch = bound_body(sdk, bounds, lambda: state.chars) if sdk is not None else None
            http = raw_response(response) if watch is not None else None
            collect = _Collect(state, sink, bounds, watchdog, started)
            if http is not None:
                state.path = "fast"
                await _read_sse(http, state, collect)
            else:
                state.path = "wrapper"
                guard = _SdkGuard(response.completion_stream, collect) if watch is not None else None
                if guard is not None:
                    response.completion_stream = guard.chunks()
                await _read_wrapper(response, state, collect, guard, watch)
        finally:
            if attach is not None:
                attach(None)
            # Closing an unfinished response closes its connection: the provider (llama.cpp
            # too) sees the client go and stops generating, so a stopped answer stops billing.
            with contextlib.suppress(Exception):
                await response.aclose()
    if state.notes:
        log.warning("%s sent values that were dropped: %s", kwargs.get("model"), state.notes)
    if state.complete and (state.completion_tokens is None or state.prompt_tokens is None):
        _count_usage(kwargs, state)


def _count_usage(kwargs: dict[str, Any], state: StreamState) -> None:
    """The provider sent no usage (and LiteLLM's wrapper, which counts them
    itself, did not either): count tokens as it does, so both readers report
    the same numbers."""
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


async def _read_sse(http: Any, state: StreamState, collect: _Collect) -> None:
    """The fast path: SSE over the (bounded) raw bytes, one `json.loads` per chunk."""
    chunks = http.aiter_bytes()
    loads = json.loads
    delta_of, content_of = collect.split.delta, collect.split.content
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
                collect.chunk()
                chunk = loads(payload)
                if chunk.__class__ is not dict:
                    raise ValueError("a chunk is not a JSON object")
                if chunk.get("error"):  # an error event, or an error object beside choices
                    raise provider_stream_error(chunk["error"], state.chars)
                choices = chunk.get("choices")
                if choices:
                    choice = choices[0]
                    if choice.__class__ is dict and choice.get("index", 0) not in (0, None):
                        choice = _choice_zero(choices)  # several choices interleaved: the answer is index 0
                    if choice.__class__ is dict:
                        delta = choice.get("delta")
                        if delta.__class__ is dict:
                            content = delta.get("content")
                            if len(delta) == 1 and content.__class__ is str:
                                content_of(content)  # the common shape, {"content": "…"}: no other field to look at
                            else:
                                delta_of(delta)
                        reason = choice.get("finish_reason")
                        if reason is not None:
                            collect.finish(reason)
                if "usage" in chunk or "x_groq" in chunk:
                    _usage_dict(state, chunk)
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
        collect.flush()
    if state.done:  # read the end of the body (it is usually there already) so the connection is reused
        with contextlib.suppress(Exception):
            async with asyncio.timeout(_DRAIN_S):
                async for _ in chunks:
                    pass


def _choice_zero(choices: list[Any]) -> Any:
    for choice in choices:
        if choice.__class__ is dict and choice.get("index", 0) in (0, None):
            return choice
    return None


class _SdkGuard:
    """The OpenAI SDK's chunks on their way to LiteLLM's wrapper: counted,
    their values checked (LiteLLM fails a whole stream on a NaN token count or
    a dict finish reason; the fast path drops the value), and their shape made
    one LiteLLM reads whole: only choice 0; thoughts from `reasoning_details`
    or typed content parts as `reasoning_content`, answer parts as `content`
    (LiteLLM drops both); a `refusal` as the answer (LiteLLM drops it); usage
    from `x_groq` too. The provider's usage is taken here, as the fast path takes it."""

    __slots__ = ("collect", "ended", "saw_usage", "stream")

    def __init__(self, stream: Any, collect: _Collect):
        self.stream = stream
        self.collect = collect
        self.ended = False
        """The SDK's stream ended by itself ([DONE], or the body's end)."""
        self.saw_usage = False

    async def chunks(self) -> AsyncIterator[Any]:
        state = self.collect.state
        try:
            async for chunk in self.stream:
                self.collect.chunk()
                usage = getattr(chunk, "usage", None)
                if usage is None:
                    groq = getattr(chunk, "x_groq", None)
                    usage = groq.get("usage") if groq.__class__ is dict else None
                    if usage.__class__ is dict:
                        usage = _Usage(usage)
                if usage is not None:
                    if _usage_object(state, usage):
                        self.saw_usage = True
                    else:
                        chunk.usage = None
                choices = getattr(chunk, "choices", None) or []
                if not choices and usage is None:
                    continue  # a keep-alive: nothing for LiteLLM (~0.25 ms a chunk) to do
                if any(getattr(c, "index", 0) not in (0, None) for c in choices):
                    chunk.choices = choices = [c for c in choices if getattr(c, "index", 0) in (0, None)]
                for choice in choices:
                    value = getattr(choice, "finish_reason", None)
                    if value is not None and finish_reason(value, state.notes) is None:
                        choice.finish_reason = None
                    if choice.delta is not None:
                        self._reshape(choice.delta)
                yield chunk
            self.ended = True
        finally:
            with contextlib.suppress(Exception):
                await self.stream.close()

    def _reshape(self, delta: Any) -> None:
        content = delta.content
        thoughts = ""
        if content.__class__ is list:
            answer: list[str] = []
            refusal: list[str] = []
            for part in content:
                if part.__class__ is not dict:
                    continue
                kind = part.get("type")
                if kind in ("thinking", "reasoning", "reasoning.text", "reasoning.summary"):
                    thoughts += part_text(
                        part.get("thinking") or part.get("reasoning") or part.get("text") or part.get("summary")
                    )
                elif kind == "refusal":
                    refusal.append(part_text(part.get("refusal")))
                else:
                    answer.append(part_text(part.get("text")))
            delta.content = "".join(answer) or None
            if refusal:
                self._refusal(delta, "".join(refusal))
        details = getattr(delta, "reasoning_details", None)
        if details.__class__ is list and not (
            getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
        ):
            thoughts += "".join(detail_text(item) for item in details)
        if thoughts:
            delta.reasoning_content = thoughts
        refused = getattr(delta, "refusal", None)
        if refused and refused.__class__ is str:
            self._refusal(delta, refused)

    def _refusal(self, delta: Any, text: str) -> None:
        self.collect.state.refused = True
        delta.content = (delta.content or "") + text
        delta.refusal = None


class _Usage:
    """A usage dict (Groq's `x_groq.usage`) read like a usage object."""

    def __init__(self, values: dict[str, Any]):
        self.__dict__.update(values)

    def __getattr__(self, name: str) -> Any:
        return None


async def _read_wrapper(
    response: Any, state: StreamState, collect: _Collect, guard: _SdkGuard | None, watch: BodyWatch | None
) -> None:
    """The wrapper path: LiteLLM's normalised chunks, one object per chunk."""
    finished = False
    split = collect.split
    try:
        async for chunk in response:
            if guard is None:
                collect.chunk()
            usage = getattr(chunk, "usage", None)
            if usage is not None and (guard is None or not guard.saw_usage):
                _usage_object(state, usage)
            choices = chunk.choices
            if choices:
                choice = choices[0]
                delta = choice.delta
                if delta is not None:
                    thought = getattr(delta, "reasoning_content", None)
                    if thought and thought.__class__ is str:
                        split.thinking(thought)
                    piece = delta.content
                    if piece and piece.__class__ is str:
                        split.content(piece)
                if choice.finish_reason and _provider_finished(response):
                    collect.finish(choice.finish_reason)
                    finished = True
            if not finished and _provider_finished(response):  # LiteLLM holds the finish chunk until the end
                collect.finish(getattr(response, "received_finish_reason", None) or "stop")
                finished = True
    except Exception as exc:
        if isinstance(exc, CellFailure) or not ((guard is not None and guard.ended) or _eof_complaint(response, exc)):
            raise
        # LiteLLM refuses a stream that ended without a finish reason. Under an
        # SDK stream we saw the bytes: `[DONE]` alone is a complete answer;
        # anything else (and any stream we did not see) is cut (see calls).
        state.done = watch is not None and watch.done
    finally:
        collect.flush()
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
