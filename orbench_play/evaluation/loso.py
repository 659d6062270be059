"""Leave one out: every labelled row's verdict from a model that never saw its
source, and, for models with rows in several places, one that never saw its model.

This is how the outside check will meet the classifier (answers of models
nobody here has seen, labelled by people elsewhere), so every figure of
`make eval` that says how good the verdicts are is read from these verdicts,
never from the shipped model's own, which has seen every trainable row.
The heads are fitted by the training script (`scripts/train_verdict_model.py`,
a source checkout with the dev extras), with the shipped calibration.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ..types import Verdict
from .corpus import prompt_family
from .data import LabelledRow

REPO = Path(__file__).resolve().parents[2]
MIN_MODEL_ROWS = 30
"""A model gets a fold of its own (and a figure held to the target) with at least this many clear rows."""


def model_of(row: LabelledRow) -> str:
    return row.model or row.source


def load_trainer(settings: dict | None = None) -> Callable[[Sequence[LabelledRow]], Any]:
    """The training script's `Trainer` (a source checkout with the dev extras)."""
    module = training_script()
    return lambda rows: module.Trainer(rows, settings)


def training_script() -> ModuleType:
    """`scripts/train_verdict_model.py` as a module: a script, not a package member."""
    script = REPO / "scripts" / "train_verdict_model.py"
    if not script.is_file():
        raise RuntimeError(f"leave-one-out figures need the training script at {script} (a source checkout)")
    spec = importlib.util.spec_from_file_location("_train_verdict_model", script)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {script}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:  # scikit-learn and scipy are dev dependencies
        raise RuntimeError(f"leave-one-out figures need the dev extras (scikit-learn, scipy): {exc}") from exc
    return module


@dataclass(slots=True)
class LeftOut:
    """Out-of-fold verdicts, in the order of `rows`."""

    rows: list[LabelledRow]
    by_source: list[Verdict]
    """Each row's verdict from heads fitted without its source."""
    by_model: dict[int, Verdict] = field(default_factory=dict)
    """Row index -> verdict from heads fitted without its model, for models with a fold of their own."""
    model_folds: list[str] = field(default_factory=list)
    by_family: dict[int, Verdict] = field(default_factory=dict)
    """Row index -> verdict from heads fitted without its prompt family (`corpus.prompt_family`)
    but with the rest of its source: the same labellers, questions never trained on."""

    def for_model(self, i: int) -> Verdict:
        """The verdict a row's per-model figure counts: without its model where it has a
        fold, else without its source."""
        return self.by_model.get(i, self.by_source[i])


def model_folds(rows: Sequence[LabelledRow]) -> list[str]:
    """Models with MIN_MODEL_ROWS clear rows whose rows are not one source exactly
    (a source's fold already leaves such a model out)."""
    clear = Counter(model_of(r) for r in rows if r.clear)
    sources_of: dict[str, set[str]] = {}
    for r in rows:
        sources_of.setdefault(model_of(r), set()).add(r.source)
    out = []
    for model, n in sorted(clear.items()):
        if n < MIN_MODEL_ROWS:
            continue
        srcs = sources_of[model]
        whole = len(srcs) == 1 and all(model_of(r) == model for r in rows if r.source in srcs)
        if not whole:
            out.append(model)
    return out


def leave_one_out(
    rows: Sequence[LabelledRow],
    make_trainer: Callable[[Sequence[LabelledRow]], Any] | None = None,
    progress: Callable[[str], None] | None = None,
    classify: Callable[..., Verdict] | None = None,
) -> LeftOut:
    """Fit without each source, then without each model of `model_folds`, then
    without each prompt family of a source (`corpus.prompt_family`), and classify
    the rows left out with `verdicts.classify` and the fold's model."""
    from .. import verdicts

    rows = list(rows)
    classify = classify or verdicts.classify
    trainer = (make_trainer or load_trainer())(rows)

    def fold(step: str, left_out: Callable[[LabelledRow], bool]) -> dict[int, Verdict]:
        """Heads fitted without the rows `left_out` picks, and those rows' verdicts."""
        if progress:
            progress(step)
        model = trainer.model_without(left_out)
        return {i: classify(r.response, prompt=r.prompt, model=model) for i, r in enumerate(rows) if left_out(r)}

    by_source: dict[int, Verdict] = {}
    for source in sorted({r.source for r in rows}):
        by_source.update(fold(f"without source {source}", _having(_source_of, source)))
    if len(by_source) != len(rows):
        raise RuntimeError("a row was left without an out-of-fold verdict")
    left = LeftOut(rows, [by_source[i] for i in range(len(rows))])
    for name in model_folds(rows):
        left.by_model.update(fold(f"without model {name}", _having(model_of, name)))
        left.model_folds.append(name)
    for family in sorted({family for r in rows if (family := prompt_family(r))}):
        step = f"without the question family {family!r}"
        left.by_family.update(fold(step, _having(prompt_family, family)))
    return left


def _source_of(row: LabelledRow) -> str:
    return row.source


def _having(key: Callable[[LabelledRow], str], value: str) -> Callable[[LabelledRow], bool]:
    """The rows whose `key` is `value`: one fold's rows."""
    return lambda row: key(row) == value


def print_progress(step: str) -> None:
    print(f"leave one out: fitting {step}…", file=sys.stderr, flush=True)
