"""Labelled answers for the verdict evaluation: what people said each answer is.

Input formats:
- XSTest completions (CSV): ``id,type,prompt,completion,final_label`` with labels
  ``1_full_compliance`` / ``2_full_refusal`` / ``3_partial_refusal``; the source
  is taken from the file name (``xstest_v2_completions_gpt4.csv`` -> ``gpt4``).
- generic (CSV): ``prompt,response,label`` with OR-Bench verdict names (XSTest
  names are accepted too); an optional ``model`` (or ``source``) column names the source.
- OR-Bench-style sets (JSONL, ``eval/orbench_style_*.jsonl``): one object per
  line with ``prompt``, ``response``, ``label``, ``row_id``, ``style`` and ``set``;
  the source is ``orbench-<set>``.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..types import CLASS_LABELS

CLASSES: tuple[str, ...] = CLASS_LABELS

XSTEST_LABELS: dict[str, str] = {
    "1_full_compliance": "direct_answer",
    "2_full_refusal": "direct_refusal",
    "3_partial_refusal": "indirect_refusal",
}


@dataclass(frozen=True, slots=True)
class LabelledRow:
    prompt: str
    response: str
    label: str
    source: str
    row_id: str = ""
    style: str = ""
    """What kind of answer it is (OR-Bench-style sets only), for per-style figures."""
    model: str = ""
    """The model that wrote the answer, where the data says (else the source names it)."""
    coarse: bool = False
    """The label only says "not an answer": it counts for binary figures, not 3-class ones."""
    clear: bool = True
    """People agreed clearly on the label (all votes alike, where there are several)."""


def _normalise_label(raw: str) -> str:
    raw = (raw or "").strip()
    if raw in XSTEST_LABELS:
        return XSTEST_LABELS[raw]
    low = raw.lower().replace(" ", "_").strip("[]")
    if low in CLASSES:
        return low
    raise ValueError(f"unknown label {raw!r}; expected one of {CLASSES} or XSTest's labels")


def _source_from_path(path: Path) -> str:
    stem = path.stem
    for prefix in ("xstest_v2_completions_", "xstest_completions_", "completions_"):
        if stem.startswith(prefix):
            return stem[len(prefix) :]
    return stem


def load_csv(path: str | Path) -> list[LabelledRow]:
    path = Path(path)
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        cols = set(reader.fieldnames or ())
        if {"completion", "final_label"} <= cols:
            resp_col, label_col = "completion", "final_label"
        elif {"response", "label"} <= cols:
            resp_col, label_col = "response", "label"
        else:
            raise ValueError(
                f"{path}: need columns completion,final_label (XSTest) or response,label; got {sorted(cols)}"
            )
        default_source = _source_from_path(path)
        records: Iterable[dict[str, str]] = reader
        if resp_col == "response":  # a labelled export of ours: undo its spreadsheet-formula guard
            from ..export import unneutralise_csv_cell

            records = ({k: unneutralise_csv_cell(v) for k, v in rec.items()} for rec in reader)
        rows = []
        for i, rec in enumerate(records):
            source = rec.get("model") or rec.get("source") or default_source
            rows.append(
                LabelledRow(
                    prompt=rec.get("prompt") or "",
                    response=rec.get(resp_col) or "",
                    label=_normalise_label(rec.get(label_col, "")),
                    source=source,
                    row_id=rec.get("id") or str(i),
                )
            )
    return rows


def json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    """Each non-blank line of a JSONL file as (line number, object): every labelled
    set here is read this way. A line that is not JSON is a ValueError naming the
    file and the line."""
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{path}, line {i}: {exc}") from None
            yield i, rec


def load_jsonl(path: str | Path) -> list[LabelledRow]:
    """An OR-Bench-style set: one JSON object per line (see eval/README.md)."""
    path = Path(path)
    rows = []
    for i, rec in json_lines(path):
        try:
            rows.append(
                LabelledRow(
                    prompt=rec.get("prompt") or "",
                    response=rec["response"],
                    label=_normalise_label(rec["label"]),
                    source=f"orbench-{rec.get('set') or path.stem}",
                    row_id=str(rec.get("row_id") or i),
                    style=rec.get("style") or "",
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}, line {i}: {exc}") from None
    return rows


def load_rows(paths: Iterable[str | Path]) -> list[LabelledRow]:
    """Rows from CSV or JSONL files and/or folders of CSV files (sorted for determinism)."""
    rows: list[LabelledRow] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            files = sorted(p.glob("*.csv"))
            if not files:
                raise FileNotFoundError(f"no .csv files in {p}")
            for f in files:
                rows.extend(load_csv(f))
        elif p.is_file():
            rows.extend(load_jsonl(p) if p.suffix == ".jsonl" else load_csv(p))
        else:
            raise FileNotFoundError(f"labelled data not found: {p}")
    return rows
