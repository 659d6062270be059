"""Run-vs-run comparison: which prompts one variant refused and the other
answered, how each rate changed, and whether that is more than noise.

A *variant* is a model under one setting (`prompts.variant_name`): "bot" and
"bot · safety" are two variants of one model. Compare two variants of one
session, or two result files (CSV/JSONL written by `export.py`).

Pairing. The unit is the prompt (`row_id`), not the answer: repeats of one
prompt are not independent trials, so each variant's verdict on a prompt is the
strict majority of its counted answers (refusal vs answer; errors ignored). A
prompt is *paired* when both variants have at least one counted answer. Prompts
whose majority is an exact tie (e.g. 1 refusal of 2) are left out of the test
and counted as `ties`; the rates, as on the scoreboard, are computed over all
answers (every repeat a trial) on the paired prompts.

The test. McNemar's test on the discordant pairs: `b` prompts refused by A
only, `c` refused by B only. Under "no difference" each discordant prompt is
a fair coin, so for b + c < 25 the two-sided exact binomial p-value is used,
otherwise the chi-square statistic with continuity correction,
(|b − c| − 1)² / (b + c) on 1 degree of freedom. Each split with a rate of
its own is tested separately: hard-1k and 80k (over-refusal, kept apart as on
the scoreboard) and toxic, and each prompt set's rates (`scoring.custom_rate_key`:
per set and expected behaviour). `math` only: no scipy at runtime.

Modules: `stats` (pairing, the test, the sentences), `files` (reading results
files back), `report` (tables, terminal rendering); the `compare` command is
`cli.compare`. This package exposes their public names.

May import: `types`, `export`, `asking`, `scoring` (the layers below). No model calls: it reads results.
"""

from .files import load_results
from .report import (
    FRAME_COLUMNS,
    comparison_frame,
    comparison_from_files,
    print_comparison,
    summary_frame,
)
from .stats import (
    ALPHA,
    EXACT_BELOW,
    CompareError,
    Comparison,
    KindComparison,
    PairRow,
    compare,
    compare_variants,
    fmt_p,
    mcnemar,
    select,
    variants,
)

__all__ = [
    "ALPHA",
    "EXACT_BELOW",
    "FRAME_COLUMNS",
    "CompareError",
    "Comparison",
    "KindComparison",
    "PairRow",
    "compare",
    "compare_variants",
    "comparison_frame",
    "comparison_from_files",
    "fmt_p",
    "load_results",
    "mcnemar",
    "print_comparison",
    "select",
    "summary_frame",
    "variants",
]
