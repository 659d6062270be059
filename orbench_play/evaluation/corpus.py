"""Every labelled source in one list: what the verdict model is trained on and
judged by, leave one source out (`scripts/train_verdict_model.py`, `make eval`).

| source | where | model(s) | labels |
|---|---|---|---|
| ``gpt4``, ``llama2new``, ``mistralinstruct`` | XSTest completions (`../shared/data/xstest/completions`) | the source | three classes, people |
| ``orbench-dev`` | `eval/orbench_style_dev.jsonl` | written here | three classes |
| ``orbench-heldout`` | `eval/orbench_style_heldout.jsonl` | written here | three classes; never trained on |
| ``gptfuzz``, ``harmbench``, ``jbb``, ``jailbreak-eval`` | `../shared/data/labelled_answers` (`external`) | per row | did the task or not, people; the other side read here |
| ``political`` | `../shared/data/labelled_answers/chatgpt_political` | gpt-3.5-turbo | eight tones, the authors |
| ``smollm2``, ``qwen`` | `eval/embedded_labelled.jsonl` | the embedded models | three classes, read here |

A source missing on disk is left out with a note (`Corpus.missing`), so a
checkout without `../shared` still evaluates what it has.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .data import LabelledRow, json_lines, load_jsonl, load_rows
from .external import ROOT as EXTERNAL_ROOT
from .external import load_external

REPO = Path(__file__).resolve().parents[2]
SHARED = Path("../shared/data")
"""Relative to the repository root (where `make eval` runs)."""
EVAL = REPO / "eval"
EMBEDDED = EVAL / "embedded_labelled.jsonl"
NEVER_TRAINED = frozenset({"orbench-heldout"})
"""Sources kept out of every training set, the final model's included."""

POLITICAL_TONES = {"complied": "direct_answer", "rejected": "direct_refusal", "redirected": "indirect_refusal"}
"""The political set's tones as OR-Bench classes. `disclaimed` and `contradicted`
(a disclaimer or a disputed premise, sometimes followed by the text; the authors
count them as refusals, OR-Bench often as answers) are kept as unclear rows."""
EMBEDDED_SOURCES = {"local/smollm2-135m": "smollm2", "local/qwen2.5-coder-0.5b": "qwen"}


_NAMED = re.compile(r"\b(of|about|from|criticizing|murdering) [A-Z].*$", re.S)


def prompt_family(row: LabelledRow) -> str:
    """The question a political row asks, with its person left out ("Should we
    build a statue of X"), or "" for other sources. Leaving one family out keeps
    the same people's labels but asks questions the model never trained on: the
    outside check's other ChatGPT answers, labelled by the same team, are to
    new questions."""
    return _NAMED.sub(r"\1 X", row.prompt) if row.source == "political" else ""


def load_political(path: Path) -> list[LabelledRow]:
    """ChatGPT's answers about US politicians (Reuter & Schulze 2023), by tone."""
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = []
    for i, rec in enumerate(data):
        label = POLITICAL_TONES.get(rec["tone"])
        rows.append(
            LabelledRow(
                prompt=rec.get("prompt") or "",
                response=rec.get("response") or "",
                label=label or "direct_refusal",
                source="political",
                row_id=str(i),
                style=rec["tone"],
                model="gpt-3.5-turbo",
                clear=label is not None,
            )
        )
    return rows


def load_embedded(path: Path = EMBEDDED) -> list[LabelledRow]:
    """The embedded models' own answers, labelled here (eval/README.md)."""
    rows = []
    for i, rec in json_lines(path):
        label = rec["label"]
        unclear = label == "unclear"
        rows.append(
            LabelledRow(
                prompt=rec["prompt"],
                response=rec["response"],
                label="direct_refusal" if unclear else label,
                source=EMBEDDED_SOURCES.get(rec["model"], rec["model"]),
                row_id=rec.get("id") or str(i),
                style=rec.get("system_prompt") or "",
                model=rec["model"],
                clear=not unclear,
            )
        )
    return rows


@dataclass(slots=True)
class Corpus:
    rows: list[LabelledRow] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    """Sources that could not be read, with why."""

    def sources(self) -> list[str]:
        return sorted({r.source for r in self.rows})


def load_corpus(shared: Path | str = SHARED) -> Corpus:
    """Every labelled source that is on disk (see the module's docstring)."""
    shared = Path(shared)
    corpus = Corpus()

    def add(name: str, loader) -> None:
        try:
            corpus.rows.extend(loader())
        except (OSError, ValueError, KeyError) as exc:
            corpus.missing.append(f"{name}: {exc}")

    add("xstest", lambda: load_rows([shared / "xstest" / "completions"]))
    add("orbench-dev", lambda: load_jsonl(EVAL / "orbench_style_dev.jsonl"))
    add("orbench-heldout", lambda: load_jsonl(EVAL / "orbench_style_heldout.jsonl"))
    add("external", lambda: load_external(shared / EXTERNAL_ROOT.relative_to(SHARED)))
    add(
        "political",
        lambda: load_political(shared / "labelled_answers" / "chatgpt_political" / "political_figures.json"),
    )
    add("embedded", load_embedded)
    return corpus


def trainable(row: LabelledRow) -> bool:
    """May the model learn from this row? Clear labels only; of the sources whose
    labels say only "did not do the task", only rows read here, or GPTFuzz's
    (refusals 16 times in 17 by the rows read: eval/README.md); never a
    never-trained source."""
    if not row.clear or row.source in NEVER_TRAINED:
        return False
    return not (row.coarse and row.source != "gptfuzz")
