"""Reading a results file back (CSV or JSONL written by `export.write_results`
or `orbench-play run --out`) as `CellResult`s, for `orbench-play compare`."""

from __future__ import annotations

import csv
import json
from dataclasses import fields
from pathlib import Path
from typing import Any

from ..export import unneutralise_csv_cell
from ..types import CellResult
from .stats import CompareError

_FLOATS = {"latency_s", "ttft_s", "cost_usd", "retry_wait_s", "ttfa_s", "p_refusal", "saved_cost_usd"}
_INTS = {"completion_tokens", "repeat", "attempts", "reasoning_tokens", "turn", "settled_at_tokens", "saved_tokens"}
_BOOLS = {"cached", "settled"}
_EMPTY = {"cost_usd": 0.0, "retry_wait_s": 0.0, "repeat": 0, "attempts": 0, "turn": 1}
"""Numbers whose empty cell has a value (zero, or turn 1); the rest mean "not known": None."""


def _coerce(name: str, value: Any) -> Any:
    if name in _FLOATS or name in _INTS:
        if value in ("", None):
            return _EMPTY.get(name)
        try:
            return int(float(value)) if name in _INTS else float(value)
        except (TypeError, ValueError):
            return None
    if name in _BOOLS:
        return value if isinstance(value, bool) else str(value).strip().lower() in ("true", "1", "yes")
    if name == "sure":  # empty: not known (an older file, or no verdict)
        if value in ("", None) or isinstance(value, bool):
            return None if value == "" else value
        return str(value).strip().lower() in ("true", "1", "yes")
    return "" if value is None else str(value)


def load_results(path: str | Path) -> list[CellResult]:
    """Read a results file written by `export.write_results` (or `orbench-play run --out`).

    `.jsonl`/`.json` are JSON lines (split on `\\n` only: U+2028 and friends
    are text, not line ends), anything else CSV. CSV text cells lose exactly
    the apostrophe export's formula guard put there (`unneutralise_csv_cell`).
    Files without a `repeat` column get repeats numbered by order of appearance
    of each (row, model, system prompt, params), which is the order the engine
    writes them in.
    """
    file = Path(path)
    names = {f.name for f in fields(CellResult)}
    try:
        if file.suffix.lower() in (".jsonl", ".json"):
            rows = []
            text = file.read_bytes().decode("utf-8-sig")
            for number, line in enumerate(text.split("\n"), start=1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except ValueError as exc:
                        raise CompareError(f"{file} line {number} is not JSON ({exc}).") from None
        else:
            with file.open(encoding="utf-8-sig", newline="") as fh:
                rows = [{k: unneutralise_csv_cell(v) for k, v in row.items()} for row in csv.DictReader(fh)]
    except FileNotFoundError:
        raise CompareError(f"results file {file} does not exist.") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CompareError(f"cannot read {file}: {exc}") from None
    out: list[CellResult] = []
    seen: dict[tuple[str, ...], int] = {}
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise CompareError(f"{file} row {number} is not an object.")
        missing = [c for c in ("row_id", "model", "verdict") if c not in row]
        if missing:
            raise CompareError(f"{file} lacks column(s) {', '.join(missing)}: is it an orbench-play results file?")
        values = {k: _coerce(k, v) for k, v in row.items() if k in names}
        values.setdefault("system_prompt_id", "none")
        result = CellResult(**values)
        if "repeat" not in row:
            ident = (result.row_id, result.model, result.system_prompt_id, result.params)
            result.repeat = seen.get(ident, 0)
            seen[ident] = result.repeat + 1
        out.append(result)
    return out
