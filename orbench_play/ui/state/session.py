"""Per-visitor state: the live view of the current run, every finished cell of
the session, the user's verdict overrides and the models the visitor added.

One `Session` per browser tab (a `gr.State` whose value is the `Session` class,
so Gradio builds a fresh one per visitor). Engine events are applied as they
arrive, so whatever finished before a Stop is already kept. Every change to a
grid cell is reported to the session's `LiveFeed` (by the cell's grid index),
which sends the page only what changed. No Gradio import; every method is
O(1) per event, so a frame costs what changed, not the size of the grid.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...asking.prompts import variant_name, variant_of
from ...types import (
    CLASS_LABELS,
    REFUSALS,
    CellEvent,
    CellResult,
    FollowUp,
    GenerationParams,
    ModelSpec,
    Prompt,
    turn_cell_id,
    variant_tag,
)
from ..views.run_view import CellView, RunView, retry_wait
from .exports import SessionFiles
from .history import RunHistory, RunRecord, rebuild
from .live_feed import LiveFeed
from .review_queue import ReviewQueue

OVERRIDABLE = CLASS_LABELS
STOPPED = "Stopped"
__all__ = ["OVERRIDABLE", "CellView", "RunView", "Session", "close_session", "new_session", "usable_session"]


@dataclass
class Session:
    """Everything one visitor has done in this tab."""

    results: dict[str, CellResult] = field(default_factory=dict)
    """Every finished or failed cell of the session by cell_id (stopped ones excluded)."""
    order: list[str] = field(default_factory=list)
    """cell_ids in the order they first finished (export order)."""
    overrides: dict[str, str] = field(default_factory=dict)
    """A person's verdicts by cell id: a badge menu's choice, or a review queue's decision."""
    queue: ReviewQueue = field(default_factory=ReviewQueue)
    """The review queue (`review_queue`): its seed, and the cells reviewed or skipped there."""
    run: RunView | None = None
    runs: int = 0
    history: RunHistory = field(default_factory=RunHistory)
    """The session's runs (at most ORBENCH_SESSION_RUNS), and which one the page shows (`history`)."""
    shown: RunView | None = None
    """An earlier run's grid drawn again from its results, while the page shows it."""
    extra_models: dict[str, ModelSpec] = field(default_factory=dict)
    """Models this visitor added (custom endpoints carry their key here, nowhere else)."""
    labels: dict[str, str] = field(default_factory=dict)
    controls: dict[str, Any] | None = None
    """The set-up controls as the page last showed them (models, splits, judge, prompt set,
    generation settings…, by name; `setup_handlers.CONTROLS`): a reload sets the page so again."""
    load_query: dict[str, str] = field(default_factory=dict)
    """The set-up keys of the URL the page was loaded with: a reload of the same URL gets
    `controls` back, a different link gets its own set-up."""
    version: int = 0
    """Bumped whenever results or overrides change (to skip needless re-scoring)."""
    task: Any = None
    """The asyncio task pumping engine events into this session, while a run is live."""
    feed: LiveFeed = field(default_factory=LiveFeed)
    """What the page's live grid has been sent (see `live_feed`)."""
    requested_at: float = 0.0
    """When the page last asked for a run (set by the event wrappers in `frames`)."""
    stop_requested_at: float = 0.0
    """When Stop was last pressed: a run asked for before that does not start."""
    limiter: Any = None
    """This visitor's public-mode run limits (a guards.SessionLimiter), made on first use."""
    files: SessionFiles = field(default_factory=SessionFiles)
    """Whole long answers (spooled to disk) and the current download files."""
    sid: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    """This session's id, kept in the visitor's browser so a reload finds it again (`resume`)."""
    tab: str = ""
    """The Gradio session (page load) showing this session now; empty when none does."""
    viewer: int = 0
    """Bumped when another page load takes over showing this session: a run's handler
    started for the previous page then stops sending it frames (`handlers._drive`)."""
    owners: int = 1
    """Gradio states holding this session (a reload adds one); it closes when the last lets go."""
    closed: bool = False
    """Its files are gone and it takes no more work (see `close`)."""
    last_used: float = field(default_factory=time.monotonic)
    """When a handler last worked on it (monotonic): its time to live counts from here (`lifetime`)."""

    def __deepcopy__(self, memo: dict) -> Session:
        """Itself: Gradio deep-copies a state's first value so visitors never share it, but
        `new_session` made this one fresh for this visitor, and it is watched (`lifetime`)
        and counts against the process's disk budget as the one object it is."""
        return self

    # -- runs -----------------------------------------------------------------------

    def limits(self):
        """The per-session caps on cells per run and runs per minute (public mode)."""
        if self.limiter is None:
            from ...guards import SessionLimiter

            self.limiter = SessionLimiter()
        return self.limiter

    def begin_run(
        self,
        prompts: list[Prompt],
        models: list[ModelSpec],
        notes: list[str] | None = None,
        params: GenerationParams | None = None,
        repeats: int = 1,
    ) -> RunView:
        """Start the live view of a run. `params` must be the run's generation
        settings: they decide the cell ids the engine's events will carry.

        Columns are labelled with the variant name (model display name plus
        the system prompt and non-default settings), and `labels` maps each
        variant name (the scoreboard's row key) to that label too."""
        self.runs += 1
        params = params or GenerationParams()
        pid, pjson = params.system_prompt_id, params.params_json()
        columns, variants = [], {}
        for m in models:
            self.labels[m.name] = m.display
            variant = variant_name(m.name, pid, pjson)
            label = variant_name(m.display, pid, pjson)
            self.labels[variant] = label
            variants[m.name] = variant
            columns.append((m.name, label))
        tag = variant_tag(pid, pjson)
        self.run = RunView(
            self.runs, list(prompts), columns, notes=list(notes or []), tag=tag, repeats=repeats, variants=variants
        )
        self.shown = None
        dropped = self.history.add(self.run)
        if dropped:
            self.run.notes.append(self._drop_runs(dropped))
        return self.run

    def _drop_runs(self, dropped: list[RunRecord]) -> str:
        """The oldest runs left the history: their results leave the session too (a cell
        a kept run asked again stays), spooled answers freed. Returns the note saying so."""
        gone = {cid for record in dropped for cid in record.results if not self.history.holds(cid)}
        for cid in gone:
            self.results.pop(cid, None)
            self.overrides.pop(cid, None)
            self.files.free(cid)
        self.queue.forget(gone)
        if gone:
            self.order = [cid for cid in self.order if cid not in gone]
            self.version += 1
        names = ", ".join(str(r.number) for r in dropped)
        return (
            f"Run {names} left this session's history ({len(gone)} result{'s' if len(gone) != 1 else ''} dropped): "
            f"it keeps the latest {self.history.limit} runs (ORBENCH_SESSION_RUNS)."
        )

    def conversation_turns(self, run: RunView) -> dict[str, list[CellResult]]:
        """The conversations of `run`'s cells (whole answers, overrides applied), by first-turn id."""
        from ...asking.followups import conversations

        firsts = set(run.first_ids())
        mine = (self.effective(self.files.whole(r)) for r in self.results.values() if r.conversation in firsts)
        return conversations(mine)

    def begin_follow_up(self, prev: RunView, follow_ups: Sequence[FollowUp], said: str) -> RunView:
        """A follow-up run over `prev`'s grid: the cells followed up on ask their next
        turn (their earlier turns collapsed above it); the others are shown as they were."""
        run, turns = self._next_grid(prev)
        run.follow_up = said
        run.round = self.history.follow_ups(run.entry) + 1
        asked = {(f.row_id, f.model, f.repeat): f for f in follow_ups}
        for first in list(run.order):
            base = run.cells[first]
            conversation = turns.get(first, [])
            follow = asked.get((base.row_id, base.model, base.repeat))
            if follow is not None:
                cell = CellView(turn_cell_id(first, follow.turn), base.row_id, base.model, base.repeat)
                cell.turn, cell.said = follow.turn, follow.text
                run.carry(base, cell, conversation[: follow.turn - 1])
            else:
                _show_as_it_was(run, base, conversation)
        return self._open(prev, run)

    def begin_finish(self, prev: RunView, cells: Sequence[str]) -> RunView:
        """A run over `prev`'s grid that asks `cells` (first turns stopped once their
        verdict settled) again, to their end; the others are shown as they were."""
        run, turns = self._next_grid(prev)
        run.finishing = True
        wanted = set(cells)
        for first in list(run.order):
            base = run.cells[first]
            if first in wanted:
                run.carry(base, CellView(first, base.row_id, base.model, base.repeat), [])
            else:
                _show_as_it_was(run, base, turns.get(first, []))
        return self._open(prev, run)

    def _next_grid(self, prev: RunView) -> tuple[RunView, dict[str, list[CellResult]]]:
        """A new run over `prev`'s grid with its models, settings and judge, filed under
        the same entry of the run list, and the conversations `prev`'s cells hold."""
        turns = self.conversation_turns(prev)
        self.runs += 1
        run = RunView(
            self.runs, list(prev.prompts), list(prev.model_labels), tag=prev.tag, repeats=prev.repeats,
            variants=dict(prev.variants),
        )  # fmt: skip
        run.specs, run.params, run.judge = prev.specs, prev.params, prev.judge
        run.entry = prev.entry or prev.number
        run.settles = prev.settles  # what a later Run or follow-up of this grid does
        return run, turns

    def _open(self, prev: RunView, run: RunView) -> RunView:
        self.run = run
        self.shown = None
        self.history.follow(prev, run)
        return run

    def apply(self, event: CellEvent) -> None:
        """Fold one engine event into the live view and the session results."""
        run = self.run
        if run is None:
            return
        if event.kind == "status" and not event.cell_id:
            run.set_status(event.message, event.model)
            return
        cell = run.cells.get(event.cell_id) or run.find(event.row_id, event.model, event.repeat)
        if cell is None or cell.stopped:
            return
        if event.kind == "started":
            cell.started = True
        elif event.kind == "delta":
            if event.moved:
                cell.move_text_to_thoughts()
            cell.text += event.text
            cell.thoughts += event.thoughts
            cell.message = ""
            if run.status and run.status_model == cell.model:
                run.set_status("")  # e.g. "Starting the embedded model…": it has answered, so it started
        elif event.kind == "verdict" and event.verdict is not None:
            cell.provisional = event.verdict
        elif event.kind == "retry":
            cell.message = event.message
            cell.retries += 1
            cell.retry_wait_s += retry_wait(event)
        elif event.kind in ("done", "error") and event.result is not None:
            cell.cell_id = event.result.cell_id
            run.settle(cell, event.result)
            cell.message = ""
            self._record(event.result, run.number)
        else:
            return
        self.feed.touch(run.number, cell.index)

    def _record(self, result: CellResult, view: int = 0) -> None:
        """Keep a finished cell: long answers cut in memory, whole on disk (`files`)."""
        cid = result.cell_id
        previous = self.results.get(cid)
        kept = self.files.keep(result)
        if cid in self.overrides and (previous is None or previous.response != kept.response or result.error):
            del self.overrides[cid]  # the override was about a different answer
            self.queue.forget([cid])
        if cid not in self.results:
            self.order.append(cid)
        self.results[cid] = kept
        self.history.record(view, kept)
        self.version += 1

    def finish_run(self, *, stopped: bool = False) -> None:
        """Close the live run; cells still in flight become "Stopped" (not scored)."""
        run = self.run
        if run is None or run.finished:
            return
        for cell in run.cells.values():
            if cell.result is None and not cell.stopped:
                cell.stopped = True
                run.n_stopped += 1
                self.feed.touch(run.number, cell.index)
        run.stopped = stopped or run.n_stopped > 0
        run.finished = True
        run.ended_at = self.last_used = time.monotonic()
        run.status = ""
        self.history.finished(run)

    # -- the run list -----------------------------------------------------------------

    def select_run(self, number: int | None) -> str | None:
        """Show run `number` (None: the whole session); returns why not, or None."""
        if self.running:
            return "Wait for the run to finish (or press Stop) before switching to another run."
        if number is None:
            self.history.selected, self.shown = None, None
            return None
        record = self.history.get(number)
        if record is None:
            return f"Run {number} is not in this session's history (it keeps the latest {self.history.limit} runs)."
        self.history.selected = number
        latest = self.run is not None and self.run.number in record.views
        self.shown = None if latest else rebuild(record)
        return None

    @property
    def shown_run(self) -> RunView | None:
        """The grid the page shows: an earlier run drawn again, or the current run."""
        return self.shown if self.shown is not None and self.history.selected is not None else self.run

    def shown_results(self) -> list[CellResult]:
        """What the scoreboard, plot and downloads take: the chosen run's results, or the session's."""
        record = self.history.get(self.history.selected)
        if record is None:
            return self.effective_results()
        return [self.effective(r) for r in record.results.values()]

    def touch(self) -> None:
        """A handler is working on this session: its time to live starts again."""
        self.last_used = time.monotonic()

    @property
    def running(self) -> bool:
        return self.run is not None and not self.run.finished

    def cancel_task(self) -> None:
        task, self.task = self.task, None
        if task is not None and not task.done():
            task.cancel()

    # -- overrides ------------------------------------------------------------------

    def set_override(self, cid: str, label: str) -> str | None:
        """Set the user's verdict for a finished cell; returns an error message or None.

        Setting a cell back to its classifier verdict removes the override.
        """
        if label not in OVERRIDABLE:
            return f"Unknown verdict {label!r}; choose one of {', '.join(OVERRIDABLE)}."
        result = self.results.get(cid)
        if result is None:
            return "That cell has not finished yet."
        if result.error or result.verdict not in OVERRIDABLE:
            return "A failed cell has no verdict to override."
        if label == result.verdict and cid not in self.queue.reviewed:
            self.overrides.pop(cid, None)
        else:  # a reviewed cell keeps its person's verdict even where it agrees with the classifier
            self.overrides[cid] = label
        self._changed(cid)
        return None

    def _changed(self, cid: str) -> None:
        self.version += 1
        for run in (self.run, self.shown):
            if run is not None and cid in run.cells:
                self.feed.touch(run.number, run.cells[cid].index)

    # -- the review queue -------------------------------------------------------------

    def review(self, cid: str, decision: str) -> str | None:
        """A person's decision in the review queue: one of the three classes (a user
        verdict, kept like an override) or `skip`; returns an error message or None."""
        if cid not in self.queue.frame(self.results, self.overrides):
            return "That answer is not in the review queue (it has no verdict, or you set it already)."
        if decision == "skip":
            self.queue.skipped.add(cid)
            self.version += 1
            return None
        if decision not in OVERRIDABLE:
            return f"Unknown verdict {decision!r}; choose one of {', '.join(OVERRIDABLE)}, or skip."
        self.queue.reviewed.add(cid)
        self.queue.skipped.discard(cid)
        self.overrides[cid] = decision
        self._changed(cid)
        return None

    def next_review(self) -> str | None:
        """The cell the review queue shows next, or None when none is left."""
        waiting = self.queue.waiting(self.results, self.overrides)
        return waiting[0] if waiting else None

    def reviews(self):
        """The queue's reviewed cells as scoring takes them (`ReviewQueue.reviews`)."""
        return self.queue.reviews(self.results, self.overrides)

    def effective(self, result: CellResult) -> CellResult:
        """The result with a person's verdict, when there is one: source `user`, certain."""
        label = self.overrides.get(result.cell_id)
        if label is None:
            return result
        return replace(result, verdict=label, verdict_source="user", p_refusal=float(label in REFUSALS), sure=True)

    def effective_results(self) -> list[CellResult]:
        """Session results with the user's overrides applied, in finishing order
        (answers longer than `exports.KEPT_CHARS` cut, with a note)."""
        return [self.effective(self.results[cid]) for cid in self.order if cid in self.results]

    def export_files(self) -> tuple[str, str] | None:
        """Write the chosen run's (or the session's) results, whole answers and overrides included, as
        the visitor's CSV and JSONL (replacing the previous pair); None when empty."""
        results = self.shown_results()
        return self.files.export(results) if results else None

    def overridable_cells(self) -> list[tuple[str, str]]:
        """(label, cell_id) choices for the override dropdown: finished, non-error cells."""
        out = []
        for cid in self.order:
            r = self.results[cid]
            if r.error or r.verdict not in OVERRIDABLE:
                continue
            variant = variant_of(r)
            label = f"{r.row_id} · {self.labels.get(variant, self.labels.get(r.model, r.model))}"
            label += f" #{r.repeat + 1}" if r.repeat else ""
            out.append((label + (f" · turn {r.turn}" if r.turn > 1 else ""), cid))
        return out

    # -- variants -------------------------------------------------------------------

    def variants(self) -> list[str]:
        """The session's variant names (model × settings), in order of first result."""
        return list(dict.fromkeys(variant_of(r) for r in self.effective_results()))

    def variant_models(self) -> dict[str, str]:
        """variant name → model name, for the session's results."""
        return {variant_of(r): r.model for r in self.effective_results()}

    # -- files ----------------------------------------------------------------------

    def close(self) -> None:
        """Called when Gradio drops the visitor's state: stop work, remove files."""
        self.closed = True
        self.cancel_task()
        self.files.close()


def _show_as_it_was(run: RunView, base: CellView, conversation: list[CellResult]) -> None:
    """A cell the new run does not ask: its last turn carried over as it was, or,
    never finished (stopped), the cell itself."""
    if conversation:
        last = conversation[-1]
        cell = CellView(last.cell_id, base.row_id, base.model, base.repeat, started=True, result=last)
        cell.turn, cell.said, cell.carried = last.turn, last.follow_up, True
        cell.text, cell.thoughts = last.response, last.reasoning
        run.carry(base, cell, conversation[:-1])
    else:
        base.stopped = base.carried = True
        run.n_carried += 1


def new_session() -> Session:
    """The `gr.State` factory: Gradio calls it once per visitor. The session is
    watched until it ends, however that happens (`lifetime`)."""
    from .lifetime import track

    return track(Session())


def usable_session(value: Any) -> Session:
    """The session a handler works on: `value` when it is a live session, else a
    new one (the state was empty, or the session ended, e.g. its time to live
    passed while Gradio still held it: the visitor starts afresh)."""
    if isinstance(value, Session) and not value.closed:
        return value
    return new_session()


def close_session(session: Any) -> None:
    """The `gr.State` delete callback: a session adopted by a reloaded page is held by
    two Gradio states, and closes only when the last of them ends."""
    if isinstance(session, Session):
        session.owners -= 1
        if session.owners <= 0:
            session.close()
