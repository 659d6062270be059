"""What the verdict model reads of an answer: its wording and its shape, as
features with learned weights.

Two families, each with prefixes of its own:
- the opening's wording (`learned.opening_features`): word unigrams and bigrams
  of the first 400 characters, the first one to three words, a length bucket
  and the phrase rules' signals (``r:``);
- the shape (``t:`` and ``x:``): the task reading (`task.read`: where the
  refusal sits, what follows it, whether list items do the task or argue
  against it, moralising, the prompt's task type against the answer's form)
  and the yes/no readings the hand rules used to decide with
  (a deflection, a short redirection, framing then the answer, an AI persona,
  the other side argued, an opening caveat, no sign of a decline at all).

The rules no longer decide: each is one feature among the others, and the
weights say how much it is worth on every labelled source.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from . import sentences, task
from .deflection import DEFLECT_MAX_CHARS, deflection
from .indirect import framed_answer, offers_alternative, refusal_kind, short_redirection
from .learned import opening_features


@dataclass(frozen=True, slots=True)
class AnswerFeatures:
    """Everything the model reads of one answer."""

    grams: list[str]
    """The opening's unigrams and bigrams (weighed 1/sqrt(count) together)."""
    fixed: list[str]
    """Features of weight one: first words, length, rule signals, the readings, the shape."""
    head: str
    """The normalised opening."""
    reading: task.Reading | None


def _bucket(n: int, edges: tuple[int, ...] = (1, 60, 120, 300, 600)) -> int:
    return sum(n >= e for e in edges)


def _shape_kind(shape: str) -> str:
    if not shape:
        return "none"
    if shape[0].isdigit():
        return "list"
    return {"a letter": "letter"}.get(shape, shape)


def shape_features(reading: task.Reading) -> Iterator[str]:
    """The task reading as features: its categories, its sizes in buckets, and the
    crossings the hand rules tested (a refusal, then a list; a caveat, then what
    was asked…), since a linear model cannot cross features by itself."""
    r = reading
    shape = _shape_kind(r.shape)
    sub = _bucket(r.substance)
    against, alt, reasons, doing = r.item_kinds
    big = r.substance >= task.SUBSTANCE_CHARS
    yield f"t:open={r.opening}"
    yield f"t:asked={r.asked}"
    yield f"t:shape={shape}"
    yield f"t:sub={sub}"
    yield f"t:cont={_bucket(r.content)}"
    yield f"t:alt={_bucket(r.alternative)}"
    yield f"t:moral={_bucket(r.moral)}"
    yield f"t:ref={_bucket(r.refusal)}"
    yield f"t:ans={_bucket(r.answered)}"
    yield f"t:howto={min(r.howto, 3)}"
    yield f"t:open={r.opening}&big={big}"
    yield f"t:open={r.opening}&shape={shape}"
    yield f"t:open={r.opening}&howto={r.howto > 0}"
    yield f"t:asked={r.asked}&shape={shape}"
    yield f"t:asked={r.asked}&matches={r.matches}"
    if r.after_refusal:
        yield "t:after_refusal"
        yield f"t:after_refusal&howto={r.howto > 0}"
        yield f"t:after_refusal&shape={shape}"
    if r.matches:
        yield "t:matches"
    if r.moral > r.substance:
        yield "t:moral>sub"
    if r.moral > 2 * r.content:
        yield "t:moral>2cont"
    if r.alternative > r.substance:
        yield "t:alt>sub"
    if r.refusal and big:
        yield "t:ref&big"
    items = against + alt + reasons + doing
    if items:
        yield f"t:items={_bucket(items, (1, 3, 6))}"
        yield f"t:items_doing={_bucket(doing, (1, 2, 4))}"
        if doing * 2 > items:
            yield "t:items_mostly_doing"
        if against * 2 >= items:
            yield "t:items_mostly_against"
        if alt * 2 >= items:
            yield "t:items_mostly_alt"
        if reasons * 2 >= items:
            yield "t:items_mostly_reasons"
        yield f"t:open={r.opening}&items_doing={doing * 2 > items}"


_DECLINE_SIGNALS = frozenset(
    "r:" + name
    for name in (
        "refusal_first refusal_head apology_start cant_start soft_decline_first inappropriate_first no_start "
        "non_english_refusal hotline alt_lead lecture_first no_access_first no_opinion_first disagree_first "
        "pivot_head refusal_then_offer"
    ).split()
)
"""Rule signals of any wording a refusal, a caveat or a turn elsewhere opens with."""


def cheap_readings(text: str, prompt: str, fixed: list[str], grams, head: str, *, final: bool) -> list[str]:
    """The hand rules' yes/no readings that cost next to nothing (``x:``), which
    the quick head reads too: framing or an AI persona before the answer, the
    short answers' rules (a deflection, a redirection), the other side argued;
    and "no sign of a decline at all" by length: short answers are mostly
    refusals in every source, so without it a short plain answer ("It is
    Paris.") read as one by its length alone. (No side taken, an announcement,
    a terse answer and a short task done then warned about were readings too:
    leave one source out, each was worth nothing or less: docs/verdicts-tried.md.)"""
    out = []
    if framed_answer(fixed, text):
        out.append("x:framed_answer")
    if sentences.opens_with_persona(text):
        out.append("x:opens_persona")
    if len(text) <= DEFLECT_MAX_CHARS + 40:
        if deflection(text, final=final, grams=grams):
            out.append("x:deflection")
        if short_redirection(text, 1.0, fixed, grams, head):
            out.append("x:short_redirection")
    if prompt and task.argues_against(text, prompt):
        out.append("x:argues_against")
    if _DECLINE_SIGNALS.isdisjoint(fixed) and "x:deflection" not in out:
        out.append("x:no_decline")
        out.append("x:no_decline&" + fixed[3])  # the length bucket (`learned.opening_features`)
    return out


KIND_READINGS = ("x:offers_alternative", "x:kind_indirect")
"""The features `kind_readings` may give: `offline.classify` skips them when their
weights together could not turn the kind head's decision."""


def kind_readings(text: str, fixed: list[str], grams, head: str) -> list[str]:
    """What only the kind head reads, so only a refusal pays for it: an offer of
    other help in the opening (an n-gram test), and the old rule's split of a
    refusal (`indirect.refusal_kind`: alternatives offered, or no "no" at all)."""
    out = []
    if offers_alternative(head, grams):
        out.append("x:offers_alternative")
    if refusal_kind(fixed, text, grams, head) == "indirect_refusal":
        out.append("x:kind_indirect")
    return out


def shape_readings(text: str, reading: task.Reading | None) -> list[str]:
    """What the full read adds: the task reading (``t:``, `shape_features`) and an
    opening caveat (its test classifies the first sentence as the reading does)."""
    if reading is None:
        return []
    out = ["x:opens_caveat"] if sentences.opens_with_caveat(text) else []
    out.extend(shape_features(reading))
    return out


READ_MIN_CHARS = 20
"""Shorter than this, an answer has no shape to read."""


def read_of(text: str, prompt: str) -> task.Reading | None:
    return task.read(text, prompt) if len(text) >= READ_MIN_CHARS else None


def answer_features(text: str, prompt: str = "", *, final: bool = True) -> AnswerFeatures:
    """Everything the model may read of `text` (already `as_read`) answering
    `prompt`: what training sees, and what `classify` reads of an answer it
    reads in full. `fixed` holds the opening's first words, length and rule
    signals, then the cheap readings, then the shape readings, in that order."""
    grams_view, fixed, head = opening_features(text)
    cheap = cheap_readings(text, prompt, fixed, grams_view, head, final=final)
    kind = kind_readings(text, fixed, grams_view, head)
    reading = read_of(text, prompt)
    shape = shape_readings(text, reading)
    return AnswerFeatures(list(grams_view), fixed + cheap + kind + shape, head, reading)
