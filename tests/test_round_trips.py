"""Issue 13, items 6 and 11: what `run --out` writes, every reader in the
project reads back exactly.

- JSONL: an answer holding a character that some line splitters treat as a
  line end (U+2028, U+2029, U+0085, VT, FF, FS, GS, RS, CR, LF) stays one
  record; `compare` reads it back byte for byte, and so does any reader that
  splits the file with `str.splitlines()`.
- CSV: the spreadsheet-formula escape is reversible: a text that really
  starts with an apostrophe before a formula character gets one more
  apostrophe on disk, and the readers (`compare`, `judge`, `eval`) remove
  exactly one.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from orbench_play import cli, evaluation
from orbench_play.compare import load_results
from orbench_play.export import (
    FORMULA_STARTERS,
    neutralise_csv_cell,
    results_to_csv,
    unneutralise_csv_cell,
    write_results,
)
from orbench_play.types import CellResult

LINE_BREAKERS = ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r", "\n", "\r\n"]


def _result(response: str, i: int = 0, **overrides) -> CellResult:
    fields: dict = {
        "split": "hard-1k",
        "row_id": f"hard-1k:{i}",
        "category": "privacy",
        "prompt": f"prompt {i}",
        "model": "m",
        "response": response,
        "verdict": "direct_answer",
        "verdict_source": "phrases",
    }
    return CellResult(**{**fields, **overrides})


@pytest.mark.parametrize(
    "char", LINE_BREAKERS, ids=[f"U+{ord(c[0]):04X}{'+LF' if len(c) > 1 else ''}" for c in LINE_BREAKERS]
)
def test_jsonl_written_by_run_reads_back_in_compare(tmp_path, char):
    texts = [f"a{char}b", f"{char}starts", f"ends{char}", char * 3]
    results = [_result(t, i, prompt=f"p{char}{i}") for i, t in enumerate(texts)]
    path = write_results(results, tmp_path / "r.jsonl")
    back = load_results(path)
    assert [r.response for r in back] == texts
    assert [r.prompt for r in back] == [r.prompt for r in results]
    # One record per line for *any* line splitter, not only ours.
    assert len(path.read_text(encoding="utf-8").splitlines()) == len(results)


def test_compare_reads_jsonl_with_raw_line_separators_as_older_versions_wrote(tmp_path):
    texts = ["one\u2028two", "three\u2029four\u0085five"]
    path = tmp_path / "old.jsonl"
    lines = (json.dumps(_result(t, i).to_row(), ensure_ascii=False) for i, t in enumerate(texts))
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    assert [r.response for r in load_results(path)] == texts


FORMULA_TEXTS = (
    [s + "1+1" for s in FORMULA_STARTERS]
    + ["'" + s + "1+1" for s in FORMULA_STARTERS]
    + ["''" + s + "x" for s in FORMULA_STARTERS]
    + ["'''=deep", "'plain", "'", "''", "plain", "", "don't", "'tis", "= spaced", "-"]
)


def test_the_escape_is_a_bijection():
    for text in FORMULA_TEXTS:
        escaped = neutralise_csv_cell(text)
        assert not escaped.startswith(FORMULA_STARTERS), repr(text)
        assert unneutralise_csv_cell(escaped) == text, repr(text)
    assert neutralise_csv_cell(7) == 7 and unneutralise_csv_cell(None) is None


def test_csv_round_trips_every_formula_starter_and_apostrophe(tmp_path):
    results = [_result(t, i, prompt=t, category=t[:12], error=t) for i, t in enumerate(FORMULA_TEXTS)]
    back = load_results(write_results(results, tmp_path / "r.csv"))
    for column in ("response", "prompt", "category", "error"):
        assert [getattr(r, column) for r in back] == [getattr(r, column) for r in results], column


def test_the_judge_reads_our_csv_and_writes_it_back_unchanged(tmp_path, capsys):
    source = tmp_path / "answers.csv"
    source.write_text(results_to_csv(_result(t, i, prompt=t) for i, t in enumerate(FORMULA_TEXTS)), encoding="utf-8")
    out = tmp_path / "judged.csv"
    code = cli.main(["judge", str(source), "--prompt-col", "prompt", "--response-col", "response", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    with out.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [unneutralise_csv_cell(r["response"]) for r in rows] == FORMULA_TEXTS
    assert [r["response"] for r in rows] == [neutralise_csv_cell(t) for t in FORMULA_TEXTS]


def test_the_eval_harness_reads_a_labelled_export_exactly(tmp_path):
    text = results_to_csv(_result(t, i) for i, t in enumerate(FORMULA_TEXTS))
    rows = list(csv.reader(io.StringIO(text)))
    rows[0].append("label")
    for row in rows[1:]:
        row.append("direct_answer")
    labelled = tmp_path / "labelled.csv"
    with labelled.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\r\n").writerows(rows)
    assert [r.response for r in evaluation.load_csv(labelled)] == FORMULA_TEXTS


CSV_FIELDS = [
    "",
    "plain",
    "a,b",
    'say "hi"',
    '"',
    '""',
    "line\nbreak",
    "cr\ronly",
    "crlf\r\nend",
    " spaced ",
    "tab\there",
    "nul\x00byte",
    "lone \udc80 surrogate",
    "\u2028 and \u0085",
    "'=1+1",
    'emoji 🙂, and a quote"',
    ",",
    "\n",
    "x" * 5000 + '",\n',
    3,
    0.5,
    True,
]


@pytest.mark.parametrize("first", range(len(CSV_FIELDS)))
def test_a_csv_record_is_what_the_csv_module_writes(first):
    """`csv_line` writes long answers without `csv.writer`'s character-by-character
    copy; every field kind must come out byte for byte as the module writes it."""
    from orbench_play.export import csv_line

    fields = [CSV_FIELDS[first], *CSV_FIELDS[first + 1 :], *CSV_FIELDS[:first]]
    for record in (fields, fields[:2], [fields[0], ""], ["", fields[0]]):
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\r\n").writerow(record)
        assert csv_line(record) == buffer.getvalue(), record
        assert next(csv.reader(io.StringIO(csv_line(record), newline=""))) == [str(f) for f in record]
