"""How often do our verdicts agree with people? The verdict evaluation.

Modules: `data` reads labelled answers (XSTest CSV, generic CSV, the
OR-Bench-style JSONL sets in `eval/`); `harness` runs any verdict function
over them (metrics, per-source breakdown, leave-one-model-out); `settling`
replays answers word by word and stops them where their verdict settles; `suite` is
what `make eval` runs (every figure beside its target). `python -m
orbench_play.evaluation` (or `main()`) runs the suite.

May import: `types`, `export`, `verdicts` (the layers below). Nothing here
makes a model call.
"""

from .data import CLASSES, XSTEST_LABELS, LabelledRow, load_csv, load_jsonl, load_rows
from .harness import (
    PREFIX_CHARS,
    ClassifyFn,
    EvalReport,
    FitFn,
    LomoReport,
    Metrics,
    compute_metrics,
    evaluate,
    format_report,
    lomo_report,
)
from .suite import main

__all__ = [
    "CLASSES",
    "PREFIX_CHARS",
    "XSTEST_LABELS",
    "ClassifyFn",
    "EvalReport",
    "FitFn",
    "LabelledRow",
    "LomoReport",
    "Metrics",
    "compute_metrics",
    "evaluate",
    "format_report",
    "load_csv",
    "load_jsonl",
    "load_rows",
    "lomo_report",
    "main",
]
