"""Writing results as CSV or JSONL with the contract columns.

Model output is untrusted: a cell starting with `=`, `+`, `-`, `@` (or a tab /
carriage return) would run as a formula when the CSV is opened in a
spreadsheet, so CSV cells get a leading apostrophe. The escape is reversible:
a text that already starts with apostrophes followed by a formula character
(`'=1+1`) gets one more, so a reader removes exactly one apostrophe from any
cell matching `'+` then a formula character (`unneutralise_csv_cell`) and gets
the original text back. Every reader of our CSVs uses that function.

JSONL is data for programs and keeps text exactly as received. Records are
separated by `\n` only; the three non-ASCII characters some line splitters
also treat as line ends (U+0085, U+2028, U+2029; Python's `str.splitlines`,
old JavaScript) are written as JSON escapes, so every reader sees one record
per line. ASCII control characters are always escaped by `json.dumps`.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from .types import EXTRA_COLUMNS, RESULT_COLUMNS, CellResult

COLUMNS: tuple[str, ...] = RESULT_COLUMNS + EXTRA_COLUMNS
FORMULA_STARTERS: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula."""
_ESCAPED = re.compile(r"'*[=+\-@\t\r]")
"""Texts the CSV escape prefixes: a formula character after any number of apostrophes."""
_JSONL_LINE_ENDS = str.maketrans({"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def neutralise_csv_cell(value: Any) -> Any:
    """Defuse spreadsheet formulas in untrusted text; numbers pass through.

    `'` is put before a text that starts with a formula character, or with
    apostrophes and then one, so that `unneutralise_csv_cell` can undo it exactly."""
    if isinstance(value, str) and _ESCAPED.match(value):
        return "'" + value
    return value


def unneutralise_csv_cell(value: Any) -> Any:
    """The exact inverse of `neutralise_csv_cell` for every cell it wrote."""
    if isinstance(value, str) and value.startswith("'") and _ESCAPED.match(value, 1):
        return value[1:]
    return value


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return neutralise_csv_cell(value)


def write_csv(results: Iterable[CellResult], fh: TextIO) -> None:
    """Stream `results` as CSV rows into `fh` (opened with newline=""), one answer at a time."""
    fh.write(csv_line(COLUMNS))
    for result in results:
        row = result.to_row()
        fh.write(csv_line([_csv_value(row[c]) for c in COLUMNS]))


_CSV_SPECIALS = (",", '"', "\r", "\n")


def csv_line(fields: Iterable[Any]) -> str:
    """One CSV record and its line end, exactly as `csv.writer(fh, lineterminator="\r\n")`
    writes it (tests/test_round_trips.py compares the two): a field holding a comma,
    a quote or a line break is quoted, its quotes doubled; other values as `str`.

    RFC 4180 line ends: Python's writer only quotes a field holding a character of
    the line terminator, so with "\n" a bare "\r" in model output went out unquoted
    and split the row in every reader. Written here rather than by `csv.writer`,
    which copies a field character by character: 22-28 ms a MiB, so a session
    holding a dozen 1 MiB answers spent a third of a second of CPU on every
    export (after every run), against 1 ms for these C-level searches and one
    `replace`. Records of more than one field only: csv.writer quotes a lone
    empty field, which no record here is."""
    out = []
    for value in fields:
        text = value if isinstance(value, str) else str(value)
        for special in _CSV_SPECIALS:
            if special in text:
                text = '"' + text.replace('"', '""') + '"'
                break
        out.append(text)
    return ",".join(out) + "\r\n"


def write_jsonl(results: Iterable[CellResult], fh: TextIO) -> None:
    """Stream `results` as JSON lines into `fh`, one answer at a time."""
    for r in results:
        fh.write(jsonl_line(r.to_row()))


def results_to_csv(results: Iterable[CellResult]) -> str:
    buffer = io.StringIO()
    write_csv(results, buffer)
    return buffer.getvalue()


def jsonl_line(record: Any) -> str:
    """One JSON record and its `\\n`, safe for any line splitter (see the module doc)."""
    return json.dumps(record, ensure_ascii=False).translate(_JSONL_LINE_ENDS) + "\n"


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
