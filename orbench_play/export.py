"""Writing results as CSV or JSONL with the contract columns.

Model output is untrusted: a cell starting with `=`, `+`, `-`, `@` (or a tab /
carriage return) would run as a formula when the CSV is opened in a
spreadsheet, so CSV cells get a leading apostrophe. JSONL is data for
programs and keeps text exactly as received.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from .types import EXTRA_COLUMNS, RESULT_COLUMNS, CellResult

COLUMNS: tuple[str, ...] = RESULT_COLUMNS + EXTRA_COLUMNS
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralise_csv_cell(value: Any) -> Any:
    """Defuse spreadsheet formulas in untrusted text; numbers pass through."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return neutralise_csv_cell(value)


def write_csv(results: Iterable[CellResult], fh: TextIO) -> None:
    """Stream `results` as CSV rows into `fh` (opened with newline=""), one answer at a time."""
    # RFC 4180 line ends: Python's writer only quotes a field holding a character
    # of the line terminator, so with "\n" a bare "\r" in model output went out
    # unquoted and split the row in every reader.
    writer = csv.writer(fh, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for result in results:
        row = result.to_row()
        writer.writerow([_csv_value(row[c]) for c in COLUMNS])


def write_jsonl(results: Iterable[CellResult], fh: TextIO) -> None:
    """Stream `results` as JSON lines into `fh`, one answer at a time."""
    for r in results:
        fh.write(json.dumps(r.to_row(), ensure_ascii=False) + "\n")


def results_to_csv(results: Iterable[CellResult]) -> str:
    buffer = io.StringIO()
    write_csv(results, buffer)
    return buffer.getvalue()


def results_to_jsonl(results: Iterable[CellResult]) -> str:
    buffer = io.StringIO()
    write_jsonl(results, buffer)
    return buffer.getvalue()


def write_results(results: Iterable[CellResult], path: str | os.PathLike[str]) -> Path:
    """Write by extension: `.jsonl`/`.json` as JSON lines, anything else as CSV."""
    out = Path(path)
    text = results_to_jsonl(results) if out.suffix.lower() in (".jsonl", ".json") else results_to_csv(results)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    tmp.write_text(text, encoding="utf-8", newline="")
    tmp.replace(out)  # never leave a half-written results file behind
    return out
