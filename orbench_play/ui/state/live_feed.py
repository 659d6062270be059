"""The live grid's wire protocol: the page receives what changed, not the grid.

A run's grid reaches the page twice over: once as a *skeleton* (the grid's
HTML with every slot but no answer text, sent as the value of the `grid`
component when the run starts), then as a stream of *batches*, one per frame
(at most ~10 a second), each the value of the hidden `grid_feed` component.
`live_grid.js` applies a batch to the skeleton's slots: answer text with
`appendData`/`textContent` (never parsed as HTML), the rest as attributes and
text. A batch is a JSON object:

    {"r": run number, "q": sequence number,
     "c": [[i, offset, text], ...],        # answer text of cell i from `offset` on
     "t": [[i, offset, text], ...],        # a reasoning model's thoughts, the same way (the cell's `.think`)
     "u": [[i, {field: value, ...}], ...], # changed fields of cell i (grid_view.cell_fields keys)
     "g": [[i, {field: value, ...}], ...]} # changed "k/n refused" heads (cells asked k times)

- `i` is the cell's index in grid order (`RunView.order`, the `data-i` attribute).
- Text is what the grid shows: control and bidi characters replaced by visible
  stand-ins (`safe_html.neutralise`), cut at `MAX_SHOWN_CHARS` (field `x` says
  how many characters the export has beyond). `offset` counts UTF-16 code units,
  the browser's string length, so the page can tell a repeated piece (skip what
  it has) from a missing one (resync). A text entry with a fourth element `1`
  cuts the cell's text at `offset` first (the final answer is not the streamed
  text extended, e.g. repaired: only the part after the two differ is resent).
- Sequence numbers run across runs and across the events that send batches
  (run, stop, override, resync), so the page applies batch `q` only after
  `q - 1`. A gap (a batch lost, e.g. coalesced by the browser or dropped with a
  connection) holds later batches for a moment and then asks for a resync.
- `{"r", "q", "reset": 1}` starts a run: the skeleton just sent is the state.
- `"end": 1` on a batch (or snapshot) says the run is over. A quiet run sends
  a bare `{"r", "q"}` about once a second, so a page that hears nothing for
  long during a run (30 s: a dropped connection, not a busy server) asks for
  a resync.
- `{"r", "q", "snap": 1, "html": skeleton, "c": ..., "u": ..., "g": ...}` is a
  full snapshot (the answer to a resync): the page swaps in the skeleton, then
  applies the rest, and continues from `q`.

`<` is written `\\u003c` in answer text, so no answer can look like markup to
anything that scans the payload (Gradio warns about `<script` in HTML values). Building a batch costs O(cells that changed),
never O(grid): the session reports each changed cell with `touch`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..views.grid_view import cell_fields, group_fields, render_grid
from ..views.safe_html import MAX_SHOWN_CHARS, neutralise

if TYPE_CHECKING:
    from ..views.run_view import RunView


def utf16_len(text: str) -> int:
    """The length the browser sees (JavaScript strings count UTF-16 code units)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


@dataclass(slots=True)
class _Text:
    """What the page has of one text of a cell (the answer, or the thoughts)."""

    raw: int = 0
    """Characters sent (at most MAX_SHOWN_CHARS)."""
    offset: int = 0
    """The shown text's length on the page, in UTF-16 code units."""
    epoch: int = 0


@dataclass(slots=True)
class _Sent:
    """What the page has of one cell."""

    answer: _Text = field(default_factory=_Text)
    thoughts: _Text = field(default_factory=_Text)
    fields: dict[str, Any] = field(default_factory=dict)


_TOGETHER = (("v", "p", "s", "b", "h", "w", "ov", "sr", "pr"), ("m", "c"), ("e", "mt"))
"""Fields the page sets together (the badge, the meta line, the message): one changed, all are sent."""


def _changed(before: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    changed = {k: v for k, v in now.items() if before.get(k) != v}
    for keys in _TOGETHER:
        if any(k in changed for k in keys):
            changed.update({k: now[k] for k in keys if k in now})  # sr, pr: only once final
    return changed


PROGRESS_EVERY_S = 0.5
"""While a run streams, the progress line follows at most twice a second."""
SCORES_EVERY_S = 1.0
SCORE_BUDGET = 0.5
SCORE_BUDGET_MIN = 100_000
"""The scoreboard and plot (tens of kB each time) follow the results at most once a
second, and their updates during a run may cost at most half the bytes of the answer
text sent so far (at least 100 kB): a long run's traffic stays proportional to its
answers. The end of a run always brings them."""


@dataclass(slots=True)
class Pacing:
    """How often the page's heavier outputs follow a live run (reset per run)."""

    progress: str = ""
    progress_at: float = 0.0
    scored_version: int = -1
    scored_at: float = 0.0
    score_bytes: int = 0
    score_size: int = 0
    text_bytes: int = 0
    """Bytes of answer text sent to the page this run."""

    def progress_due(self, html: str, now: float) -> bool:
        return html != self.progress and now - self.progress_at >= PROGRESS_EVERY_S

    def sent_progress(self, html: str, now: float) -> None:
        self.progress, self.progress_at = html, now

    def scores_due(self, version: int, now: float) -> bool:
        budget = max(SCORE_BUDGET_MIN, SCORE_BUDGET * self.text_bytes)
        return (
            version != self.scored_version
            and now - self.scored_at >= SCORES_EVERY_S
            and self.score_bytes + self.score_size <= budget
        )

    def sent_scores(self, version: int, now: float, size: int) -> None:
        self.scored_version, self.scored_at = version, now
        self.score_bytes += size
        self.score_size = size


def _dumps(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


class LiveFeed:
    """One visitor's side of the protocol: what the page has been sent, and
    which cells changed since (`touch`). All calls happen on the event loop."""

    def __init__(self) -> None:
        self.run = 0
        self.seq = 0
        self._sent: dict[int, _Sent] = {}
        self._groups: dict[int, dict[str, Any]] = {}
        self._dirty: set[int] = set()
        self._ended = False
        self.pacing = Pacing()
        self.api_pacing = Pacing()
        """The progress line's pace for an API caller's stream (`frames.Frame.api_update`)."""

    def touch(self, run: int, index: int) -> None:
        """Cell `index` of run `run` changed (cheap: called for every engine event)."""
        if run == self.run and index >= 0:
            self._dirty.add(index)

    # -- messages -----------------------------------------------------------------

    def start(self, run: RunView, overrides: dict[str, str]) -> tuple[str, str]:
        """(skeleton HTML, reset message) for a new run; text follows in batches."""
        html = render_grid(run, overrides, with_text=False)
        self._adopt(run, overrides)
        self.pacing = Pacing()
        self.seq += 1
        return html, _dumps({"r": run.number, "q": self.seq, "reset": 1})

    def batch(self, run: RunView | None, overrides: dict[str, str], *, heartbeat: bool = False) -> str | None:
        """The changes since the last message; None when nothing changed, unless
        a `heartbeat` is asked for (a quiet run still says it is alive) or the
        run just ended (`"end": 1`, once)."""
        if run is None or run.number != self.run:
            self._dirty.clear()
            return None
        dirty, self._dirty = sorted(self._dirty), set()
        texts, thoughts, updates, groups = self._changes(run, overrides, dirty) if dirty else ([], [], [], [])
        end = run.finished and not self._ended
        if not (texts or thoughts or updates or groups or heartbeat or end):
            return None
        self.seq += 1
        message: dict[str, Any] = {"r": run.number, "q": self.seq}
        for key, value in (("c", texts), ("t", thoughts), ("u", updates), ("g", groups)):
            if value:
                message[key] = value
        if run.finished:
            message["end"] = 1
            self._ended = True
        return _dumps(message)

    def snapshot(self, run: RunView | None, overrides: dict[str, str]) -> str | None:
        """Everything, for a page that lost track (a gap it could not fill)."""
        if run is None:
            return None
        html = render_grid(run, overrides, with_text=False)
        self._adopt(run, overrides)
        texts, thoughts, updates, groups = self._changes(run, overrides, list(range(len(run.order))))
        self.seq += 1
        message: dict[str, Any] = {
            "r": run.number,
            "q": self.seq,
            "snap": 1,
            "c": texts,
            "t": thoughts,
            "u": updates,
            "g": groups,
        }
        if run.finished:
            message["end"] = 1
        # Our own (escaped) markup goes in as it is: only answer text has its "<" written out.
        return _dumps(message)[:-1] + ',"html":' + json.dumps(html, ensure_ascii=False) + "}"

    # -- internals ----------------------------------------------------------------

    def _adopt(self, run: RunView, overrides: dict[str, str]) -> None:
        """The page now has `run`'s skeleton: every cell's fields, no text."""
        self.run = run.number
        self._dirty = set()
        self._sent = {}
        self._ended = run.finished
        for cid in run.order:
            cell = run.cells[cid]
            fields = cell_fields(cell, overrides.get(cid))
            fields["x"] = fields["tx"] = 0  # the skeleton has no text, so no "… more in the export" either
            sent = _Sent(_Text(epoch=cell.text_epoch), _Text(epoch=cell.thoughts_epoch), fields)
            self._sent[cell.index] = sent
            if cell.text or cell.thoughts:
                self._dirty.add(cell.index)
        self._groups = {}
        if run.repeats > 1:
            for group in self._all_groups(run):
                views = [run.cells[c] for c in group]
                self._groups[views[0].index] = group_fields(views, overrides)

    @staticmethod
    def _all_groups(run: RunView) -> list[list[str]]:
        return [g for p in run.prompts for g in run.groups(p.row_id)]

    def _text(self, i: int, sent: _Text, text: str, epoch: int, kept: int, out: list[list[Any]]) -> None:
        """What the page lacks of one text of cell `i` (answer or thoughts), into `out`."""
        replace = sent.epoch != epoch
        if replace:  # the text was replaced: keep what both share, resend the rest
            kept = min(sent.raw, kept) if epoch == sent.epoch + 1 else 0
            sent.epoch, sent.raw, sent.offset = epoch, kept, utf16_len(neutralise(text[:kept]))
        end = min(len(text), MAX_SHOWN_CHARS)
        if end > sent.raw or replace:
            piece = neutralise(text[sent.raw : end])
            out.append([i, sent.offset, piece, 1] if replace else [i, sent.offset, piece])
            self.pacing.text_bytes += len(piece)
            sent.raw, sent.offset = end, sent.offset + utf16_len(piece)

    def _changes(self, run: RunView, overrides: dict[str, str], indexes: list[int]):
        texts: list[list[Any]] = []
        thoughts: list[list[Any]] = []
        updates: list[list[Any]] = []
        touched_groups: dict[int, list[str]] = {}
        for i in indexes:
            if i >= len(run.order):
                continue
            cell = run.cells[run.order[i]]
            sent = self._sent.setdefault(i, _Sent())
            self._text(i, sent.answer, cell.text, cell.text_epoch, cell.text_kept, texts)
            if cell.thoughts or sent.thoughts.raw:
                self._text(i, sent.thoughts, cell.thoughts, cell.thoughts_epoch, cell.thoughts_kept, thoughts)
            fields = cell_fields(cell, overrides.get(cell.cell_id))
            changed = _changed(sent.fields, fields)
            if changed:
                updates.append([i, changed])
                sent.fields = fields
                if run.repeats > 1 and ("st" in changed or "v" in changed):
                    touched_groups.setdefault(i - cell.repeat, [])
        groups: list[list[Any]] = []
        for first in sorted(touched_groups):
            ids = run.order[first : first + run.repeats]
            g = group_fields([run.cells[c] for c in ids], overrides)
            before = self._groups.get(first, {})
            changed = {k: v for k, v in g.items() if before.get(k) != v}
            if changed:
                groups.append([first, changed])
                self._groups[first] = g
        return texts, thoughts, updates, groups
