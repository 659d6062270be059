"""What a visitor's session keeps on disk: whole long answers and the downloads.

A visitor's own endpoint can send answers of any size, and a session lives as
long as its tab. So that what a session holds depends on how many cells it ran,
never on how long their answers were, and the downloads never pile up:

- **Kept text.** The session keeps at most `KEPT_CHARS` of each answer in
  memory (what the grid shows). A longer answer is written whole to
  the session's *spool* folder, one file per cell (a re-run of the cell
  overwrites it), outside Gradio's served folder. The spool holds at most
  `ORBENCH_SESSION_SPOOL_MB` (default 32 MB); past that, an answer is kept cut
  with a note saying so, and the export carries that cut text.
- **Downloads.** One CSV and one JSONL per session, written after a run (or an
  override) into a fresh unguessable folder *inside* Gradio's upload folder,
  so Gradio serves them where they are instead of copying them into its cache
  (a copy per run is what filled the disk). The previous export is deleted
  as soon as the new one is written, so a session never has more than one.
  Rows are streamed to the files one answer at a time, whole answers read
  back from the spool.
- **End of session.** `SessionFiles.close()` (from the session's
  `delete_callback`, the reaper in `lifetime`, or when the session is
  garbage-collected) removes both folders.
- **Where, and how much in all.** Both folders sit in this process's scratch
  folder (`scratch.process_folder`) of their parent (the temp folder for
  spools, Gradio's upload folder for downloads), so the next start removes
  what a crashed process left (`scratch.sweep`) and never a live sibling's.
  Every session's spool and downloads count against one total,
  `ORBENCH_SESSIONS_DISK_MB` (default 8,192 MB): past it no answer is
  spooled (kept cut, saying the server's space is full) and no run starts
  (`disk_full_message`). A download is counted once written, so the total
  can pass the cap by the one being written.

No Gradio import at module level: `session.py` uses the spool at import time.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...runtime import scratch
from ...types import CellResult
from ..views.safe_html import MAX_SHOWN_CHARS

log = logging.getLogger(__name__)

KEPT_CHARS = MAX_SHOWN_CHARS
"""Characters of an answer a session keeps in memory: what the grid shows."""
SPOOLED = ("response", "reasoning")
"""The texts of a result kept cut in memory and whole in the spool: the answer and the thoughts."""
DEFAULT_SPOOL_MB = 32
DEFAULT_SESSIONS_DISK_MB = 8192
"""All sessions' spools and downloads together, per process (ORBENCH_SESSIONS_DISK_MB)."""
LEGACY_PREFIXES = ("orbench-spool-", "orbench-export-")
"""Folders of versions before per-process folders: swept once a day old."""
CSV_NAME, JSONL_NAME = "orbench-session.csv", "orbench-session.jsonl"
CSV_LABEL, JSONL_LABEL = "Download CSV", "Download JSONL"
WAITING = " (after a run)"
"""Added to a download button's label while there is nothing to download (it is disabled then)."""


def _megabytes(name: str, default: float) -> int:
    raw = os.environ.get(name, "").strip()
    try:
        mb = float(raw) if raw else default
    except ValueError:
        log.warning("%s=%r is not a number; using %s", name, raw, default)
        mb = default
    if not mb >= 0 or mb == float("inf"):
        mb = default
    return int(mb * 2**20)


def spool_limit_bytes() -> int:
    """ORBENCH_SESSION_SPOOL_MB as bytes (default 32 MB; 0 keeps no whole long answers)."""
    return _megabytes("ORBENCH_SESSION_SPOOL_MB", DEFAULT_SPOOL_MB)


def sessions_disk_limit_bytes() -> int:
    """ORBENCH_SESSIONS_DISK_MB as bytes: every session's spool and downloads together."""
    return _megabytes("ORBENCH_SESSIONS_DISK_MB", DEFAULT_SESSIONS_DISK_MB)


def session_disk_share() -> int:
    """The most one session is expected to hold: its spool, and the spooled answers
    again in each of its two downloads, plus 4 MiB for the kept copies of the rest."""
    return 3 * spool_limit_bytes() + 4 * 2**20


@functools.cache
def sessions_budget() -> scratch.DiskBudget:
    """The process's count of session files against ORBENCH_SESSIONS_DISK_MB (made on first
    use; one per process, as the folders are per process)."""
    return scratch.DiskBudget(sessions_disk_limit_bytes())


def disk_full_message(budget: scratch.DiskBudget) -> str:
    return (
        f"The server's space for session files is full ({budget.limit / 2**20:,.0f} MB across all sessions), "
        "so no new run starts now. Idle sessions expire and free theirs: try again in a few minutes."
    )


def spool_root() -> Path:
    """This process's folder for spools (in the temp folder, outside what Gradio serves)."""
    return scratch.process_folder(tempfile.gettempdir())


def export_root() -> Path:
    """This process's folder for downloads, inside Gradio's upload folder (served in place)."""
    from gradio.utils import get_upload_folder

    return scratch.process_folder(get_upload_folder())


def sweep_leftovers() -> list[Path]:
    """Remove the spool and download folders that ended processes left behind (start-up)."""
    from gradio.utils import get_upload_folder

    removed = []
    for parent in (tempfile.gettempdir(), get_upload_folder()):
        removed += scratch.sweep(parent, legacy=LEGACY_PREFIXES)
    return removed


def download_update(label: str, ready: bool) -> dict[str, Any]:
    """A download button's look: enabled, or disabled and saying it fills after a run.
    The file itself comes with the run's outputs (see `ui.handlers.playground`)."""
    import gradio as gr

    return gr.update(interactive=ready, label=label if ready else label + WAITING)


def cut_note(total: int, spooled: bool, whose: str = "this session's") -> str:
    more = total - KEPT_CHARS
    if spooled:
        return f"\n… [+{more:,} characters in the export]"
    return f"\n… [answer cut here: {more:,} more characters were not kept, {whose} space for long answers is full]"


@dataclass
class _Spooled:
    path: Path | None
    """The whole answer on disk, or None when the spool was full."""
    size: int


@dataclass
class SessionFiles:
    """The spool of whole long answers and the current export of one session."""

    limit: int = field(default_factory=spool_limit_bytes)
    used: int = 0
    """Bytes of whole answers in the spool now."""
    budget: scratch.DiskBudget = field(default_factory=sessions_budget)
    """What all sessions of the process hold (spools and downloads), against its cap."""
    _spool: Path | None = None
    _entries: dict[str, _Spooled] = field(default_factory=dict)
    _export: Path | None = None
    _export_bytes: int = 0

    # -- the spool ------------------------------------------------------------------

    def keep(self, result: CellResult) -> CellResult:
        """The copy of `result` the session keeps: itself when the answer (and a
        reasoning model's thoughts) are short; else the first KEPT_CHARS
        characters of each and a note, the whole text spooled."""
        cid = result.cell_id
        self._drop(cid)
        kept: dict[str, Any] = {}
        for name in SPOOLED:
            text = getattr(result, name)
            if len(text) > KEPT_CHARS:
                refused = self._spool_text(f"{cid}\0{name}" if name != "response" else cid, text)
                kept[name] = text[:KEPT_CHARS] + cut_note(len(text), refused is None, refused or "")
        return replace(result, **kept) if kept else result

    def _spool_text(self, key: str, text: str) -> str | None:
        """Spool `text` whole; None when it was, else whose space was full."""
        data = text.encode("utf-8", "surrogatepass")
        if self.used + len(data) > self.limit:
            self._entries[key] = _Spooled(None, 0)
            return "this session's"
        if not self.budget.try_take(len(data)):
            self._entries[key] = _Spooled(None, 0)
            return "the server's"
        try:
            path = self._spool_dir() / (hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32] + ".txt")
            path.write_bytes(data)
        except OSError as exc:
            log.warning("could not spool a long answer: %s", exc)
            self.budget.give_back(len(data))
            self._entries[key] = _Spooled(None, 0)
            return "this session's"
        self.used += len(data)
        self._entries[key] = _Spooled(path, len(data))
        return None

    def whole(self, result: CellResult) -> CellResult:
        """`result` with its whole answer and thoughts read back from the spool (as kept when not spooled)."""
        whole: dict[str, Any] = {}
        for name in SPOOLED:
            key = result.cell_id if name == "response" else f"{result.cell_id}\0{name}"
            entry = self._entries.get(key)
            if entry is None or entry.path is None:
                continue
            try:
                whole[name] = entry.path.read_bytes().decode("utf-8", "surrogatepass")
            except OSError as exc:
                log.warning("could not read a spooled answer back: %s", exc)
        return replace(result, **whole) if whole else result

    def free(self, cid: str) -> None:
        """The session let cell `cid` go (its run left the history): its spooled answer goes too."""
        self._drop(cid)

    def _drop(self, cid: str) -> None:
        for key in (cid, *(f"{cid}\0{name}" for name in SPOOLED if name != "response")):
            entry = self._entries.pop(key, None)
            if entry is not None and entry.path is not None:
                entry.path.unlink(missing_ok=True)
                self.used -= entry.size
                self.budget.give_back(entry.size)

    def _spool_dir(self) -> Path:
        if self._spool is None or not self._spool.is_dir():
            self._spool = Path(tempfile.mkdtemp(prefix="spool-", dir=spool_root()))
            self._entries.clear()
            self.budget.give_back(self.used)
            self.used = 0
        return self._spool

    # -- the downloads ----------------------------------------------------------------

    def export(self, results: Iterable[CellResult]) -> tuple[str, str]:
        """Write `results` (whole answers) as CSV and JSONL into a fresh folder in
        Gradio's upload folder, delete the previous export, return the two paths."""
        from ...export import write_csv, write_jsonl

        rows = list(results)
        folder = export_root() / f"export-{secrets.token_hex(16)}"
        folder.mkdir(parents=True, mode=0o700)
        try:
            csv_path, jsonl_path = folder / CSV_NAME, folder / JSONL_NAME
            # errors="replace": a lone surrogate that got this far must not cost the visitor the download.
            with csv_path.open("w", encoding="utf-8", errors="replace", newline="") as fh:
                write_csv(self._whole_rows(rows), fh)
            with jsonl_path.open("w", encoding="utf-8", errors="replace", newline="") as fh:
                write_jsonl(self._whole_rows(rows), fh)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        previous, self._export = self._export, folder
        written = csv_path.stat().st_size + jsonl_path.stat().st_size
        self.budget.take(written)
        if previous is not None:
            shutil.rmtree(previous, ignore_errors=True)
        self.budget.give_back(self._export_bytes)
        self._export_bytes = written
        return str(csv_path), str(jsonl_path)

    def _whole_rows(self, rows: list[CellResult]) -> Iterator[CellResult]:
        return (self.whole(r) for r in rows)

    def export_paths(self) -> list[str]:
        """The files of the current export (for Gradio to forget when they go)."""
        if self._export is None:
            return []
        return [str(self._export / CSV_NAME), str(self._export / JSONL_NAME)]

    def disk_bytes(self) -> int:
        """Bytes this session holds on disk now (spool and export)."""
        total = 0
        for folder in (self._spool, self._export):
            if folder is not None and folder.is_dir():
                total += sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
        return total

    def close(self) -> None:
        """Remove the spool and the export (the session has ended)."""
        for folder in (self._spool, self._export):
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
        self._spool = self._export = None
        self._entries.clear()
        self.budget.give_back(self.used + self._export_bytes)
        self.used = self._export_bytes = 0
