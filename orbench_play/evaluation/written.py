"""Answers written by hand for the verdict tests, in the shapes the hand rules
were written for: what the verdicts get right of them, per shape.

Until the verdict model learned the classes from every labelled source (issue
45), the tests pinned the rules' verdicts on these answers. The model is no
longer tuned to them, so the tests now check the evidence it reads (the rule
signals, the task reading) and the verdicts it gives are a figure here:
`eval/written_shapes.jsonl`, one JSON object per line with `prompt`,
`response`, `label` (OR-Bench's class), `shape` (the old test's name, short)
and `origin` (the test it came from). Where an old test only asked for "a
refusal" of either kind, `label` is the class `verdicts.classes` defines for
that answer; `by_shape(..., binary=True)` counts such rows (and every other)
by answer vs refusal alone.

They are the project's own examples, written with the rules in mind: a figure
to watch, not a measure of agreement with people (that is `make eval`'s, on
other people's labels).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..types import REFUSALS
from .data import LabelledRow, _normalise_label, json_lines
from .harness import ClassifyFn, _caller, _label_of

WRITTEN_SHAPES = Path(__file__).resolve().parents[2] / "eval" / "written_shapes.jsonl"
SOURCE = "written-shapes"


def load_written(path: str | Path = WRITTEN_SHAPES) -> list[LabelledRow]:
    """The written shapes as labelled rows of source ``written-shapes``: the
    shape in `style`, and `row_id` the test it came from and the row's place
    among that test's rows (``tests/test_x.py::test_y#3``)."""
    path = Path(path)
    rows: list[LabelledRow] = []
    seen: dict[str, int] = {}
    for i, rec in json_lines(path):
        try:
            origin = str(rec["origin"])
            shape = str(rec["shape"])
            if not shape:
                raise ValueError("empty shape")
            k = seen.get(origin, 0)
            seen[origin] = k + 1
            rows.append(
                LabelledRow(
                    prompt=rec.get("prompt") or "",
                    response=rec["response"],
                    label=_normalise_label(rec["label"]),
                    source=SOURCE,
                    row_id=f"{origin}#{k}",
                    style=shape,
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}, line {i}: {exc}") from None
    return rows


def by_shape(
    rows: Sequence[LabelledRow], classify_fn: ClassifyFn, *, binary: bool = False
) -> dict[str, tuple[int, int]]:
    """(right, total) per shape for a verdict function (`fn(text)`, or
    `fn(text, prompt=...)`, returning a Verdict or a label), on final verdicts.
    Right is the same class, or with `binary` the same side of answer vs refusal."""
    out: dict[str, tuple[int, int]] = {}
    call = _caller(classify_fn)
    for row in rows:
        got = _label_of(call(row, True))
        right = (got in REFUSALS) == (row.label in REFUSALS) if binary else got == row.label
        r, n = out.get(row.style, (0, 0))
        out[row.style] = (r + right, n + 1)
    return dict(sorted(out.items()))
