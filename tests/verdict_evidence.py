"""What the verdict model reads of an answer, as `verdicts.classify` reads it,
for the tests that check the evidence rather than the verdict (issue 45).

The hand rules no longer decide: each is a feature of the learned model (the
rule signals ``r:``, the cheap readings ``x:``, the task reading ``t:``), so a
test of a rule checks that the feature fires on its shape and not on its twin.
The verdicts those tests used to pin are a figure of `eval/written_shapes.jsonl`
(`orbench_play.evaluation.written`); `in_written_shapes` checks that a test's
cases are there, with the label the old test expected.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from orbench_play.evaluation.written import load_written
from orbench_play.types import REFUSALS
from orbench_play.verdicts import VerdictModel, evidence, task
from orbench_play.verdicts.learned import opening_features
from orbench_play.verdicts.text import as_read, straight_quotes, without_unfinished_closing


def as_classified(answer: str, prompt: str = "", *, final: bool = True) -> tuple[str, str]:
    """The text and prompt `classify` reads: typography and layout undone, a
    dictated opening taken off, an unfinished closing left out of a prefix."""
    text, prompt = as_read(answer, final=final), straight_quotes(prompt)
    if prompt:
        text = task.without_dictated_opening(text, prompt)
    if not final:
        text = without_unfinished_closing(text)
    return text, prompt


def evidence_of(answer: str, prompt: str = "", *, final: bool = True) -> evidence.AnswerFeatures:
    """Everything the model may read of `answer` to `prompt` (`evidence.answer_features`)."""
    text, prompt = as_classified(answer, prompt, final=final)
    return evidence.answer_features(text, prompt, final=final)


def features_of(answer: str, prompt: str = "", *, final: bool = True) -> set[str]:
    """The weight-one features (``r:``, ``x:``, ``t:``, first words, length) of an answer."""
    return set(evidence_of(answer, prompt, final=final).fixed)


def reading_of(answer: str, prompt: str = "") -> task.Reading:
    """The task reading of an answer, as the full read makes it."""
    text, prompt = as_classified(answer, prompt)
    return task.read(text, prompt)


def model_p(answer: str, prompt: str, model: VerdictModel, *, final: bool = True) -> tuple[float, float]:
    """(quick, full) calibrated P(refusal) of `model` for an answer, computed as
    `classify` computes them, but for any answer (the bare-refusal path aside)."""
    text, prompt = as_classified(answer, prompt, final=final)
    grams, fixed, head = opening_features(text)
    fixed += evidence.cheap_readings(text, prompt, fixed, grams, head, final=final)
    quick = model.quick_calibration(model.quick.decision(grams, fixed))
    shape = evidence.shape_readings(text, evidence.read_of(text, prompt))
    full = model.full_calibration(model.full.decision(grams, fixed + shape))
    return quick, full


@lru_cache(maxsize=1)
def _written() -> dict[tuple[str, str], set[str]]:
    out: dict[tuple[str, str], set[str]] = {}
    for row in load_written():
        out.setdefault((row.prompt, row.response), set()).add(row.label)
    return out


def in_written_shapes(cases: Iterable[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The (prompt, answer, expected) cases missing from `eval/written_shapes.jsonl`
    with that label; `expected` may be "refusal" for either kind of refusal."""
    written = _written()
    missing = []
    for prompt, answer, expected in cases:
        labels = written.get((prompt, answer), set())
        ok = bool(labels & REFUSALS) if expected == "refusal" else expected in labels
        if not ok:
            missing.append((prompt, answer[:60], expected))
    return missing
