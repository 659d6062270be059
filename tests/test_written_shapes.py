"""`eval/written_shapes.jsonl`: the verdicts the rule tests used to pin, kept
as a figure (`evaluation.written`) now that the model decides (issue 45)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from orbench_play.evaluation.data import LabelledRow
from orbench_play.evaluation.written import SOURCE, WRITTEN_SHAPES, by_shape, load_written
from orbench_play.types import CLASS_LABELS, Verdict

FIELDS = {"prompt", "response", "label", "shape", "origin"}


def test_the_written_shapes_load_with_valid_labels():
    lines = [json.loads(line) for line in WRITTEN_SHAPES.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(lines) >= 250
    assert all(set(rec) == FIELDS for rec in lines), [sorted(rec) for rec in lines if set(rec) != FIELDS][:3]
    assert {rec["label"] for rec in lines} == set(CLASS_LABELS)
    assert all(rec["origin"].startswith("tests/test_") and "::test_" in rec["origin"] for rec in lines)
    assert all(rec["shape"] and rec["response"].strip() for rec in lines)
    rows = load_written()
    assert len(rows) == len(lines)
    assert {row.source for row in rows} == {SOURCE} and all(row.label in CLASS_LABELS for row in rows)
    assert [row.style for row in rows] == [rec["shape"] for rec in lines]
    assert len({row.row_id for row in rows}) == len(rows)
    # a case several old tests had carries the same label in each
    labels: dict[tuple[str, str], set[str]] = {}
    for row in rows:
        labels.setdefault((row.prompt, row.response), set()).add(row.label)
    assert all(len(v) == 1 for v in labels.values())


def _write(path, records) -> None:
    path.write_text("".join(json.dumps(rec) + "\n" for rec in records), encoding="utf-8")


def test_a_malformed_row_is_named_by_its_line(tmp_path):
    good = {"prompt": "p", "response": "r", "label": "direct_answer", "shape": "s", "origin": "tests/test_x.py::test_y"}
    for bad in ({**good, "label": "maybe"}, {k: v for k, v in good.items() if k != "origin"}, {**good, "shape": ""}):
        path = tmp_path / "w.jsonl"
        _write(path, [good, bad])
        with pytest.raises(ValueError, match="line 2"):
            load_written(path)


def test_the_figure_counts_right_and_total_per_shape(tmp_path):
    origin = "tests/test_x.py::test_y"
    records = [
        {"prompt": "q1", "response": "refuse", "label": "direct_refusal", "shape": "a", "origin": origin},
        {"prompt": "q2", "response": "indirect", "label": "direct_refusal", "shape": "a", "origin": origin},
        {"prompt": "q3", "response": "answer", "label": "direct_refusal", "shape": "a", "origin": origin},
        {"prompt": "q4", "response": "answer", "label": "direct_answer", "shape": "b", "origin": origin},
        {"prompt": "hint", "response": "refuse", "label": "indirect_refusal", "shape": "b", "origin": "o2"},
    ]
    path = tmp_path / "w.jsonl"
    _write(path, records)
    rows = load_written(path)
    assert [r.row_id for r in rows] == [f"{origin}#0", f"{origin}#1", f"{origin}#2", f"{origin}#3", "o2#0"]
    labels = {"refuse": "direct_refusal", "indirect": "indirect_refusal", "answer": "direct_answer"}

    def fake(text):
        return labels[text]

    assert by_shape(rows, fake) == {"a": (1, 3), "b": (1, 2)}
    assert by_shape(rows, fake, binary=True) == {"a": (2, 3), "b": (2, 2)}
    # a verdict function that reads the prompt too, and returns Verdicts
    seen = Counter()

    def with_prompt(text, prompt=""):
        seen[prompt] += 1
        return Verdict("indirect_refusal" if prompt == "hint" else labels[text], "classifier")

    assert by_shape(rows, with_prompt) == {"a": (1, 3), "b": (2, 2)}
    assert set(seen) == {"q1", "q2", "q3", "q4", "hint"}
    assert by_shape([], fake) == {}
    assert by_shape([LabelledRow("p", "answer", "direct_answer", SOURCE, style="c")], fake) == {"c": (1, 1)}
