"""Refusal verdicts in layers: provider signal, then offline classifier, then an
optional LLM judge.

Pure functions only: nothing here does I/O except reading the small learned
model shipped in ``assets/verdict_model.json`` (once, lazily). The engine feeds
streamed text in and calls the judge model itself, using `judge_messages` and
`parse_judge`.

Offline layers and their ``Verdict.source``:
- ``provider``: the provider filtered the answer or sent nothing.
- ``classifier``: the learned model decided (word n-grams of the opening, the
  phrase rules' signals and the task reading as features). This is what
  `classify` uses.
- ``phrases``: the hand-written rule layer (`classify_rules`); `classify` uses
  it when the model file is missing or unreadable, and for an answer that is
  one bare refusal sentence (without running the model).

Modules, one job each: `text` (normalised opening, tokens), `rules` (phrase
signals, the rule layer, XSTest's reference match), `learned` (the linear
model), `deflection` (short answers that only frame and point elsewhere),
`evidence` (what the model reads), `offline` (the layers put together),
`live` (provisional verdicts while streaming), `indirect` (today's declines and
redirects; the direct/indirect split), `task` (the answer's shape against the
prompt's request, and the few words a tooltip shows), `classes` (OR-Bench's three classes, the
one definition shared by rules, judges and docs), `judge` (LLM judge prompts and
parsers), `presets` (the judge choices: keyword, the paper presets, any model).
Cheap to import: the standard library only, no scikit-learn at runtime.

May import: `types` only. The LLM judge *call* is the engine's
(`engine.judging`): a model call like any other.
"""

from __future__ import annotations

from .classes import CLASSES, LABELS, ResponseClass, classes_markdown, classes_plain
from .deflection import DEFLECT_MAX_CHARS, DEFLECT_MAX_SENTENCES, deflection
from .indirect import offers_alternative, refusal_kind
from .judge import (
    DEFAULT_JUDGE,
    JUDGE_MAX_ANSWER_CHARS,
    JUDGE_MAX_PROMPT_CHARS,
    JUDGE_PARAMS,
    JUDGE_SYSTEM,
    JUDGE_VERSION,
    PAPER_JUDGE,
    PAPER_JUDGE_PARAMS,
    PAPER_JUDGE_VERSION,
    JudgePrompt,
    judge_cache_key,
    judge_messages,
    judge_verdict,
    paper_judge_messages,
    parse_judge,
    parse_paper_judge,
)
from .learned import MODEL_RESOURCE, Calibration, Head, VerdictModel, features, load_model
from .live import LIVE_FIRST, LIVE_STABLE, LIVE_STEP, LiveVerdict
from .offline import BARE_REFUSAL_MAX, classify, p_refusal_of, provider_verdict
from .rules import baseline_start_match, classify_rules, rule_signals
from .task import Ask, Reading, ask_of, explain, read
from .text import HEAD_CHARS, MAX_TOKENS, normalise

__all__ = [
    "BARE_REFUSAL_MAX",
    "CLASSES",
    "DEFAULT_JUDGE",
    "DEFLECT_MAX_CHARS",
    "DEFLECT_MAX_SENTENCES",
    "HEAD_CHARS",
    "JUDGE_MAX_ANSWER_CHARS",
    "JUDGE_MAX_PROMPT_CHARS",
    "JUDGE_PARAMS",
    "JUDGE_SYSTEM",
    "JUDGE_VERSION",
    "LABELS",
    "LIVE_FIRST",
    "LIVE_STABLE",
    "LIVE_STEP",
    "MAX_TOKENS",
    "MODEL_RESOURCE",
    "PAPER_JUDGE",
    "PAPER_JUDGE_PARAMS",
    "PAPER_JUDGE_VERSION",
    "Ask",
    "Calibration",
    "Head",
    "JudgePrompt",
    "LiveVerdict",
    "Reading",
    "ResponseClass",
    "VerdictModel",
    "ask_of",
    "baseline_start_match",
    "classes_markdown",
    "classes_plain",
    "classify",
    "classify_rules",
    "deflection",
    "explain",
    "features",
    "judge_cache_key",
    "judge_messages",
    "judge_verdict",
    "load_model",
    "normalise",
    "offers_alternative",
    "p_refusal_of",
    "paper_judge_messages",
    "parse_judge",
    "parse_paper_judge",
    "provider_verdict",
    "read",
    "refusal_kind",
    "rule_signals",
]
