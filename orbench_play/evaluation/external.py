"""Human-labelled answers from other projects: other models, prompts and annotators.

Read from ``../shared/data/labelled_answers/`` (never copied into the project):
four public sets whose labels say whether an answer **did the requested task**
(a jailbreak "succeeded", the answer was "informative"), not whether it refused.
Their *answered* side maps cleanly to ``direct_answer``; the other side is
mostly refusals, but also holds off-target and degenerate answers, so it only
says "not an answer" (`LabelledRow.coarse`): binary figures use it, 3-class
figures do not.

| source | file | model | label | clear when |
|---|---|---|---|---|
| ``gptfuzz`` | ``gptfuzz/{train,evaluate}.csv`` | gpt-3.5-turbo (ChatGPT) | ``label`` 1 | one label per answer (the authors') |
| ``harmbench`` | ``harmbench_val/text_behaviors_val_set.json`` | ``model`` (``experiment`` when empty) | majority of ``human_0..2`` | the three votes agree |
| ``jbb`` | ``jbb_judge_comparison/judge-comparison.csv`` (Mac-Roman) | not recorded | ``human_majority`` | the three votes agree |
| ``jailbreak-eval`` | ``jailbreak_eval_manual/manual_data.csv`` | Llama-2-7b-chat (0), gpt-3.5-turbo (1) | ``manual_informativeness_label`` | the safeguard-violation label says the same |

Their "not an answer" side is read again here, answer by answer, in OR-Bench's
terms (`eval/external_labels.jsonl`, labels only, keyed by source and row:
`read_labels`): a refusal, an indirect refusal (another, safer task done
instead, resources, a professional), an attempt at the task that people called
harmless (an OR-Bench answer), or unclear (echoes, gibberish, questions back).
Rows read so carry that class and are no longer coarse; unclear ones are not
`clear`. The file says who read them and when; see eval/README.md.

The verdict model trains on all of them and is judged leave one source out
(`corpus`, `loso`): a source's figures come from heads that never saw it.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from .data import CLASSES, LabelledRow, json_lines

ROOT = Path("../shared/data/labelled_answers")
"""Relative to the repository root (where `make eval` runs)."""
LABELS = Path(__file__).resolve().parents[2] / "eval" / "external_labels.jsonl"
"""OR-Bench classes for rows of the "not an answer" side, read here (no answer text)."""
UNCLEAR = "unclear"

SOURCES: tuple[str, ...] = ("gptfuzz", "harmbench", "jbb", "jailbreak-eval")

_ANSWER = "direct_answer"
_NOT_ANSWER = "direct_refusal"
"""The label a coarse "did not do the task" row carries; only its binary side counts."""


def _row(prompt: str, response: str, answered: bool, source: str, row_id: str, model: str, clear: bool) -> LabelledRow:
    return LabelledRow(
        prompt=prompt,
        response=response,
        label=_ANSWER if answered else _NOT_ANSWER,
        source=source,
        row_id=row_id,
        model=model,
        coarse=not answered,
        clear=clear,
    )


def load_gptfuzz(folder: Path) -> list[LabelledRow]:
    questions = {
        rec["index"]: rec["text"]
        for rec in csv.DictReader((folder / "question_list.csv").open(newline="", encoding="utf-8"))
    }
    rows = []
    for part in ("train", "evaluate"):
        with (folder / f"{part}.csv").open(newline="", encoding="utf-8") as fh:
            for i, rec in enumerate(csv.DictReader(fh)):
                rows.append(
                    _row(
                        questions.get(rec["question"], ""),
                        rec["Response"],
                        rec["label"].strip() == "1",
                        "gptfuzz",
                        f"{part}:{i}",
                        "gpt-3.5-turbo",
                        True,
                    )
                )
    return rows


def load_harmbench(path: Path) -> list[LabelledRow]:
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = []
    for behaviour in sorted(data):
        for i, rec in enumerate(data[behaviour]):
            votes = [int(rec[f"human_{k}"]) for k in range(3)]
            model = (rec.get("model") or "").removesuffix(".json") or rec.get("experiment") or "unknown"
            rows.append(
                _row(
                    rec.get("test_case") or "",
                    rec.get("generation") or "",
                    sum(votes) >= 2,
                    "harmbench",
                    f"{behaviour}:{i}",
                    model,
                    len(set(votes)) == 1,
                )
            )
    return rows


def load_jbb(path: Path) -> list[LabelledRow]:
    rows = []
    with path.open(newline="", encoding="mac_roman") as fh:
        for rec in csv.DictReader(fh):
            votes = {rec["human1"], rec["human2"], rec["human3"]}
            rows.append(
                _row(
                    rec["prompt"],
                    rec["target_response"],
                    rec["human_majority"].strip() == "1",
                    "jbb",
                    rec["Index"],
                    "unknown",
                    len(votes) == 1,
                )
            )
    return rows


_JEM_MODELS = {"0": "llama-2-7b-chat", "1": "gpt-3.5-turbo"}


def load_jailbreak_eval(path: Path) -> list[LabelledRow]:
    rows = []
    with path.open(newline="", encoding="utf-8") as fh:
        for rec in csv.DictReader(fh):
            informative = rec["manual_informativeness_label"].strip() == "True"
            violates = rec["manual_safeguard_violation_label"].strip() == "True"
            rows.append(
                _row(
                    rec["prompt"],
                    rec["response"],
                    informative,
                    "jailbreak-eval",
                    rec["_id"],
                    _JEM_MODELS.get(rec["model_id"], rec["model_id"]),
                    informative == violates,
                )
            )
    return rows


def read_labels(path: Path | str = LABELS) -> dict[tuple[str, str], str]:
    """{(source, row_id): OR-Bench class or "unclear"} from a labels file (empty when absent)."""
    path = Path(path)
    if not path.is_file():
        return {}
    out: dict[tuple[str, str], str] = {}
    for i, rec in json_lines(path):
        label = rec["label"]
        if label not in (*CLASSES, UNCLEAR):
            raise ValueError(f"{path}, line {i}: unknown label {label!r}")
        out[(rec["source"], rec["row_id"])] = label
    return out


def apply_labels(rows: Iterable[LabelledRow], labels: Mapping[tuple[str, str], str]) -> list[LabelledRow]:
    """Rows of the "not an answer" side that were read get their OR-Bench class
    (an unclear one stays coarse and is no longer `clear`); the rest are unchanged."""
    out = []
    for row in rows:
        read = labels.get((row.source, row.row_id)) if row.coarse else None
        if read == UNCLEAR:
            row = replace(row, clear=False, style="unclear")
        elif read is not None:
            row = replace(row, label=read, coarse=False, style="read")
        out.append(row)
    return out


def load_external(
    root: Path | str = ROOT, sources: Iterable[str] = SOURCES, labels: Path | str | None = LABELS
) -> list[LabelledRow]:
    """Every row of the sources asked for (all four by default), in a fixed
    order, with the classes read here applied (`labels=None` leaves them out)."""
    root = Path(root)
    loaders = {
        "gptfuzz": lambda: load_gptfuzz(root / "gptfuzz"),
        "harmbench": lambda: load_harmbench(root / "harmbench_val" / "text_behaviors_val_set.json"),
        "jbb": lambda: load_jbb(root / "jbb_judge_comparison" / "judge-comparison.csv"),
        "jailbreak-eval": lambda: load_jailbreak_eval(root / "jailbreak_eval_manual" / "manual_data.csv"),
    }
    rows: list[LabelledRow] = []
    for name in sources:
        if name not in loaders:
            raise ValueError(f"unknown source {name!r}; choose from {', '.join(SOURCES)}")
        rows.extend(loaders[name]())
    return apply_labels(rows, read_labels(labels)) if labels is not None else rows
