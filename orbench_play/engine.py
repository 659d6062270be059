"""The fan-out engine: every (prompt, model, repeat) cell streamed concurrently
through LiteLLM, judged, cached, and reported as a stream of `CellEvent`s.

Everything that shows results (Gradio UI, CLI, benchmarks, tests) consumes
`run(config)` and renders events; nothing renders here. Design choices:

- One asyncio task per cell, bounded by a per-model semaphore *then* a global
  one, so a slow or rate-limited model waits on its own slots and cannot
  starve the others of global ones.
- Retries are ours, not LiteLLM's: we honour `Retry-After`, tell the consumer
  why a cell is waiting, and never retry after text was streamed (the
  consumer already showed it; a half answer is reported, not silently redone).
- Cancellation is the consumer closing the generator (or cancelling the task
  iterating it): in-flight requests are cancelled, finished cells stay
  finished, and nothing partial reaches the cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace

from . import budget, verdicts
from .cache import CachedAnswer, CellKeys, ResultCache, offline_verdict, with_current_verdict
from .failures import CellFailure, describe_failure, reserve_budget
from .judging import _default_judge_resolver, judge_answer
from .llm import COSTS, litellm_module
from .types import CellEvent, CellResult, GenerationParams, ModelSpec, Prompt, RunConfig, Verdict, cell_id, variant_tag

log = logging.getLogger(__name__)

_BACKOFF_BASE_S = 0.5
_BACKOFF_CAP_S = 20.0


def cell_ids(config: RunConfig) -> list[str]:
    """The ids a run's events will carry, in cell order."""
    return Engine(config).cell_ids()


@dataclass(slots=True)
class _Stream:
    """What one attempt collected, kept even when it fails (partial text stays visible)."""

    text: str = ""
    finish_reason: str | None = None
    completion_tokens: int | None = None
    prompt_tokens: int | None = None
    ttft_s: float | None = None


class Engine:
    """Runs cells and judges answers. One per run; holds no state between runs
    except what it is given (the cache handle, the catalog's judge resolver)."""

    def __init__(
        self,
        config: RunConfig,
        *,
        cache: ResultCache | None = None,
        resolve_judge: Callable[[str], ModelSpec] | None = None,
    ):
        self.config = config
        self.cache = cache if config.use_cache else None
        self._resolve_judge = resolve_judge
        self._global = asyncio.Semaphore(max(1, config.concurrency))
        self._per_model: dict[str, asyncio.Semaphore] = {}
        self._queue: asyncio.Queue[CellEvent] = asyncio.Queue()
        self._local_base: str | None = None
        self._local_lock = asyncio.Lock()
        self._params_json = config.params.params_json()
        self._keys = CellKeys(config.params)
        self._tag = variant_tag(config.params.system_prompt_id, self._params_json)

    # -- public -------------------------------------------------------------------

    def cells(self) -> list[tuple[Prompt, ModelSpec, int]]:
        """Prompt-major order, so the first rows of a grid fill first."""
        return [
            (prompt, model, repeat)
            for prompt in self.config.prompts
            for repeat in range(max(1, self.config.repeats))
            for model in self.config.models
        ]

    def cell_ids(self) -> list[str]:
        """The ids events will carry, in cell order."""
        return [cell_id(p.row_id, m.name, r, self._tag) for p, m, r in self.cells()]

    async def events(self) -> AsyncIterator[CellEvent]:
        cells = self.cells()
        replayed, to_run = self._replay_from_cache(cells)
        tasks = [asyncio.create_task(self._run_cell(*cell)) for cell in to_run]
        remaining = len(tasks)
        for task in tasks:
            task.add_done_callback(lambda _t: self._queue.put_nowait(_SENTINEL))
        try:
            for event in replayed:
                yield event
            while remaining:
                event = await self._queue.get()
                if event is _SENTINEL:
                    remaining -= 1
                    continue
                yield event
            while not self._queue.empty():  # events queued after the last sentinel
                event = self._queue.get_nowait()
                if event is not _SENTINEL:
                    yield event
        finally:
            pending = [t for t in tasks if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)

    def _replay_from_cache(self, cells: list[tuple[Prompt, ModelSpec, int]]):
        """Cache hits need no task, no semaphore and no await: answer them
        straight away (unless an LLM judge may still have to be asked)."""
        if self.cache is None or self._judge_configured():
            return [], cells
        events: list[CellEvent] = []
        to_run = []
        params = self.config.params
        for prompt, model, repeat in cells:
            key = self._keys.key(model, params.messages(prompt.text), repeat)
            cached = self.cache.get_answer(key)
            if cached is None:
                to_run.append((prompt, model, repeat))
                continue
            cached = self._current(key, cached)
            result = self._blank_result(prompt, model, repeat)
            verdict = self._fill(result, cached, from_cache=True)
            cid = cell_id(prompt.row_id, model.name, repeat, self._tag)
            events.append(CellEvent("started", cid, prompt.row_id, model.name, repeat))
            events.append(CellEvent("verdict", cid, prompt.row_id, model.name, repeat, verdict=verdict))
            events.append(CellEvent("done", cid, prompt.row_id, model.name, repeat, result=result))
        return events, to_run

    # -- one cell -----------------------------------------------------------------

    def _emit(self, kind: str, prompt: Prompt, model: ModelSpec, repeat: int, **fields) -> None:
        self._queue.put_nowait(
            CellEvent(
                kind, cell_id(prompt.row_id, model.name, repeat, self._tag), prompt.row_id, model.name, repeat, **fields
            )
        )

    def _blank_result(self, prompt: Prompt, model: ModelSpec, repeat: int) -> CellResult:
        params = self.config.params
        return CellResult(
            split=prompt.split,
            row_id=prompt.row_id,
            category=prompt.category,
            prompt=prompt.text,
            model=model.name,
            system_prompt_id=params.system_prompt_id,
            params=self._params_json,
            repeat=repeat,
        )

    async def _run_cell(self, prompt: Prompt, model: ModelSpec, repeat: int) -> None:
        params = self.config.params
        messages = params.messages(prompt.text)
        result = self._blank_result(prompt, model, repeat)
        key = self._keys.key(model, messages, repeat)
        self._emit("started", prompt, model, repeat)
        try:
            cached = self.cache.get_answer(key) if self.cache else None
            if cached is not None:
                cached = self._current(key, cached)
                await self._finish(result, prompt, model, repeat, cached, from_cache=True)
                return
            if model.error:
                raise CellFailure(model.error)
            sem = self._per_model.setdefault(model.name, asyncio.Semaphore(max(1, model.max_concurrency)))
            async with sem, self._global:
                hold = reserve_budget(model, messages, params.max_tokens)
                cost = 0.0
                try:
                    answer = await self._ask_with_retries(prompt, model, repeat, messages, params, result)
                    cost = answer.cost_usd
                finally:
                    budget.settle(hold, cost)
            answer = with_current_verdict(answer)
            if self.cache is not None:
                self.cache.put_answer(key, answer)
            await self._finish(result, prompt, model, repeat, answer, from_cache=False)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every failure is a result, never a crash of the run
            failure = describe_failure(exc, model, self.config.timeout_s)
            result.error = failure.message
            result.verdict = "error"
            result.verdict_source = ""
            self._emit("error", prompt, model, repeat, result=result, message=failure.message)

    def _fill(self, result: CellResult, answer: CachedAnswer, *, from_cache: bool) -> Verdict:
        """Copy a finished answer into its result; return its offline verdict."""
        result.response = answer.response
        result.finish_reason = answer.finish_reason
        result.completion_tokens = answer.completion_tokens
        result.cost_usd = 0.0 if from_cache else answer.cost_usd
        result.latency_s = answer.latency_s
        result.ttft_s = answer.ttft_s
        result.cached = from_cache
        verdict = offline_verdict(answer)
        result.verdict = verdict.label
        result.verdict_source = verdict.source
        return verdict

    def _current(self, key: str, cached: CachedAnswer) -> CachedAnswer:
        """A cache hit with today's verdict; an entry from an older classifier gets
        it written back, so only its first replay pays for re-classifying."""
        current = with_current_verdict(cached)
        if current is not cached and self.cache is not None:
            self.cache.put_answer(key, current)
        return current

    async def _finish(
        self,
        result: CellResult,
        prompt: Prompt,
        model: ModelSpec,
        repeat: int,
        answer: CachedAnswer,
        *,
        from_cache: bool,
    ) -> None:
        verdict = self._fill(result, answer, from_cache=from_cache)
        verdict = await self._maybe_judge(prompt, answer.response, verdict)
        result.verdict = verdict.label
        result.verdict_source = verdict.source
        self._emit("verdict", prompt, model, repeat, verdict=verdict)
        self._emit("done", prompt, model, repeat, result=result)

    async def _ask_with_retries(self, prompt, model, repeat, messages, params, result) -> CachedAnswer:
        attempt = 0
        while True:
            stream = _Stream()
            try:
                return await self._ask_once(prompt, model, repeat, messages, params, stream)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failure = describe_failure(exc, model, self.config.timeout_s)
                result.response = stream.text
                if failure.message == "content_filter":
                    return CachedAnswer(
                        stream.text, "content_filter", stream.completion_tokens, 0.0, None, stream.ttft_s
                    )
                if (
                    stream.text
                    and not isinstance(exc, (TimeoutError, asyncio.TimeoutError))
                    and not (isinstance(exc, CellFailure))
                ):
                    failure = CellFailure(
                        f"The answer stream broke off after {len(stream.text)} characters"
                        " (partial text kept, not scored)."
                    )
                if not failure.retryable or stream.text or attempt >= self.config.max_retries:
                    if attempt and failure.retryable:
                        failure.message += f" Gave up after {attempt + 1} attempts."
                    raise failure from exc
                attempt += 1
                wait = failure.retry_after
                if wait is None:
                    wait = min(_BACKOFF_CAP_S, _BACKOFF_BASE_S * 2 ** (attempt - 1)) * (0.75 + random.random() / 2)  # noqa: S311 -- retry jitter, not security
                wait = min(wait, _BACKOFF_CAP_S * 3)
                self._emit(
                    "retry",
                    prompt,
                    model,
                    repeat,
                    message=f"{failure.message} Retrying in {wait:.1f} s (attempt {attempt + 1} of {self.config.max_retries + 1}).",
                )
                await asyncio.sleep(wait)

    async def _api_base(self, model: ModelSpec) -> str | None:
        if not model.is_local:
            return model.api_base
        async with self._local_lock:
            if self._local_base is None:
                from . import local_model

                self._queue.put_nowait(CellEvent("status", "", "", model.name, message="Starting the embedded model…"))
                self._local_base = await local_model.ensure_server_async()
        return self._local_base

    async def _ask_once(
        self, prompt, model, repeat, messages, params: GenerationParams, stream: _Stream
    ) -> CachedAnswer:
        kwargs: dict = dict(model.extra)
        kwargs.update(
            model=model.litellm_model,
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
            timeout=self.config.timeout_s,
            max_retries=0,
            num_retries=0,
            max_tokens=params.max_tokens,
        )
        if params.temperature is not None:
            kwargs["temperature"] = params.temperature
        if params.top_p is not None:
            kwargs["top_p"] = params.top_p
        api_base = await self._api_base(model)
        if api_base:
            kwargs["api_base"] = api_base
        if model.api_key:
            kwargs["api_key"] = model.api_key
        client = None
        if api_base and not model.is_local:
            from . import guards

            try:  # public mode: resolve + check now, pin the connection to that address, no redirects
                client = await guards.endpoint_client(model)
            except guards.GuardError as exc:
                raise CellFailure(str(exc)) from None
            if client is not None:
                kwargs["client"] = client
        try:
            return await self._stream_answer(prompt, model, repeat, kwargs, stream)
        finally:
            if client is not None:
                with contextlib.suppress(Exception):
                    await client.close()

    async def _stream_answer(self, prompt, model, repeat, kwargs: dict, stream: _Stream) -> CachedAnswer:
        litellm = litellm_module()
        live = verdicts.LiveVerdict()
        start = time.perf_counter()
        async with asyncio.timeout(self.config.timeout_s):
            response = await litellm.acompletion(**kwargs)
            async for chunk in response:
                usage = getattr(chunk, "usage", None)
                if usage is not None:
                    stream.completion_tokens = getattr(usage, "completion_tokens", None) or stream.completion_tokens
                    stream.prompt_tokens = getattr(usage, "prompt_tokens", None) or stream.prompt_tokens
                choices = chunk.choices
                if not choices:
                    continue
                choice = choices[0]
                if choice.finish_reason:
                    stream.finish_reason = choice.finish_reason
                delta = choice.delta.content if choice.delta is not None else None
                if delta:
                    if stream.ttft_s is None:
                        stream.ttft_s = time.perf_counter() - start
                    stream.text += delta
                    self._emit("delta", prompt, model, repeat, text=delta)
                    provisional = live.feed(delta)
                    if provisional is not None:
                        self._emit("verdict", prompt, model, repeat, verdict=provisional)
        latency = time.perf_counter() - start
        if stream.finish_reason is None:
            raise CellFailure("The stream was cut off before the answer ended.")
        return CachedAnswer(
            response=stream.text,
            finish_reason=stream.finish_reason,
            completion_tokens=stream.completion_tokens,
            cost_usd=COSTS.cost(model, stream.prompt_tokens, stream.completion_tokens),
            latency_s=round(latency, 4),
            ttft_s=None if stream.ttft_s is None else round(stream.ttft_s, 4),
        )

    # -- LLM judge ----------------------------------------------------------------

    def _judge_configured(self) -> bool:
        return bool(self.config.judge) and self.config.judge != "keyword"

    async def _maybe_judge(self, prompt: Prompt, response: str, fallback: Verdict) -> Verdict:
        """Ask the judge model when one is configured; the provider layer
        (content filter, empty answer) is certain and skips it."""
        judge = self.config.judge
        if not self._judge_configured() or fallback.source == "provider":
            return fallback
        try:
            spec = self._resolve_judge(judge) if self._resolve_judge else _default_judge_resolver(judge)
        except Exception as exc:
            return replace(fallback, rationale=f"judge unavailable: {exc}")
        return await judge_answer(spec, prompt.text, response, fallback, cache=self.cache)


_SENTINEL = CellEvent("done", "", "", "")


async def run(
    config: RunConfig,
    *,
    cache: ResultCache | None = None,
    resolve_judge: Callable[[str], ModelSpec] | None = None,
) -> AsyncIterator[CellEvent]:
    """Stream the events of one run. Close the generator to stop the run."""
    engine = Engine(config, cache=cache, resolve_judge=resolve_judge)
    agen = engine.events()
    try:
        async for event in agen:
            yield event
    finally:
        with contextlib.suppress(Exception):
            await agen.aclose()


async def collect(config: RunConfig, **kwargs) -> list[CellResult]:
    """Run to the end and return the finished and failed cells, in cell order."""
    results: dict[str, CellResult] = {}
    async for event in run(config, **kwargs):
        if event.kind in ("done", "error") and event.result is not None:
            results[event.cell_id] = event.result
    order = {cid: i for i, cid in enumerate(cell_ids(config))}
    return sorted(results.values(), key=lambda r: order.get(r.cell_id, 0))
