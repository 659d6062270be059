"""Scores and their statistics: refusal rates with intervals, verdict stability over
repeats, and disagreement-first sampling.

Modules: `rates` (rates per split, Wilson intervals, the MOVER interval of the
mini-score, per-category tables, relent rates, what settling saved, the paper's reference points),
`stability` (repeats: refusals per cell and the flip rate per variant), `focus`
(the prompts models disagree on, first). `from orbench_play.scoring import
score_results` (and `rates`' other public names) is how the rest of the code uses
it; `stability` and `focus` are imported as modules.

May import: `types`, `data`, `asking` (variant names). Pure functions over
`CellResult`s: never a model call, the engine, the UI or the CLI.
"""

from .rates import (
    BENIGN_PREFERENCE,
    PAPER_COLUMNS,
    RATE_SPLITS,
    REAL_VERDICTS,
    Z95,
    ModelScore,
    Rate,
    SettleSavings,
    category_frame,
    counts,
    custom_rate_key,
    custom_rate_label,
    kind_of,
    load_paper_results,
    mini_score,
    rate_split,
    relent_tallies,
    score_results,
    scoreboard_frame,
    settle_savings,
    wilson,
)

__all__ = [
    "BENIGN_PREFERENCE",
    "PAPER_COLUMNS",
    "RATE_SPLITS",
    "REAL_VERDICTS",
    "Z95",
    "ModelScore",
    "Rate",
    "SettleSavings",
    "category_frame",
    "counts",
    "custom_rate_key",
    "custom_rate_label",
    "kind_of",
    "load_paper_results",
    "mini_score",
    "rate_split",
    "relent_tallies",
    "score_results",
    "scoreboard_frame",
    "settle_savings",
    "wilson",
]
