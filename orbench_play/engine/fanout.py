"""The fan-out engine: every (prompt, model, repeat) cell streamed concurrently
through LiteLLM, judged, cached, and reported as a stream of `CellEvent`s.

Everything that shows results (Gradio UI, CLI, benchmarks, tests) consumes
`run(config)` (or `run_batches(config)`, the same events in lists) and renders
events; nothing renders here. Design choices:

- One asyncio task per cell, bounded by a per-model semaphore *then* a global
  one, so a slow or rate-limited model waits on its own slots and cannot
  starve the others of global ones.
- Reading a stream is `streams.stream_answer`'s job (a fast path for OpenAI-
  format streams, LiteLLM's wrapper for the rest); its limits are `timeouts`'.
- Per-chunk work is amortised: a cell's text is coalesced into at most one
  `delta` event per `FLUSH_INTERVAL_S`, and the provisional verdict is fed
  those coalesced pieces (it re-classifies on sentence ends or every few
  dozen characters), so a 300-chunk answer costs ~40 events, not 300.
- Retries are ours, not LiteLLM's: we honour `Retry-After`, tell the consumer
  why a cell is waiting, and never retry after text was streamed (the
  consumer already showed it; a half answer is reported, not silently redone).
  The result says how many attempts were made and how long we waited, and
  latency counts from the first attempt.
- A follow-up run (`RunConfig.follow_ups`) asks given cells one turn further:
  the whole conversation is sent (and is the cache key), each turn has a cell
  id of its own (`types.turn_cell_id`) and its own live and final verdict,
  read against the OR-Bench prompt (is the request answered now?).
- Settling (`RunConfig.settle`): each cell's answer is also fed to a
  `verdicts.SettleWatch`, beside its live verdict; once the verdict can no
  longer change, the cell stops its stream (the attempt's watchdog ends it
  quietly and the request is closed, so the provider stops generating), keeps
  what arrived, and is marked `settled`. Settled answers are cached under a
  key of their own (`cache.settled_key`): a run that does not settle never
  replays one, and one that does finds them again (it takes a whole answer
  when there is one: it is free, and better).
- Cancellation is the consumer closing the generator (or cancelling the task
  iterating it): in-flight requests are cancelled, finished cells stay
  finished, nothing partial reaches the cache, and what was streamed is still
  charged to the daily budget.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable
from dataclasses import replace

from .. import budget, verdicts
from ..cache import AnswerCache, CachedAnswer, CellKeys, offline_verdict, settled_key, with_current_verdict
from ..scoring import sureness
from ..types import (
    CellEvent,
    CellResult,
    EventKind,
    FollowUp,
    ModelSpec,
    Prompt,
    RunConfig,
    Verdict,
    cell_id,
    turn_cell_id,
    variant_tag,
)
from ..verdicts.offline import provider_explanation
from ..verdicts.presets import needs_judge
from ..verdicts.settle import Settled, SettleWatch
from .calls import Caller, EmbeddedServer
from .failures import CellFailure, describe_failure, reserve_budget
from .judging import _default_judge_resolver, judge_answer, judge_asked, judged_source
from .llm import COSTS
from .timeouts import Limits, limits_for

log = logging.getLogger(__name__)

FLUSH_INTERVAL_S = 0.05
"""At most one `delta` event per cell per this many seconds (20 a second: smooth to the eye)."""


def cell_ids(config: RunConfig) -> list[str]:
    """The ids a run's events will carry, in cell order."""
    return Engine(config).cell_ids()


class _Cell:
    """One cell while it runs: its ids, the text and thoughts not yet sent as a
    `delta`, and its provisional verdict (read from the answer only). Called
    with each piece of answer text as it arrives; `thought` with each piece of
    thoughts."""

    __slots__ = (
        "_stop", "began", "cid", "dirty", "engine", "live", "model", "pending", "prompt", "repeat", "settle",
        "settled", "spent", "thinking", "turn",
    )  # fmt: skip

    def __init__(self, engine: Engine, prompt: Prompt, model: ModelSpec, repeat: int):
        self.engine, self.prompt, self.model, self.repeat = engine, prompt, model, repeat
        self.cid = engine.cid(prompt, model, repeat)
        self.turn = engine.turn(prompt, model, repeat)
        self.pending: list[str] = []
        self.thinking: list[str] = []
        self.dirty = False
        self.live = verdicts.LiveVerdict(prompt.text)
        self.spent = 0.0
        """Dollars the provider will bill for this cell's attempts so far."""
        self.settle = SettleWatch(prompt.text) if engine.config.settle else None
        self.settled: Settled | None = None
        """The verdict settled while the answer streamed (`settle`)."""
        self.began = not model.reasons
        """The answer has begun: always for a model that does not reason; for one that
        does, once thoughts have come (its answer follows them). Nothing settles before."""
        self._stop: Callable[[], None] | None = None

    def __call__(self, piece: str) -> None:
        self.pending.append(piece)
        if not self.dirty:
            self.dirty = True
            self.engine.dirty.append(self)

    @property
    def settled_here(self) -> bool:
        return self.settled is not None

    def attach_stop(self, stop: Callable[[], None] | None) -> None:
        """The stream being read gives a way to end it (None once it is read)."""
        self._stop = stop

    def thought(self, piece: str) -> None:
        self.began = True
        self.thinking.append(piece)
        if not self.dirty:
            self.dirty = True
            self.engine.dirty.append(self)

    def moved(self) -> None:
        """The answer so far was thoughts (a lone `</think>`): consumers move it,
        and the provisional verdict starts again from the real answer."""
        self.flush()
        self.emit("delta", moved=True)
        self.live = verdicts.LiveVerdict(self.prompt.text)
        self.began = True
        if self.settle is not None:  # what it read was thoughts: start again on the answer
            self.settle = SettleWatch(self.prompt.text)
            self.settled = None

    def emit(self, kind: EventKind, **fields) -> None:
        self.engine.emit(
            CellEvent(kind, self.cid, self.prompt.row_id, self.model.name, self.repeat, turn=self.turn, **fields)
        )

    def flush(self) -> None:
        """Send the text and thoughts received since the last flush as one `delta`."""
        if not self.pending and not self.thinking:
            return
        text = self.pending[0] if len(self.pending) == 1 else "".join(self.pending)
        thoughts = self.thinking[0] if len(self.thinking) == 1 else "".join(self.thinking)
        self.pending.clear()
        self.thinking.clear()
        self.emit("delta", text=text, thoughts=thoughts)
        if text:
            provisional = self.live.feed(text)
            if provisional is not None:
                self.emit("verdict", verdict=provisional)
            if self.settle is not None and self.settled is None:
                self.settled = self.settle.feed(text, self.live.label, answer_began=self.began)
                if self.settled is not None and self._stop is not None:
                    self._stop()  # the attempt ends at its next await; what arrived is kept


class Engine:
    """Runs cells and judges answers. One per run; holds no state between runs
    except what it is given (the cache handle, the catalog's judge resolver)."""

    def __init__(
        self,
        config: RunConfig,
        *,
        cache: AnswerCache | None = None,
        resolve_judge: Callable[[str], ModelSpec] | None = None,
    ):
        self.config = config
        self.cache = cache if config.use_cache else None
        self._resolve_judge = resolve_judge
        self._global = asyncio.Semaphore(max(1, config.concurrency))
        self._per_model: dict[str, asyncio.Semaphore] = {}
        self._limits: dict[str, Limits] = {}
        self._out: list[CellEvent] = []
        self._wake = asyncio.Event()
        self.dirty: list[_Cell] = []
        self._caller = Caller(config.params, config.max_retries, self.limits, EmbeddedServer(self._status))
        self._params_json = config.params.params_json()
        self._keys = CellKeys(config.params)
        self.tag = variant_tag(config.params.system_prompt_id, self._params_json)
        self._follow: dict[tuple[str, str, int], FollowUp] = {
            (f.row_id, f.model, f.repeat): f for f in config.follow_ups
        }

    # -- public -------------------------------------------------------------------

    def cells(self) -> list[tuple[Prompt, ModelSpec, int]]:
        """Prompt-major order, so the first rows of a grid fill first; a
        follow-up run's cells in the order of its follow-ups."""
        if self.config.follow_ups:
            prompts = {p.row_id: p for p in self.config.prompts}
            models = {m.name: m for m in self.config.models}
            missing = [f for f in self.config.follow_ups if f.row_id not in prompts or f.model not in models]
            if missing:
                raise ValueError(
                    f"follow-up for {missing[0].row_id} · {missing[0].model}: not in the run's prompts/models"
                )
            return [(prompts[f.row_id], models[f.model], f.repeat) for f in self.config.follow_ups]
        cells = [
            (prompt, model, repeat)
            for prompt in self.config.prompts
            for repeat in range(max(1, self.config.repeats))
            for model in self.config.models
        ]
        if self.config.only:
            only = set(self.config.only)
            cells = [cell for cell in cells if self.cid(*cell) in only]
        return cells

    def cell_ids(self) -> list[str]:
        """The ids events will carry, in cell order."""
        return [self.cid(p, m, r) for p, m, r in self.cells()]

    def follow_up(self, prompt: Prompt, model: ModelSpec, repeat: int) -> FollowUp | None:
        return self._follow.get((prompt.row_id, model.name, repeat)) if self._follow else None

    def turn(self, prompt: Prompt, model: ModelSpec, repeat: int) -> int:
        follow = self.follow_up(prompt, model, repeat)
        return follow.turn if follow is not None else 1

    def cid(self, prompt: Prompt, model: ModelSpec, repeat: int) -> str:
        """The id of this cell's turn in this run (the first turn's is the cell's own)."""
        first = cell_id(prompt.row_id, model.name, repeat, self.tag)
        return turn_cell_id(first, self.turn(prompt, model, repeat))

    def messages(self, prompt: Prompt, model: ModelSpec, repeat: int) -> list[dict[str, str]]:
        """What the model is sent: the prompt, or the whole conversation so far and the follow-up."""
        follow = self.follow_up(prompt, model, repeat)
        if follow is None:
            return self.config.params.messages(prompt.text)
        return self.config.params.conversation(follow.history, follow.text)

    def emit(self, event: CellEvent) -> None:
        self._out.append(event)
        self._wake.set()

    async def batches(self) -> AsyncGenerator[list[CellEvent], None]:
        """The run's events, in lists of whatever happened since the last one.

        The cache is asked once for every cell of the run (one round trip to a
        shared store), and its writes are waited for only after the last event
        is out, so no cell waits on the cache beyond that one read."""
        replayed, to_run = await self._replay_from_cache(self.cells())
        if replayed:
            yield replayed
        tasks = [asyncio.create_task(self._run_cell(*cell)) for cell in to_run]
        remaining = len(tasks)

        def finished(_task: asyncio.Task) -> None:
            nonlocal remaining
            remaining -= 1
            self._wake.set()

        for task in tasks:
            task.add_done_callback(finished)
        flusher = asyncio.create_task(self._flush_every(FLUSH_INTERVAL_S)) if tasks else None
        try:
            while True:
                if self._out:
                    batch, self._out = self._out, []
                    yield batch
                    continue
                if not remaining:
                    break
                self._wake.clear()
                await self._wake.wait()
        finally:
            pending = [t for t in tasks if not t.done()]
            if flusher is not None:
                pending.append(flusher)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
            await self._drain()

    async def _drain(self) -> None:
        """The run's answers and spend, written behind its cells, reach their
        stores before the run ends (bounded: a lost store is given up on)."""
        with contextlib.suppress(Exception):
            if self.cache is not None:
                await self.cache.drain()
            await budget.drain()

    async def _flush_every(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            if self.dirty:
                dirty, self.dirty = self.dirty, []
                for cell in dirty:
                    cell.dirty = False
                    cell.flush()

    async def _replay_from_cache(self, cells: list[tuple[Prompt, ModelSpec, int]]):
        """Look every cell up at once (one read of the store). Hits need no
        task, no semaphore and no await: they are answered straight away, unless
        an LLM judge may still have to be asked, in which case the cell runs
        with its hit in hand. Returns (events, cells to run with their hits)."""
        if self.cache is None:
            return [], [(prompt, model, repeat, None) for prompt, model, repeat in cells]
        await self.cache.prepare()
        keys = [self._keys.key(model, self.messages(prompt, model, repeat), repeat) for prompt, model, repeat in cells]
        partial = [settled_key(key) for key in keys] if self.config.settle else []
        hits = await self.cache.get_answers([*keys, *partial])
        judged = self._judge_configured()
        events: list[CellEvent] = []
        to_run = []
        for i, ((prompt, model, repeat), key) in enumerate(zip(cells, keys, strict=True)):
            cached = hits.get(key)
            if cached is not None and cached.settled:
                cached = None  # a partial answer under a whole answer's key: never served as whole
            if cached is None and partial:  # a settling run: its own settled answer, when no whole one
                key = partial[i]
                cached = hits.get(key)
                if cached is not None and not cached.settled:
                    cached = None
            if cached is not None:
                cached = self._current(key, cached, prompt.text)
            if cached is None or judged:
                to_run.append((prompt, model, repeat, cached))
                continue
            result = self._blank_result(prompt, model, repeat)
            verdict = self._fill(result, cached, prompt.text, model, from_cache=True)
            cid, turn = self.cid(prompt, model, repeat), result.turn
            events.append(CellEvent("started", cid, prompt.row_id, model.name, repeat, turn=turn))
            events.append(CellEvent("verdict", cid, prompt.row_id, model.name, repeat, verdict=verdict, turn=turn))
            events.append(CellEvent("done", cid, prompt.row_id, model.name, repeat, result=result, turn=turn))
        return events, to_run

    # -- one cell -----------------------------------------------------------------

    def _blank_result(self, prompt: Prompt, model: ModelSpec, repeat: int) -> CellResult:
        params = self.config.params
        follow = self.follow_up(prompt, model, repeat)
        return CellResult(
            split=prompt.split,
            row_id=prompt.row_id,
            category=prompt.category,
            prompt=prompt.text,
            model=model.name,
            system_prompt_id=params.system_prompt_id,
            params=self._params_json,
            repeat=repeat,
            turn=follow.turn if follow is not None else 1,
            conversation_id=cell_id(prompt.row_id, model.name, repeat, self.tag),
            follow_up=follow.text if follow is not None else "",
            expected=prompt.expected,
        )

    def limits(self, model: ModelSpec) -> Limits:
        """The time limits of this model's cells (see `timeouts`)."""
        found = self._limits.get(model.name)
        if found is None:
            config = self.config
            found = self._limits[model.name] = limits_for(
                run_timeout_s=config.timeout_s,
                run_idle_s=config.idle_timeout_s,
                run_token_s=config.token_timeout_s,
                model_timeout_s=model.timeout_s,
                model_idle_s=model.idle_timeout_s,
                model_token_s=model.token_timeout_s,
                max_tokens=config.params.max_tokens_for(model),
            )
        return found

    async def _run_cell(self, prompt: Prompt, model: ModelSpec, repeat: int, cached: CachedAnswer | None) -> None:
        params = self.config.params
        messages = self.messages(prompt, model, repeat)
        result = self._blank_result(prompt, model, repeat)
        key = self._keys.key(model, messages, repeat)
        cell = _Cell(self, prompt, model, repeat)
        cell.emit("started")
        try:
            if cached is not None:  # a hit that an LLM judge still has to see
                await self._finish(result, cell, cached, from_cache=True)
                return
            if model.error:
                raise CellFailure(model.error)
            sem = self._per_model.setdefault(model.name, asyncio.Semaphore(max(1, model.max_concurrency)))
            async with sem, self._global:
                ttl = self.limits(model).total_s * (1 + max(0, self.config.max_retries))
                hold = await reserve_budget(model, messages, params.max_tokens_for(model), ttl)
                try:
                    answer = await self._caller.ask(cell, messages, result)
                finally:  # success, failure or Stop: the provider bills what it streamed
                    budget.settle(hold, cell.spent)
            answer = with_current_verdict(answer, prompt.text)
            if self.cache is not None:  # a settled answer under its own key, never the whole answer's
                self.cache.put_answer(settled_key(key) if answer.settled else key, answer)
            await self._finish(result, cell, answer, from_cache=False)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every failure is a result, never a crash of the run
            cell.flush()
            failure = describe_failure(exc, model, self.limits(model).first_s)
            result.error = failure.message
            result.verdict = "error"
            result.verdict_source = ""
            result.p_refusal = result.sure = None
            cell.emit("error", result=result, message=failure.message)

    def _fill(
        self, result: CellResult, answer: CachedAnswer, prompt: str, model: ModelSpec, *, from_cache: bool
    ) -> Verdict:
        """Copy a finished answer into its result; return its offline verdict
        (read against its `prompt`), its rationale the signals it rests on. A
        settled answer says so, and what settling saved in this run (nothing
        when it is replayed: nothing would have been generated)."""
        result.response = answer.response
        result.finish_reason = answer.finish_reason
        result.completion_tokens = answer.completion_tokens
        result.cost_usd = 0.0 if from_cache else answer.cost_usd
        result.latency_s = answer.latency_s
        result.ttft_s = answer.ttft_s
        result.reasoning = answer.reasoning
        result.reasoning_tokens = answer.reasoning_tokens
        result.ttfa_s = answer.ttfa_s
        result.cached = from_cache
        result.settled = answer.settled
        if answer.settled:
            result.settled_at_tokens = answer.settled_at_tokens
            result.saved_tokens, result.saved_cost_usd = 0, 0.0
            if not from_cache:
                limit = self.config.params.max_tokens_for(model)
                result.saved_tokens = max(0, limit - (answer.settled_at_tokens or 0))
                result.saved_cost_usd = COSTS.cost(model, 0, result.saved_tokens) if result.saved_tokens else 0.0
        verdict = offline_verdict(answer, prompt)
        if verdict.source == "provider":
            verdict = replace(verdict, rationale=_provider_rationale(answer))
        result.verdict = verdict.label
        result.verdict_source = verdict.source
        result.p_refusal, result.sure = sureness.of_verdict(verdict)
        return verdict

    def _current(self, key: str, cached: CachedAnswer, prompt: str) -> CachedAnswer:
        """A cache hit with today's verdict; an entry from an older classifier gets
        it written back, so only its first replay pays for re-classifying."""
        current = with_current_verdict(cached, prompt)
        if current is not cached and self.cache is not None:
            self.cache.put_answer(key, current)
        return current

    async def _finish(self, result: CellResult, cell: _Cell, answer: CachedAnswer, *, from_cache: bool) -> None:
        cell.flush()
        verdict = self._fill(result, answer, cell.prompt.text, cell.model, from_cache=from_cache)
        asked = judge_asked(self.config.judge, verdict)
        if asked:
            verdict = await self._judge(cell.prompt, answer.response, verdict)
        result.verdict = verdict.label
        result.verdict_source = verdict.source
        result.p_refusal, result.sure = sureness.of_verdict(verdict)
        if asked:  # a judge that gave no verdict is said so, with why
            result.verdict_source, result.judge_error = judged_source(verdict)
        cell.emit("verdict", verdict=verdict)
        cell.emit("done", result=result)

    def _status(self, model: ModelSpec, message: str) -> None:
        self.emit(CellEvent("status", "", "", model.name, message=message))

    # -- LLM judge ----------------------------------------------------------------

    def _judge_configured(self) -> bool:
        return bool(self.config.judge) and self.config.judge != "keyword"

    async def _judge(self, prompt: Prompt, response: str, fallback: Verdict) -> Verdict:
        """Ask the judge model about an answer `judge_asked` picked (under
        `auto:<judge>`, one whose offline verdict is unsure)."""
        judge = needs_judge(self.config.judge, fallback.confidence) or ""
        try:
            spec = self._resolve_judge(judge) if self._resolve_judge else _default_judge_resolver(judge)
        except Exception as exc:
            return replace(fallback, rationale=f"judge unavailable: {exc}")
        return await judge_answer(spec, prompt.text, response, fallback, cache=self.cache)


def _provider_rationale(answer: CachedAnswer) -> str:
    """Why the provider layer decided, in words the page can show: an empty
    answer and a filtered one are both refusals, but not the same thing."""
    sentence = provider_explanation(answer.finish_reason)
    if answer.finish_reason == "content_filter":
        return sentence.rstrip(".") + " (finish_reason=content_filter)."
    if answer.finish_reason == "refusal":
        return "The provider marked this answer as a refusal (its refusal field)."
    return sentence


async def run_batches(
    config: RunConfig,
    *,
    cache: AnswerCache | None = None,
    resolve_judge: Callable[[str], ModelSpec] | None = None,
) -> AsyncGenerator[list[CellEvent], None]:
    """The events of one run in lists (cheaper for consumers that render in
    frames). Close the generator to stop the run."""
    agen = Engine(config, cache=cache, resolve_judge=resolve_judge).batches()
    try:
        async for batch in agen:
            yield batch
    finally:
        with contextlib.suppress(Exception):
            await agen.aclose()


async def run(
    config: RunConfig,
    *,
    cache: AnswerCache | None = None,
    resolve_judge: Callable[[str], ModelSpec] | None = None,
) -> AsyncGenerator[CellEvent, None]:
    """Stream the events of one run. Close the generator to stop the run."""
    agen = run_batches(config, cache=cache, resolve_judge=resolve_judge)
    try:
        async for batch in agen:
            for event in batch:
                yield event
    finally:
        with contextlib.suppress(Exception):
            await agen.aclose()


async def collect(
    config: RunConfig,
    *,
    cache: AnswerCache | None = None,
    resolve_judge: Callable[[str], ModelSpec] | None = None,
) -> list[CellResult]:
    """Run to the end and return the finished and failed cells, in cell order.
    Reads the run's batches, not event by event (a replayed run is three events
    a cell, and a step through `run`'s generator cost more than the event), and
    takes the cell order from the run's own engine, not from a second one."""
    engine = Engine(config, cache=cache, resolve_judge=resolve_judge)
    order = {cid: i for i, cid in enumerate(engine.cell_ids())}
    results: dict[str, CellResult] = {}
    agen = engine.batches()
    try:
        async for batch in agen:
            for event in batch:
                if event.result is not None and event.kind in ("done", "error"):
                    results[event.cell_id] = event.result
    finally:
        with contextlib.suppress(Exception):
            await agen.aclose()
    return sorted(results.values(), key=lambda r: order.get(r.cell_id, 0))
