"""The live view of one run: its cells as the grid shows them, with counters
kept as events arrive (so progress costs O(1), not O(grid)). No Gradio import.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from ...types import CellEvent, CellResult, Prompt, Verdict, cell_id

_RETRY_WAIT = re.compile(r"[Rr]etrying in ([0-9]+(?:\.[0-9]+)?) ?s")


def retry_wait(event: CellEvent) -> float:
    """Seconds the engine waits before this retry: a structured field when the
    engine sends one, else read from its message ("… Retrying in 1.0 s …")."""
    for name in ("retry_wait_s", "wait_s"):
        value = getattr(event, name, None)
        if isinstance(value, (int, float)):
            return float(value)
    match = _RETRY_WAIT.search(event.message or "")
    return float(match.group(1)) if match else 0.0


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix (binary search on slices: C speed)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass
class CellView:
    """What the grid shows for one cell while it streams and after."""

    cell_id: str
    row_id: str
    model: str
    repeat: int = 0
    variant: str = ""
    """The variant name (`prompts.variant_name`): the model under this run's settings."""
    started: bool = False
    text: str = ""
    provisional: Verdict | None = None
    message: str = ""
    result: CellResult | None = None
    stopped: bool = False
    index: int = -1
    """Position in the grid (the live feed's cell number)."""
    retries: int = 0
    """Retry events seen for this cell, and the seconds they waited (shown in the cell)."""
    retry_wait_s: float = 0.0
    text_epoch: int = 0
    """Bumped when `text` is replaced rather than extended (the final answer differs from the stream)."""
    text_kept: int = 0
    """On the last replacement: how many leading characters the new text shares with the old."""
    thoughts: str = ""
    """A reasoning model's thoughts, streamed apart from the answer (shown collapsed above it)."""
    thoughts_epoch: int = 0
    thoughts_kept: int = 0
    """As `text_epoch` / `text_kept`, for the thoughts."""
    turn: int = 1
    """Which turn of the cell's conversation this view streams (a follow-up run's cells are turn 2+)."""
    turns: list[CellResult] = field(default_factory=list)
    """The conversation's earlier turns (shown collapsed above this one)."""
    said: str = ""
    """The follow-up message this turn answers (empty at turn 1)."""
    carried: bool = False
    """Shown as it was, not asked in this run (a follow-up run's other cells)."""

    def move_text_to_thoughts(self) -> None:
        """The answer so far turned out to be thoughts (a lone `</think>`)."""
        self.thoughts += self.text
        self.text = ""
        self.text_epoch += 1
        self.text_kept = 0
        self.provisional = None

    def shown_thoughts(self) -> str:
        return self.thoughts or (self.result.reasoning if self.result is not None else "")

    def shown_text(self) -> str:
        """The answer as far as it is known: the streamed text, or the result's."""
        return self.text or (self.result.response if self.result is not None else "")

    def final_label(self) -> str:
        """`pending` until the engine says done/error (or the run was stopped)."""
        if self.stopped:
            return "error"
        if self.result is None:
            return "pending"
        return self.result.verdict if not self.result.error else "error"

    def final_source(self) -> str:
        if self.stopped or self.result is None:
            return ""
        return self.result.verdict_source


@dataclass
class RunView:
    """One run of the session: its prompts × models and their live cells."""

    number: int
    prompts: list[Prompt]
    model_labels: list[tuple[str, str]]
    """(name, display label) per column, in column order (the label names the variant)."""
    cells: dict[str, CellView] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    status: str = ""
    tag: str = ""
    """The engine's variant tag for these generation settings (part of every cell id)."""
    repeats: int = 1
    """Answers per (prompt, model): k cells each, repeat 0 … k-1."""
    variants: dict[str, str] = field(default_factory=dict)
    """model name → variant name under this run's settings."""
    status_model: str = ""
    """The model the status is about: its first answer text makes the status stale."""
    started_at: float = field(default_factory=time.monotonic)
    ended_at: float | None = None
    finished: bool = False
    stopped: bool = False
    order: list[str] = field(default_factory=list)
    """cell ids in grid order (row by row; per model its repeats): index = the live feed's cell number."""
    n_final: int = 0
    n_stopped: int = 0
    n_errors: int = 0
    n_cached: int = 0
    n_judged: int = 0
    """Answers the LLM judge was asked about (its verdicts and its failures)."""
    n_judge_failed: int = 0
    """…of which the judge gave no verdict, so the offline one stands (`judge_error`)."""
    n_carried: int = 0
    """Cells of a follow-up run shown as they were, not asked again (outside the counts)."""
    specs: list[Any] = field(default_factory=list)
    """The run's models (`ModelSpec`s), its settings and judge: what a follow-up asks with again."""
    params: Any = None
    judge: str = ""
    settles: bool = False
    """Its answers stop once their verdict is settled (`RunConfig.settle`); a follow-up asks the same way."""
    finishing: bool = False
    """A run over an earlier grid that asks settled answers again, to their end (`Session.begin_finish`)."""
    follow_up: str = ""
    """For a follow-up run: what was said (the preset's label, or the visitor's text)."""
    entry: int = 0
    """The run this one continues over the same grid (a follow-up round or a finishing
    one): its number is the run list's entry (`history`); 0 for a run of its own."""
    round: int = 0
    """For a follow-up run: which follow-up round of its entry it is (1, 2, …)."""
    slots: dict[str, str] = field(default_factory=dict)
    """A cell's first-turn id → the id of the turn its grid slot shows (follow-up runs only)."""

    def __post_init__(self) -> None:
        self.repeats = max(1, int(self.repeats))
        if not self.cells:
            for p in self.prompts:
                for name, _ in self.model_labels:
                    for k in range(self.repeats):
                        cid = cell_id(p.row_id, name, k, self.tag)
                        self.cells[cid] = CellView(cid, p.row_id, name, k, self.variants.get(name, name))
        self.order = [cid for p in self.prompts for cid in self.row_cells(p.row_id) if cid in self.cells]
        for i, cid in enumerate(self.order):
            self.cells[cid].index = i

    def title(self) -> str:
        """How the progress line names the run, by its run list entry: "Run 2", "Run 2
        (follow-up 1)", "Run 2 (finishing)" (a follow-up has a live view of its own, but
        the run list files it under the run it follows up)."""
        if self.follow_up:
            return f"Run {self.entry or self.number} (follow-up {max(1, self.round)})"
        return f"Run {self.entry or self.number}" + (" (finishing)" if self.finishing else "")

    def groups(self, row_id: str) -> list[list[str]]:
        """The cell ids of one prompt row: per model (column order), its repeats in order."""
        slots = self.slots
        return [
            [slots.get(c, c) for c in (cell_id(row_id, name, k, self.tag) for k in range(self.repeats))]
            for name, _ in self.model_labels
        ]

    def first_ids(self) -> list[str]:
        """Every cell's first-turn id (its conversation's id), in grid order."""
        return [
            cell_id(p.row_id, name, k, self.tag)
            for p in self.prompts
            for name, _ in self.model_labels
            for k in range(self.repeats)
        ]

    def row_cells(self, row_id: str) -> list[str]:
        return [cid for group in self.groups(row_id) for cid in group]

    def find(self, row_id: str, model: str, repeat: int = 0) -> CellView | None:
        """Fallback lookup should the engine's id scheme ever differ from ours."""
        cell = self.cells.get(cell_id(row_id, model, repeat, self.tag))
        if cell is None:
            cell = next(
                (c for c in self.cells.values() if c.row_id == row_id and c.model == model and c.repeat == repeat), None
            )
        return cell

    def total(self) -> int:
        """Cells this run asks (a follow-up run's carried cells are not asked)."""
        return len(self.cells) - self.n_carried

    def done_count(self) -> int:
        """Cells with a final state: finished, failed or stopped."""
        return self.n_final + self.n_stopped

    def finished_count(self) -> int:
        """Cells that finished with an answer or an error (not stopped)."""
        return self.n_final

    def stopped_count(self) -> int:
        return self.n_stopped

    def error_count(self) -> int:
        return self.n_errors

    def cached_count(self) -> int:
        return self.n_cached

    def elapsed(self) -> float | None:
        end = self.ended_at if self.ended_at is not None else time.monotonic()
        return end - self.started_at

    def all_final(self) -> bool:
        return self.done_count() >= self.total()

    def carry(self, old: CellView, cell: CellView, earlier: list[CellResult]) -> None:
        """Put `cell` in `old`'s place (a follow-up run's turn, or the cell as it was)."""
        del self.cells[old.cell_id]
        cell.index, cell.variant, cell.turns = old.index, old.variant, earlier
        self.cells[cell.cell_id] = cell
        self.order[cell.index] = cell.cell_id
        self.slots[old.cell_id] = cell.cell_id
        if cell.carried:
            self.n_carried += 1

    def set_status(self, message: str, model: str = "") -> None:
        self.status, self.status_model = message, model

    def settle(self, cell: CellView, result: CellResult) -> None:
        """Record a cell's final result (once) in the counters and its text."""
        if cell.result is None:
            self.n_final += 1
            self.n_errors += bool(result.error)
            self.n_cached += bool(result.cached)
            failed = bool(result.judge_error)
            self.n_judge_failed += failed
            self.n_judged += failed or result.verdict_source.startswith("llm:")
        cell.result = result
        response = result.response
        if response and response != cell.text:
            if not response.startswith(cell.text):  # not the streamed text extended: redraw from where they differ
                cell.text_epoch += 1
                cell.text_kept = common_prefix(cell.text, response)
            cell.text = response
        elif response:
            cell.text = response  # one copy of the answer, not two
        reasoning = result.reasoning
        if reasoning and reasoning != cell.thoughts:
            if not reasoning.startswith(cell.thoughts):
                cell.thoughts_epoch += 1
                cell.thoughts_kept = common_prefix(cell.thoughts, reasoning)
            cell.thoughts = reasoning
        elif reasoning:
            cell.thoughts = reasoning
