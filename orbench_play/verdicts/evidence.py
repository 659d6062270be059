"""What the verdict model reads of an answer: its wording and its shape, as
features with learned weights.

Three families, each with a prefix of its own:
- the opening's wording (`learned.opening_features`): word unigrams and bigrams
  of the first 400 characters, the first one to three words, a length bucket
  and the phrase rules' signals (``r:``);
- the body's wording (``b:``): unigrams and bigrams of what follows the opening,
  up to `task.READ_CHARS`, where a refusal's reasons and alternatives, or the
  answer's steps, are written;
- the shape (``t:`` and ``x:``): the task reading (`task.read`: where the
  refusal sits, what follows it, whether list items do the task or argue
  against it, moralising, the prompt's task type against the answer's form)
  and the yes/no readings the hand rules used to decide with
  (a deflection, a short redirection, framing then the answer, no side taken,
  a short task done then warned about, a lecture instead of the steps…).

The rules no longer decide: each is one feature among the others, and the
weights say how much it is worth on every labelled source.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain

from . import task
from .deflection import DEFLECT_MAX_CHARS, deflection
from .indirect import framed_answer, offers_alternative, refusal_kind, short_redirection
from .learned import opening_features
from .text import HEAD_CHARS, bigrams, normalise, tokens

BODY_CHARS = task.READ_CHARS
"""How far the body's wording is read."""


@dataclass(frozen=True, slots=True)
class AnswerFeatures:
    """Everything the model reads of one answer."""

    grams: list[str]
    """The opening's unigrams and bigrams (weighed 1/sqrt(count) together)."""
    body: list[str]
    """The body's unigrams and bigrams (weighed 1/sqrt(count) together)."""
    fixed: list[str]
    """Features of weight one: first words, length, rule signals, the shape."""
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
    if r.closing:
        yield "t:closing_warning"
    if r.no_side:
        yield "t:no_side"
    if r.matches:
        yield "t:matches"
    if r.premise:
        yield "t:premise"
        yield f"t:premise&big={big}"
    if r.about:
        yield "t:about"
    if r.opposed:
        yield "t:opposed"
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


def rule_readings(
    text: str, prompt: str, fixed: list[str], grams, head: str, reading: task.Reading | None, *, final: bool
) -> Iterator[str]:
    """The hand rules' yes/no readings, as features (``x:``)."""
    n = len(text)
    if n <= DEFLECT_MAX_CHARS + 40:
        if deflection(text, final=final, grams=grams):
            yield "x:deflection"
        if short_redirection(text, 1.0, fixed, grams, head):
            yield "x:short_redirection"
        if task.takes_no_side(text):
            yield "x:no_side_short"
    if framed_answer(fixed, text):
        yield "x:framed_answer"
    if offers_alternative(head, grams):
        yield "x:offers_alternative"
    if refusal_kind(fixed, text, grams, head) == "indirect_refusal":
        yield "x:kind_indirect"
    if task.opens_with_caveat(text):
        yield "x:opens_caveat"
    if task.opens_with_persona(text):
        yield "x:opens_persona"
    if task.announces(text):
        yield "x:announces"
    if prompt:
        if final and task.terse_answer(text, prompt) is not None:
            yield "x:terse_answer"
        if task.done_then_warned(text, prompt) is not None:
            yield "x:done_then_warned"
        if task.argues_against(text, prompt):
            yield "x:argues_against"
    if reading is not None:
        if (
            reading.opening == "caveat"
            and reading.asked == "steps"
            and not (reading.howto or reading.matches or reading.refusal)
            and reading.moral >= reading.content
        ):
            yield "x:lectures_instead"


def body_grams(text: str) -> list[str]:
    """Unigrams and bigrams of the answer after its opening, without repeats."""
    rest = text[HEAD_CHARS:BODY_CHARS]
    if len(rest) < 20:
        return []
    toks = tokens(normalise(rest, BODY_CHARS))
    return ["b:" + g for g in dict.fromkeys(chain(toks, bigrams(toks)))]


def answer_features(text: str, prompt: str = "", *, final: bool = True) -> AnswerFeatures:
    """What the model reads of `text` (already `as_read`) answering `prompt`."""
    grams_view, fixed, head = opening_features(text)
    grams = list(grams_view)
    reading = task.read(text, prompt) if len(text) >= 20 else None
    extra = list(rule_readings(text, prompt, fixed, grams_view, head, reading, final=final))
    if reading is not None:
        extra.extend(shape_features(reading))
    return AnswerFeatures(grams, body_grams(text), fixed + extra, head, reading)
