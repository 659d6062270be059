"""A session's runs, one entry each, so the visitor can look at any earlier one.

Each entry keeps what its grid needs to be drawn again (prompts, columns,
settings tag, repeats) and the kept copies of its results (the same objects the
session holds, so an entry costs references, not answers). A follow-up round
(`followup_handlers`) asks more turns over the *same* grid: it belongs to the
run it follows up and makes no entry of its own (its turns join that entry,
and the entry counts its follow-ups). An earlier run's grid is re-rendered from
its results (`rebuild`): each cell shows its conversation's latest turn, the
earlier turns collapsed above it, as the live grid did.

Bounded: at most `max_runs()` entries (ORBENCH_SESSION_RUNS, default 20); a new
run beyond that drops the oldest, and `RunHistory.add` returns what was dropped
so the session can free those results (and their spooled answers) too. No
Gradio import.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from ...runtime.env_numbers import env_number
from ...types import CellResult, Prompt
from ..views.run_view import CellView, RunView

log = logging.getLogger(__name__)

DEFAULT_SESSION_RUNS = 20
ALL_RUNS = "all"
"""The run list's value for the whole session (every run's results, pooled per variant)."""
ALL_RUNS_LABEL = "All runs (the scoreboard combines the runs of the same variants; the grid shows the latest run)"


def max_runs() -> int:
    """ORBENCH_SESSION_RUNS: the runs one session keeps (at least 1; default 20)."""
    return max(1, env_number("ORBENCH_SESSION_RUNS", DEFAULT_SESSION_RUNS, int))


@dataclass
class RunRecord:
    """One run of the session as the run list shows it and its grid is drawn again."""

    number: int
    """The run's number (its first live view's, as the progress line said "Run N")."""
    started: float
    """Wall-clock time (seconds since the epoch) the run started."""
    prompts: list[Prompt]
    model_labels: list[tuple[str, str]]
    tag: str = ""
    repeats: int = 1
    variants: dict[str, str] = field(default_factory=dict)
    results: dict[str, CellResult] = field(default_factory=dict)
    """The run's finished cells by cell id, every turn of its follow-ups too (kept copies)."""
    views: list[int] = field(default_factory=list)
    """The live views' numbers that belong to this run (the run, then each follow-up round)."""
    elapsed: float = 0.0
    """Seconds the run (and its follow-up rounds) took."""
    rounds: int = 0
    """Follow-up rounds over its grid (the progress line numbers them)."""

    @property
    def follow_ups(self) -> int:
        return len(self.views) - 1

    @property
    def models(self) -> list[str]:
        return [label for _, label in self.model_labels]

    @property
    def splits(self) -> list[str]:
        return list(dict.fromkeys(p.split for p in self.prompts))

    def cell_ids(self) -> list[str]:
        return list(self.results)

    def label(self) -> str:
        """The run list's line: "Run 3 · 14:02:11 UTC · 2 models · hard-1k, toxic · 20 cells"."""
        when = time.strftime("%H:%M:%S UTC", time.gmtime(self.started))
        models = ", ".join(self.models) if len(self.models) <= 2 else f"{len(self.models)} models"
        parts = [f"Run {self.number}", when, models, ", ".join(self.splits) or "no prompts"]
        parts.append(f"{len(self.results)} cell{'s' if len(self.results) != 1 else ''}")
        if self.follow_ups:
            parts.append(f"{self.follow_ups} follow-up{'s' if self.follow_ups != 1 else ''}")
        return " · ".join(parts)


@dataclass
class RunHistory:
    """The session's runs, oldest first, at most `limit` of them."""

    limit: int = field(default_factory=max_runs)
    records: list[RunRecord] = field(default_factory=list)
    selected: int | None = None
    """The run the page shows (its number), or None: the whole session ("All runs")."""
    _by_view: dict[int, RunRecord] = field(default_factory=dict)

    def add(self, run: RunView) -> list[RunRecord]:
        """A new run (not a follow-up): its entry, and the oldest entries it pushed out."""
        record = RunRecord(
            run.number, time.time(), list(run.prompts), list(run.model_labels), run.tag, run.repeats,
            dict(run.variants), views=[run.number],
        )  # fmt: skip
        self.records.append(record)
        self._by_view[run.number] = record
        self.selected = None
        dropped = []
        while len(self.records) > self.limit:
            old = self.records.pop(0)
            for view in old.views:
                self._by_view.pop(view, None)
            dropped.append(old)
        return dropped

    def follow(self, prev: RunView, run: RunView) -> None:
        """`run` is a follow-up round over `prev`'s grid: it joins `prev`'s entry."""
        record = self._by_view.get(prev.number)
        if record is not None:
            record.views.append(run.number)
            record.rounds += bool(run.follow_up)
            self._by_view[run.number] = record
        self.selected = None

    def follow_ups(self, number: int) -> int:
        """Follow-up rounds entry `number` has had so far (finishing rounds not counted)."""
        record = self.get(number)
        return record.rounds if record is not None else 0

    def finished(self, run: RunView) -> None:
        """Live view `run` ended: its time counts to its entry."""
        record = self._by_view.get(run.number)
        if record is not None:
            record.elapsed += run.elapsed() or 0.0

    def record(self, view: int, result: CellResult) -> None:
        """A finished cell of live view `view`."""
        record = self._by_view.get(view)
        if record is not None:
            record.results[result.cell_id] = result

    def get(self, number: int | None) -> RunRecord | None:
        return next((r for r in self.records if r.number == number), None)

    def holds(self, cid: str) -> bool:
        """Whether any kept run has this cell (the same prompt, model and settings asked again)."""
        return any(cid in r.results for r in self.records)

    def choices(self) -> list[tuple[str, str]]:
        """The run list: "All runs", then every kept run, newest first."""
        return [(ALL_RUNS_LABEL, ALL_RUNS), *((r.label(), str(r.number)) for r in reversed(self.records))]

    def value(self) -> str:
        return ALL_RUNS if self.selected is None else str(self.selected)


def parse_choice(value: object) -> int | None:
    """The run number a run-list value names; None for "All runs" (or nothing)."""
    text = str(value or "").strip()
    if not text or text == ALL_RUNS:
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"Unknown run {text!r}: choose one from the run list.") from None


def rebuild(record: RunRecord) -> RunView:
    """The finished grid of `record` drawn again from its results (the pure views and
    the live feed's snapshot render it like any run): each cell shows its
    conversation's latest turn (earlier turns collapsed above), a cell that never
    finished is shown stopped. Overrides are the session's (keyed by cell id)."""
    from ...asking.followups import conversations

    view = RunView(
        record.number, list(record.prompts), list(record.model_labels), tag=record.tag, repeats=record.repeats,
        variants=dict(record.variants),
    )  # fmt: skip
    talks = conversations(record.results.values())
    for first in list(view.order):
        base = view.cells[first]
        turns = talks.get(first, [])
        if not turns:
            base.stopped = True
            view.n_stopped += 1
            continue
        last = turns[-1]
        cell = base
        if last.cell_id != first:
            cell = CellView(last.cell_id, base.row_id, base.model, base.repeat)
            cell.turn, cell.said = last.turn, last.follow_up
            view.carry(base, cell, turns[:-1])
        cell.started = True
        view.settle(cell, last)
    view.finished = True
    view.stopped = view.n_stopped > 0
    view.ended_at = time.monotonic()
    view.started_at = view.ended_at - record.elapsed
    return view
