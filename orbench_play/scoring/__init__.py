"""Scores and their statistics: refusal rates with intervals, verdict stability over
repeats, and disagreement-first sampling.

Modules: `rates` (rates per split, Wilson intervals, the MOVER interval of the
mini-score, per-category tables, relent rates, what settling saved, the paper's reference
points), `sureness` (every verdict's probability of a refusal and whether it is sure, in
one place), `error_aware` (rates that count verdict error as well as sampling
error, corrected by a person's reviews), `review_policy` (which answers a person
should look at, drawn with known probabilities), `stability` (repeats:
refusals per cell and the flip rate per variant), `focus` (the prompts models
disagree on, first). `from orbench_play.scoring import score_results` (and
`rates`' other public names) is how the rest of the code uses it; the other
modules are imported as modules.

May import: `types`, `data`, `asking` (variant names), `verdicts` (a judge's
declared accuracy; the verdict model's transfer term). Pure functions over `CellResult`s: never a model
call, the engine, the UI or the CLI.
"""

from .rates import (
    BENIGN_PREFERENCE,
    PAPER_COLUMNS,
    RATE_SPLITS,
    REAL_VERDICTS,
    Z95,
    ModelScore,
    Rate,
    RateLike,
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
    "RateLike",
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
