"""One cell's calls to its model: LiteLLM's arguments, the retry loop, what the
provider will bill, and the embedded model's address.

The engine decides *which* cells run and reports their events; this module
asks one model one prompt, as often as a retry can help. Retries are ours, not
LiteLLM's (it and the OpenAI SDK are told `max_retries=0, num_retries=0`), so
that we can honour `Retry-After`, say in the cell why it waits, count the
attempts and the wait in the result, and never retry once text was shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
from collections.abc import Callable
from typing import Any, Protocol

from ..cache import CachedAnswer
from ..types import CellResult, EventKind, GenerationParams, ModelSpec
from .bounds import StreamBounds
from .failures import CellFailure, describe_failure, ended_early, out_of_tokens_thinking, stream_failure
from .llm import COSTS
from .streams import StreamState, stream_answer
from .timeouts import Limits

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 20.0


class CellSink(Protocol):
    """What a call needs of its cell: somewhere to put text, events and spend."""

    model: ModelSpec
    spent: float

    @property
    def settled_here(self) -> bool:
        """The answer's verdict settled while it streamed, and the stream was stopped for it."""
        ...

    def __call__(self, piece: str) -> None: ...

    def thought(self, piece: str) -> None: ...

    def moved(self) -> None: ...

    def emit(self, kind: EventKind, **fields: Any) -> None: ...


class EmbeddedServer:
    """The embedded models' addresses for one run, each server started on first use,
    with a `status` message before and after (the page shows the latest one). Each
    model has its own lock, so a slow start of one (Qwen joins its file once) never
    holds up the other's cells."""

    def __init__(self, status: Callable[[ModelSpec, str], None]):
        self._status = status
        self._locks: dict[str, asyncio.Lock] = {}
        self._bases: dict[str, str] = {}

    async def base(self, model: ModelSpec) -> str:
        lock = self._locks.setdefault(model.name, asyncio.Lock())
        async with lock:
            if model.name not in self._bases:
                from ..models import embedded

                if embedded.status(model.name).startswith("ready"):
                    self._bases[model.name] = await embedded.ensure_server_async(model.name)
                else:
                    short = embedded.get(model.name).short
                    self._status(model, f"Starting the embedded model {short}…")
                    began = time.perf_counter()
                    try:
                        self._bases[model.name] = await embedded.ensure_server_async(model.name)
                    except Exception:
                        self._status(model, f"The embedded model {short} could not start (see its cells).")
                        raise
                    took = time.perf_counter() - began
                    self._status(
                        model,
                        f"Embedded model started ({short}, {embedded.slots(model.name)} slots) in {took:.1f} s.",
                    )
            return self._bases[model.name]


def completion_kwargs(
    model: ModelSpec, params: GenerationParams, messages: list[dict[str, str]], limits: Limits
) -> dict[str, Any]:
    """`litellm.acompletion`'s arguments for one attempt (without api_base/key/client)."""
    kwargs: dict[str, Any] = dict(model.extra)
    kwargs.update(
        model=model.litellm_model,
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
        timeout=limits.transport_s,
        max_retries=0,
        num_retries=0,
        max_tokens=params.max_tokens_for(model),
    )
    if params.temperature is not None:
        kwargs["temperature"] = params.temperature
    if params.top_p is not None:
        kwargs["top_p"] = params.top_p
    if params.reasoning_effort is not None:
        kwargs["reasoning_effort"] = params.reasoning_effort  # LiteLLM drops it where unsupported (drop_params)
    return kwargs


def arrived_tokens(state: StreamState) -> int:
    """Output tokens (thoughts and answer) of a stream stopped before its end: the
    provider's count when it sent one, else the chunks that came after the first
    (llama.cpp and OpenAI-format providers send a token a chunk), and never fewer
    than one token per 4 characters (providers that send several tokens a chunk)."""
    if state.completion_tokens:
        return state.completion_tokens
    by_chars = math.ceil((state.chars + state.thought_chars) / 4)
    return max(state.chunks - 1, by_chars, 1 if state.chars else 0)


class Caller:
    """Asks models for one run: its settings, limits and embedded server."""

    def __init__(
        self,
        params: GenerationParams,
        max_retries: int,
        limits: Callable[[ModelSpec], Limits],
        server: EmbeddedServer,
    ):
        self.params = params
        self.max_retries = max_retries
        self.limits = limits
        self.server = server

    async def ask(self, cell: CellSink, messages: list[dict[str, str]], result: CellResult) -> CachedAnswer:
        """The finished answer, or a CellFailure after the retries that can help.
        `result.attempts` / `retry_wait_s` / partial `response` are kept up to date;
        `cell.spent` grows by what each attempt that reached a stream will be billed."""
        model = cell.model
        limits = self.limits(model)
        bounds = StreamBounds.for_tokens(self.params.max_tokens_for(model))
        prompt_chars = sum(len(m.get("content") or "") for m in messages)
        started = time.perf_counter()  # latency and time to first text count from the first attempt
        while True:
            state = StreamState()
            result.attempts += 1
            try:
                return await self._once(cell, messages, state, started, limits, bounds)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failure = (stream_failure(exc, state.chars) if state.responded else None) or describe_failure(
                    exc, model, limits.first_s
                )
                result.response = state.text
                result.reasoning = state.thoughts
                result.reasoning_tokens = state.reasoning_tokens
                if failure.message == "content_filter":
                    return CachedAnswer(state.text, "content_filter", state.completion_tokens, 0.0, None, state.ttft_s)
                if not failure.retryable or state.chars or result.attempts > self.max_retries:
                    if result.attempts > 1 and failure.retryable:
                        failure.message += f" Gave up after {result.attempts} attempts."
                    raise failure from exc
                wait = failure.retry_after
                if wait is None:
                    jitter = 0.75 + random.random() / 2  # noqa: S311 -- retry jitter, not security
                    wait = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** (result.attempts - 1)) * jitter
                wait = min(wait, BACKOFF_CAP_S * 3)
                cell.emit(
                    "retry",
                    message=f"{failure.message} Retrying in {wait:.1f} s (attempt {result.attempts + 1} of {self.max_retries + 1}).",
                )
                await asyncio.sleep(wait)
                result.retry_wait_s = round(result.retry_wait_s + wait, 3)
            finally:  # finished, failed or stopped: what was streamed is billed
                if state.responded:
                    cell.spent += COSTS.streamed(
                        model, prompt_chars, state.prompt_tokens, state.completion_tokens, state.chars
                    )

    async def _once(
        self,
        cell: CellSink,
        messages: list[dict[str, str]],
        state: StreamState,
        started: float,
        limits: Limits,
        bounds: StreamBounds,
    ) -> CachedAnswer:
        model = cell.model
        kwargs = completion_kwargs(model, self.params, messages, limits)
        api_base = await self.server.base(model) if model.is_local else model.api_base
        if api_base:
            kwargs["api_base"] = api_base
        if model.api_key:
            kwargs["api_key"] = model.api_key
        client = None
        if api_base and not model.is_local:
            from .. import guards

            try:  # public mode: resolve + check now, pin the connection to that address, no redirects
                client = await guards.endpoint_client(model)
            except guards.GuardError as exc:
                raise CellFailure(str(exc)) from None
            if client is not None:
                kwargs["client"] = client
        try:
            await stream_answer(kwargs, state, cell, limits, started, bounds)
        finally:
            if client is not None:
                with contextlib.suppress(Exception):
                    await client.close()
        if not state.complete and cell.settled_here:  # stopped on purpose: its verdict settled
            return self._settled(model, state, started, messages)
        if not state.complete:  # the body ended without a finish reason or [DONE]
            raise ended_early(state.chars)
        finish = state.finish_reason or "stop"  # [DONE] alone ends an answer as "stop" does
        if finish == "length" and state.thought_chars and not state.text.strip():
            raise out_of_tokens_thinking(state, bounds.max_tokens)
        if state.refused and finish not in ("content_filter", "length"):
            finish = "refusal"  # OpenAI's refusal field: a refusal by provider signal
        return CachedAnswer(
            response=state.text,
            finish_reason=finish,
            completion_tokens=state.completion_tokens,
            cost_usd=COSTS.cost(model, state.prompt_tokens, state.completion_tokens),
            latency_s=round(time.perf_counter() - started, 4),
            ttft_s=None if state.ttft_s is None else round(state.ttft_s, 4),
            reasoning=state.thoughts,
            reasoning_tokens=state.reasoning_tokens,
            ttfa_s=None if state.ttfa_s is None else round(state.ttfa_s, 4),
        )

    def _settled(
        self, model: ModelSpec, state: StreamState, started: float, messages: list[dict[str, str]]
    ) -> CachedAnswer:
        """What a stream stopped once its verdict settled leaves: the text that had
        arrived, no finish reason, and the output tokens it had cost (also what the
        spend cap is charged: `ask` bills the state's count)."""
        tokens = state.completion_tokens = arrived_tokens(state)
        prompt_chars = sum(len(m.get("content") or "") for m in messages)
        return CachedAnswer(
            response=state.text,
            finish_reason=None,
            completion_tokens=tokens,
            cost_usd=COSTS.streamed(model, prompt_chars, state.prompt_tokens, tokens, state.chars),
            latency_s=round(time.perf_counter() - started, 4),
            ttft_s=None if state.ttft_s is None else round(state.ttft_s, 4),
            reasoning=state.thoughts,
            reasoning_tokens=state.reasoning_tokens,
            ttfa_s=None if state.ttfa_s is None else round(state.ttfa_s, 4),
            settled=True,
            settled_at_tokens=tokens,
        )
