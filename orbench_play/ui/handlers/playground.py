"""The playground's event handlers: they turn controls into engine runs and
render the visitor's session; the page itself is built in `layout.py`.

Flow of a run: the Run handler resolves models and samples prompts, starts a
*pump* task that folds engine events into the visitor's `Session` as they
arrive (O(1) each), and itself yields a `Frame` at most every
`RENDER_INTERVAL_S` seconds. A frame costs what changed since the last one:
the page gets one `live_feed` batch (see `frames`), API callers the progress
line, and both get the whole result at the end. Stop cancels the handler and
the pump (which closes the engine generator, cancelling the in-flight
requests); whatever finished is already in the session.

Every handler that touches a session is a coroutine: they all run on the
event loop, so the pump, Stop, overrides and resyncs never race in threads.

Cold start: nothing here imports LiteLLM or reads the dataset at import or
build time. `warmup.warm_up()` imports the engine and LiteLLM in a background thread
after launch, and the first run awaits it off the event loop, saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import gradio as gr

from ... import data, guards
from ...asking.prompts import variant_of
from ...models import CatalogError
from ...types import FollowUp, GenerationParams, ModelSpec, Prompt, RunConfig
from ..state import shared_state, warmup
from ..state.exports import CSV_LABEL, JSONL_LABEL, disk_full_message, download_update
from ..state.query import MAX_MODELS, MAX_PER_CATEGORY
from ..state.resume import ELSEWHERE, EXPIRED, RESTORED
from ..state.session import RunView, Session, usable_session
from ..views import plot_view, scoreboard_view
from . import dataset_handlers
from .base import settle_default
from .compare_handlers import CompareHandlers
from .followup_handlers import FollowUpHandlers
from .forms import custom_prompt, generation_params, repeats_value
from .frames import PAGE_OUTPUTS, Frame, toast
from .history_handlers import HistoryHandlers
from .review_handlers import ReviewHandlers
from .setup_handlers import SetupHandlers

log = logging.getLogger(__name__)

RENDER_INTERVAL_S = 0.1
"""At most ~10 frames a second, however many cells stream."""
MAX_RUN_CONCURRENCY = 256
"""Requests one run may have in flight across all its models."""
IDLE_FRAME_S = 1.0
"""With no news, the progress line (elapsed time) is still refreshed this often."""

ORPHANED_RUN_S = 15.0
"""A run whose page went away is stopped after this long unless a reload adopts it."""
DETACH_WAIT_S = 3.0
"""On a reload, how long the new page waits for the old one's unload before deciding
that another open tab shows the session."""

LOADING_POLL_S = 0.5
"""How often the "loading the data" line refreshes while a split streams from the Hub."""


def _loading_message(splits: list[str]) -> str:
    """The status line while the splits load: shipped ones are instant, 80k streams."""
    if not splits:
        return "Loading the prompt set…"
    streaming = [(s, data.streaming_progress(s)) for s in splits]
    read = [f"{s}: {rows:,} prompts read" for s, rows in streaming if rows is not None]
    if read:
        return f"Streaming OR-Bench from the Hugging Face Hub ({'; '.join(read)})…"
    return f"Loading the {' and '.join(splits)} split{'s' if len(splits) > 1 else ''}…"


def cost_nothing(run: RunView) -> bool:
    """Every cell of `run` was replayed from the cache: no provider was asked."""
    total = run.total()
    return total > 0 and run.cached_count() >= total


def run_concurrency(specs: list[ModelSpec]) -> int:
    """Requests a run may have in flight: every model its own limit at once
    (max_parallel_requests, default 8), up to a ceiling for the process. A fixed
    cap below the sum made 6 models of 20 prompts stream in waves."""
    return max(16, min(MAX_RUN_CONCURRENCY, sum(s.max_concurrency for s in specs)))


def _hand_over(sess: Session, run: RunView, task: asyncio.Task) -> None:
    """A run whose page went away keeps its engine task; the session closes the run
    when the task ends (a page that adopts the session follows it meanwhile)."""

    def finished(_: asyncio.Task) -> None:
        if sess.task is task:
            sess.task = None
        if sess.run is run:
            sess.finish_run()

    sess.task = task
    task.add_done_callback(finished)


class Playground(SetupHandlers, CompareHandlers, FollowUpHandlers, HistoryHandlers, ReviewHandlers):
    """The event handlers (`layout.build_blocks` wires them to the page): runs,
    stop and overrides here; set-up controls and comparison in the mixins."""

    def _scores(self, sess: Session):
        from ...scoring import score_results

        return score_results(sess.shown_results(), key=variant_of, reviews=sess.reviews())

    @staticmethod
    def _shown_models(sess: Session) -> dict[str, str]:
        """variant name → model name, for what the scoreboard shows (a run, or the session)."""
        return {variant_of(r): r.model for r in sess.shown_results()}

    def _score_outputs(self, sess: Session) -> tuple[str, str]:
        from ...scoring import settle_savings

        order = {name: i for i, name in enumerate(sess.labels)}
        scores = sorted(self._scores(sess), key=lambda s: order.get(s.model, len(order)))
        models = self._shown_models(sess)
        savings = settle_savings(sess.shown_results(), key=variant_of)
        return (
            scoreboard_view.render_scoreboard(scores, sess.labels, models=models, savings=savings),
            self._plot(sess, scores, models),
        )

    def _plot(self, sess: Session, scores, models) -> str:
        """The session's variants, then other people's published sessions (`dataset_handlers`)."""
        theirs, sources = dataset_handlers.published_on_plot(sess)
        return plot_view.render_plot([*scores, *theirs], self.paper, sess.labels, models, published=sources)

    def plot_now(self, sess: Session) -> str:
        """The plot alone (after published sessions were added to it)."""
        sess = sess if isinstance(sess, Session) else Session()
        order = {name: i for i, name in enumerate(sess.labels)}
        scores = sorted(self._scores(sess), key=lambda s: order.get(s.model, len(order)))
        return self._plot(sess, scores, self._shown_models(sess))

    def _export_files(self, sess: Session) -> tuple[str | None, str | None]:
        """The session's one CSV and JSONL, rewritten (the previous pair deleted);
        plain paths, as the `run` API has always returned them."""
        paths = sess.export_files()
        return paths if paths is not None else (None, None)

    def download_state(self, sess: Session) -> tuple[dict[str, Any], dict[str, Any]]:
        """The download buttons' look (chained after every event that exports, and
        on page load): enabled once the session has results, else disabled with a
        hint. Also gives each visitor their own button instances, so the paths
        Gradio records for served files go away with them, not pile up on the
        shared component."""
        sess = sess if isinstance(sess, Session) and not sess.closed else Session()
        ready = bool(sess.results)
        return download_update(CSV_LABEL, ready), download_update(JSONL_LABEL, ready)

    def _results_json(self, sess: Session) -> dict[str, Any]:
        run = sess.run
        run_ids = set(run.cells) if run is not None else set()
        return {
            "run": None
            if run is None
            else {
                "number": run.number,
                "total": run.total(),
                "done": run.done_count(),
                "stopped": run.stopped,
                "notes": list(run.notes),
                # The session's kept copies: answers past exports.KEPT_CHARS are cut
                # with a note (whole in the downloads), so no payload carries megabytes.
                "results": [
                    {
                        **sess.effective(sess.results.get(v.result.cell_id, v.result)).to_row(),
                        "cell_id": v.result.cell_id,
                    }
                    for v in run.cells.values()
                    if v.result is not None
                ],
                "stopped_cells": [v.cell_id for v in run.cells.values() if v.stopped],
            },
            "session_results": len(sess.results),
            "in_run": len(run_ids),
        }

    def frame(self, sess: Session, *, final: bool, scores: bool = True, notes: list[str] | None = None) -> Frame:
        """An update of `sess` (see `frames`): indexing it gives the API's outputs."""
        return Frame(self, sess, final=final, scores=scores, notes=list(notes or []))

    def message_frame(self, sess: Session, message: str) -> Frame:
        return Frame(self, sess, kind="message", message=message)

    def refusal_frame(self, sess: Session, message: str) -> Frame:
        """A run that will not start (a limit, a bad value, no data): said in the
        progress line of the action bar and in a toast, so it is seen wherever the
        visitor is on the page."""
        toast(message)
        return Frame(self, sess, kind="message", message=message, refused=True)

    # -- runs -----------------------------------------------------------------------

    def _specs(self, models: list[str] | str | None, sess: Session) -> list[ModelSpec]:
        names: list[str] = []
        for name in [models] if isinstance(models, str) else list(models or []):
            name = str(name).strip()
            if name and name not in names:
                names.append(name)
        if not names:
            raise ValueError("Choose at least one model.")
        if len(names) > MAX_MODELS:
            raise ValueError(f"Choose at most {MAX_MODELS} models (got {len(names)}).")
        try:
            return [self.resolve(n, sess) for n in names]
        except CatalogError as exc:
            raise ValueError(str(exc)) from None

    async def run_setup(
        self, models, split, categories, n, seed, max_tokens, sess: Session,
        preset: str | None = None, custom_system: str | None = None, temperature: float | str | None = None,
        top_p: float | str | None = None, repeats: int | None = None, focus: bool | None = None,
        judge: str | None = None, reasoning_effort: str | None = None,
        prompt_set: str | None = None, prompt_col: str | None = None, category_col: str | None = None,
        label_col: str | None = None, settle: bool | None = None, request: gr.Request | None = None,
    ) -> AsyncIterator[Frame]:  # fmt: skip
        """Run a sampled set-up: the `run` API endpoint. Yields rendered frames.

        The page may add a prompt set (`dataset_handlers`): sampled beside the
        splits, or alone when no split is chosen.

        The generation settings (system prompt preset or custom text,
        temperature, top_p, max tokens, repeats) decide the run's variant; with
        `focus` the prompts the session's variants disagreed on are drawn first.
        `settle` (the page's switch; None, as for API callers: on for the
        embedded demo models only) stops each answer once its verdict is settled."""
        sess = usable_session(sess)
        self.remember(
            sess, models=list(models or []) if not isinstance(models, str) else [models],
            split=[p.strip() for p in split.split(",") if p.strip()] if isinstance(split, str) else list(split or []),
            categories=list(categories or []), n=n, seed=seed, max_tokens=max_tokens, preset=preset,
            custom_system=custom_system, temperature=temperature, top_p=top_p, repeats=repeats, focus=focus,
            judge=judge, reasoning_effort=reasoning_effort, prompt_set=prompt_set, prompt_col=prompt_col,
            category_col=category_col, label_col=label_col, settle=settle,
        )  # fmt: skip
        try:
            specs = self._specs(models, sess)
            params = generation_params(max_tokens, preset, custom_system, temperature, top_p, reasoning_effort)
            k = repeats_value(repeats)
            own_set = (prompt_set or "").strip()
            if isinstance(split, list | tuple) and not split and not own_set:
                raise ValueError("Choose at least one split.")
            splits = [] if own_set and isinstance(split, list | tuple) and not split else data.parse_splits(split)
            cats = data.parse_categories(list(categories or [])) or None
            per_category = int(n or 1)
            if not 1 <= per_category <= MAX_PER_CATEGORY:
                raise ValueError(f"Prompts per category must be between 1 and {MAX_PER_CATEGORY}.")
            seed_value = int(seed or 0)
            judge_name = self.judge_choice(judge)
        except (ValueError, TypeError, data.DataError) as exc:
            yield self.refusal_frame(sess, str(exc))
            return
        draw: data.Draw = data.sample
        if focus:
            from ...scoring.focus import focus_sample

            draw = functools.partial(focus_sample, results=sess.effective_results())
        mapping = dataset_handlers.columns(prompt_col, category_col, label_col)
        loading = asyncio.create_task(
            asyncio.to_thread(
                dataset_handlers.sample_for_run, splits, own_set, mapping,
                categories=cats, per_category=per_category, seed=seed_value, draw=draw,
            )
        )  # fmt: skip
        try:
            while True:
                yield self.message_frame(sess, _loading_message(splits))
                done, _ = await asyncio.wait({loading}, timeout=LOADING_POLL_S)
                if done:
                    break
            picked = loading.result()
        except data.DataError as exc:
            yield self.refusal_frame(sess, f"{exc} Custom prompts still work without data.")
            return
        finally:
            if not loading.done():  # the visitor stopped or left; the thread finishes on its own
                loading.cancel()
        if not picked.prompts:
            yield self.refusal_frame(sess, "No prompts matched: " + " ".join(picked.notes))
            return
        # aclosing: when Gradio closes this handler (its page went away), `_drive` hears it at once.
        drive = self._drive(
            sess, specs, list(picked.prompts), list(picked.notes), params, k, judge_name, visitor=request,
            settle=settle,
        )  # fmt: skip
        async with contextlib.aclosing(drive) as frames:
            async for frame in frames:
                yield frame

    async def run_prompt(
        self, prompt, models, max_tokens, sess: Session,
        preset: str | None = None, custom_system: str | None = None, temperature: float | str | None = None,
        top_p: float | str | None = None, repeats: int | None = None, judge: str | None = None,
        reasoning_effort: str | None = None, settle: bool | None = None, request: gr.Request | None = None,
    ) -> AsyncIterator[Frame]:  # fmt: skip
        """Run one prompt of the user's own against the chosen models (same settings as a run)."""
        sess = usable_session(sess)
        text = (prompt or "").strip()
        try:
            if not text:
                raise ValueError("Type a prompt first.")
            try:
                text = guards.check_custom_prompt(text)
            except guards.GuardError as exc:
                raise ValueError(str(exc)) from None
            specs = self._specs(models, sess)
            params = generation_params(max_tokens, preset, custom_system, temperature, top_p, reasoning_effort)
            k = repeats_value(repeats)
            judge_name = self.judge_choice(judge)
        except ValueError as exc:
            yield self.refusal_frame(sess, str(exc))
            return
        async with contextlib.aclosing(
            self._drive(sess, specs, [custom_prompt(text)], [], params, k, judge_name, visitor=request, settle=settle)
        ) as frames:
            async for frame in frames:
                yield frame

    async def _drive(
        self, sess: Session, specs: list[ModelSpec], prompts: list[Prompt], notes: list[str],
        params: GenerationParams | Any, repeats: int = 1, judge: str | None = None,
        visitor: gr.Request | None = None, follow_ups: tuple[FollowUp, ...] = (), follow_of: RunView | None = None,
        said: str = "", settle: bool | None = None, only: tuple[str, ...] = (), finish_of: RunView | None = None,
    ) -> AsyncGenerator[Frame, None]:  # fmt: skip
        """Run `prompts` × `specs` × `repeats` with `params` (a GenerationParams, or
        a bare max-tokens value for the default settings). `visitor`: the request,
        whose address the run limits count by when they are shared (Redis). With
        `follow_ups`, the run asks those cells of `follow_of`'s grid one turn further
        (`said`: what was said), and every turn counts as a cell of the limits.
        `settle`: stop each answer once its verdict is settled (None: on when every
        model is an embedded demo model, `base.settle_default`). With `only` (cell ids),
        the run asks just those cells of `finish_of`'s grid, the others shown as they were."""
        if not isinstance(params, GenerationParams):
            params = generation_params(params)
        if sess.files.budget.full:  # every session's files together are at their cap (`exports`)
            yield self.refusal_frame(sess, disk_full_message(sess.files.budget))
            return
        ticket = None
        if guards.public_mode():
            try:  # DNS look-ups for custom endpoints: off the event loop
                share = shared_state.request_address(visitor)  # their share of the DNS threads
                await asyncio.to_thread(guards.check_models, specs, share=share)
                n_cells = len(follow_ups) or len(only) or len(prompts) * len(specs) * max(1, repeats)
                guards.check_prompt_lengths(prompts, follow_ups)
                ticket = await sess.limits().check_run_async(n_cells, await shared_state.visitor_id(visitor))
            except guards.GuardError as exc:
                yield self.refusal_frame(sess, str(exc))
                return
        if not warmup.is_warm():  # (never while a run is live: that run warmed it)
            yield self.message_frame(sess, "Loading LiteLLM (first run after start-up)…")
            await asyncio.to_thread(warmup.warm_up)
        unknown = self.unknown_model(specs, sess)
        if unknown:  # LiteLLM could not route it: say so now, make no cells, and leave a live run be
            if ticket is not None:
                await sess.limits().refund(ticket)
            yield self.refusal_frame(sess, unknown)
            return
        if sess.running:  # a second run in the same tab replaces the first
            sess.cancel_task()
            sess.finish_run(stopped=True)
        if sess.requested_at and sess.stop_requested_at > sess.requested_at:
            yield self.message_frame(sess, "Stopped before the run started.")
            return
        from ... import engine
        from ...cache import default_cache

        config = RunConfig(
            models=tuple(specs),
            prompts=tuple(prompts),
            params=params.with_model_max_tokens_at_default(),
            judge=judge or self.judge,
            concurrency=run_concurrency(specs),
            repeats=repeats,
            follow_ups=follow_ups,
            only=only,
            settle=settle_default([s.name for s in specs]) if settle is None else bool(settle),
        )
        if follow_ups and follow_of is not None:
            run = sess.begin_follow_up(follow_of, follow_ups, said)
            run.notes = list(notes)
        elif only and finish_of is not None:
            run = sess.begin_finish(finish_of, only)
            run.notes = list(notes)
        else:
            run = sess.begin_run(prompts, specs, notes, config.params, repeats=config.repeats)
            run.specs, run.params, run.judge = list(specs), config.params, config.judge
        run.settles = config.settle
        changed = asyncio.Event()

        async def pump() -> None:
            cache = await asyncio.to_thread(default_cache)
            agen = engine.run(config, cache=cache, resolve_judge=self.catalog.resolve)
            try:
                async for event in agen:
                    if sess.run is not run:
                        break
                    sess.apply(event)
                    changed.set()
            finally:
                await agen.aclose()

        task: asyncio.Task | None = None
        failure = None
        viewer = sess.viewer  # a reloaded page that adopts the session takes the frames over (`resume`)
        handed_over = False
        try:
            # The skeleton leaves before the engine starts: its start-up work can hold the event loop.
            yield Frame(self, sess, start=True)
            if sess.run is run and not run.finished:  # not stopped or replaced meanwhile
                task = asyncio.create_task(pump())
                sess.task = task
                framed_at = time.monotonic()
                while not task.done():
                    await asyncio.wait({task}, timeout=RENDER_INTERVAL_S)
                    if task.done():
                        break
                    now = time.monotonic()
                    quiet = not changed.is_set()
                    if quiet and now - framed_at < IDLE_FRAME_S:
                        continue
                    changed.clear()
                    framed_at = now
                    if sess.viewer == viewer:
                        yield Frame(self, sess, heartbeat=quiet)  # scoreboard, plot, progress: paced by the frame
                if not task.cancelled() and task.exception() is not None:
                    failure = f"The run failed: {task.exception()!r}"
                    log.error("run failed", exc_info=task.exception())
        except (GeneratorExit, asyncio.CancelledError):
            # Gradio closed this handler: its page went away (Stop never does that). The run goes
            # on for a reload to adopt; `detach` stops it if no page does within ORPHANED_RUN_S.
            if task is not None and not task.done() and sess.run is run:
                _hand_over(sess, run, task)
                handed_over = True
            raise
        finally:
            if not handed_over:
                if task is not None and not task.done():
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await task
                if task is not None and sess.task is task:
                    sess.task = None
                if sess.run is run:
                    sess.finish_run()
                if ticket is not None and cost_nothing(run):  # a replay: it does not count against the limit
                    await sess.limits().refund(ticket)
        notes = [failure] if failure else []
        notes += shared_state.problems()  # e.g. Redis lost mid-run: said under the grid too
        if sess.viewer == viewer:
            yield Frame(self, sess, final=True, notes=notes)

    async def finish(self, cid: str, sess: Session) -> AsyncIterator[Frame]:
        """Finish an answer that was stopped once its verdict settled: ask its cell again
        without settling (the whole answer is cached apart from the settled one), over
        the same grid, the other cells shown as they were."""
        sess = usable_session(sess)
        prev = sess.run
        result = sess.results.get(str(cid or ""))
        if prev is None or result is None or not result.settled or str(cid) not in prev.cells:
            yield self.refusal_frame(sess, "That answer was not stopped early: there is nothing to finish.")
            return
        if sess.running:
            yield self.refusal_frame(sess, "Wait for the run to finish (or press Stop) before finishing an answer.")
            return
        if sess.shown_run is not prev or result.turn > 1:
            yield self.refusal_frame(sess, "Only a first answer of the latest run can be finished.")
            return
        note = f"Finishing {result.row_id} · {sess.labels.get(result.model, result.model)} without stopping early."
        async with contextlib.aclosing(
            self._drive(
                sess, list(prev.specs), list(prev.prompts), [note], prev.params, prev.repeats, prev.judge,
                settle=False, only=(str(cid),), finish_of=prev,
            )
        ) as frames:  # fmt: skip
            async for frame in frames:
                yield frame

    async def finish_click(self, sess: Session, evt: gr.EventData) -> AsyncIterator[Frame]:
        """A settled answer's "Finish this answer" button (`live_grid.js` sends the feed's `finish` event)."""
        payload = getattr(evt, "_data", None) or {}
        async for frame in self.finish(str(payload.get("cell") or ""), sess):
            yield frame

    async def stop(self, sess: Session) -> Frame:
        """Stop the visitor's run: cancel in-flight cells, keep finished ones.

        The run's own handler then ends with a last frame of the stopped run
        (after any frame it had on the way), and a run still loading does not
        start; so Stop needs no Gradio `cancels`, which could leave a frame
        built before Stop to arrive after it."""
        sess = usable_session(sess)
        sess.stop_requested_at = time.monotonic()
        sess.cancel_task()
        if sess.run is not None and not sess.run.finished:
            sess.finish_run(stopped=True)
        return Frame(self, sess, final=True)

    # -- a reload ---------------------------------------------------------------------

    async def restore(self, sess: Session, stored: Any, request: gr.Request) -> tuple[Session, str, str]:
        """Page load: adopt the session whose id this browser kept, when the server still
        holds it and no other open tab shows it (see `resume`). Returns this tab's
        session, the id for the browser to keep, and what to tell the visitor."""
        sess = usable_session(sess)
        tab = str(getattr(request, "session_hash", "") or "")
        notice = ""
        found = self.sessions.find(stored)
        if found is not None and found is not sess:
            # A reload: the old page's unload arrives within moments; another open tab's never does.
            if await self.sessions.wait_released(found, tab, DETACH_WAIT_S):
                found.owners += 1
                found.viewer += 1
                found.touch()
                self.sessions.attach(found, tab)
                return found, found.sid, RESTORED
            notice = ELSEWHERE
        elif isinstance(stored, str) and stored and found is None:
            notice = EXPIRED
        self.sessions.attach(sess, tab)
        return sess, sess.sid, notice

    async def detach(self, request: gr.Request) -> None:
        """Gradio's unload (the tab closed or reloaded): its session may be adopted again.
        A run still streaming is stopped unless a page adopts the session within
        ORPHANED_RUN_S (a reload does in a moment; a closed tab never does)."""
        sess = self.sessions.detach(str(getattr(request, "session_hash", "") or ""))
        if sess is None or not sess.running:
            return
        viewer = sess.viewer

        def stop_if_unadopted() -> None:
            if sess.viewer == viewer and not sess.tab and sess.running:
                sess.cancel_task()
                sess.finish_run(stopped=True)

        asyncio.get_running_loop().call_later(ORPHANED_RUN_S, stop_if_unadopted)

    async def resume(self, sess: Session, notice: str) -> AsyncIterator[Any]:
        """After `restore`: show the session as it is (the grid as a snapshot, the scoreboard,
        plot and downloads), follow a run that is still streaming to its end, and say what
        happened (restored, or why this is a new session)."""
        sess = usable_session(sess)
        run = sess.run
        if run is None:
            if notice:
                toast(notice, level="info")
                yield self.message_frame(sess, notice)
            else:
                yield (*(gr.skip() for _ in range(len(PAGE_OUTPUTS) - 1)), sess)
            return
        viewer, live = sess.viewer, not run.finished
        notes = [notice] if notice else []
        yield Frame(self, sess, snapshot=True, final=not live, notes=notes)
        beat_at = time.monotonic()
        while live and sess.run is run and not run.finished and sess.viewer == viewer:
            await asyncio.sleep(RENDER_INTERVAL_S)
            now = time.monotonic()
            beat = now - beat_at >= IDLE_FRAME_S
            beat_at = now if beat else beat_at
            yield Frame(self, sess, heartbeat=beat, notes=notes)
        if live and sess.run is run and run.finished and sess.viewer == viewer:
            yield Frame(self, sess, final=True, notes=notes)

    # -- overrides ------------------------------------------------------------------

    async def override(self, cid: str, label: str, sess: Session) -> Frame:
        """Set a verdict by hand (the `override` API endpoint and the fallback form)."""
        sess = usable_session(sess)
        error = sess.set_override(str(cid or ""), str(label or ""))
        if error:
            toast(error)
        return Frame(self, sess, kind="override", final=True)

    async def override_click(self, sess: Session, evt: gr.EventData) -> Frame:
        """A click on a choice of a final verdict's menu in the grid (`live_grid.js`)."""
        payload = getattr(evt, "_data", None) or {}
        return await self.override(payload.get("cell", ""), payload.get("label", ""), sess)

    async def grid_snapshot(self, sess: Session, evt: gr.EventData) -> Any:
        """The page's live grid lost track (a missing batch): send it everything."""
        sess = sess if isinstance(sess, Session) else None
        snapshot = sess.feed.snapshot(sess.shown_run, sess.overrides) if sess is not None else None
        return gr.skip() if snapshot is None else snapshot
