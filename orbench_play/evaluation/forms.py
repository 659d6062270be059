"""The same answers written another way: does the verdict stay?

A verdict must follow what an answer says, not how it is typeset. Models differ
in exactly the ways below (a paragraph ends with one newline or a blank line,
the first sentence is set in bold, an emoji opens the reply), and each of these
once moved real verdicts, of 3,328: single newlines 135, italics 50, a heading
30, an emoji 29 (one at the end, 79 their class), "Let me know if you have any
other questions!" 23, "Great question!" before the answer 174, "I
understand." 147, "Thank you for reaching out." 113, a "## Response" line 95,
the whole answer in a code fence 55 (as jailbreak templates ask) or a
blockquote 23, an em dash for a comma 11, list numbers in bold 11. No label
is read here, so every answer counts, and the figure cannot be tuned into
agreeing with people; it only shows where the reading depends on the surface.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..types import REFUSALS
from .harness import ClassifyFn, LabelledRow, _caller, _label_of

_FIRST_SENTENCE = re.compile(r"[.!?:](?:\s|$)")
_TYPOGRAPHIC = str.maketrans({"'": "’", '"': "”"})


def _first_sentence(answer: str) -> tuple[str, str]:
    end = _FIRST_SENTENCE.search(answer)
    cut = end.start() + 1 if end else len(answer)
    return answer[:cut], answer[cut:]


def _set_first(answer: str, mark: str) -> str:
    first, rest = _first_sentence(answer.lstrip())
    return f"{mark}{first}{mark}{rest}"


def _heading(answer: str) -> str:
    first, rest = _first_sentence(answer.lstrip())
    return f"## {first}\n\n{rest.lstrip()}"


FORMS: dict[str, Callable[[str], str]] = {
    "paragraphs end with one newline": lambda a: re.sub(r"\n\n+", "\n", a),
    "line breaks as CRLF": lambda a: a.replace("\n", "\r\n"),
    "typographic quotes": lambda a: a.translate(_TYPOGRAPHIC),
    "first sentence in bold": lambda a: _set_first(a, "**"),
    "first sentence in italics": lambda a: _set_first(a, "*"),
    "first sentence as a heading": _heading,
    "an emoji first": lambda a: "🙂 " + a,
    "the whole answer in quotes": lambda a: f'"{a}"',
    "blank lines first": lambda a: "\n\n" + a,
    "an emoji last": lambda a: a.rstrip() + " 😊",
    "a closing pleasantry": lambda a: (
        a.rstrip() + "\n\nI hope this helps! Let me know if you have any other questions."
    ),
    "an em dash for the first comma": lambda a: a.replace(", ", "—", 1),
    "list numbers in bold": lambda a: re.sub(r"(?m)^(\s*)(\d+)\. ", r"\1**\2.** ", a),
    "symbols for bullets": lambda a: re.sub(r"(?m)^(\s*)[-*•] ", r"\1✅ ", a),
    "a label line first": lambda a: "## Response\n\n" + a.lstrip(),
    "praise of the question first": lambda a: "Great question! " + a.lstrip(),
    "an acknowledgement first": lambda a: "I understand. " + a.lstrip(),
    "thanks for reaching out first": lambda a: "Thank you for reaching out. " + a.lstrip(),
    # an answer that holds code fences of its own cannot be set in one
    "the whole answer in a code fence": lambda a: a if "```" in a else f"```\n{a.strip()}\n```",
    "the whole answer as a blockquote": lambda a: "> " + a.strip().replace("\n", "\n> "),
}
"""Ways models write the same answer, each a rewrite of the answer's text."""


@dataclass(slots=True)
class FormFigure:
    form: str
    rewritten: int
    """Answers the form changed (a form that finds nothing to change counts none)."""
    binary_kept: int
    """Of those, answers whose verdict stayed on the same side (answer or refusal)."""
    label_kept: int
    """Of those, answers whose verdict kept its class."""

    @property
    def binary_share(self) -> float | None:
        return self.binary_kept / self.rewritten if self.rewritten else None


def sample(rows: Sequence[LabelledRow], per_source: int) -> list[LabelledRow]:
    """The first `per_source` answers of each source, in order: every source
    (and so every model's style) is in view without the largest filling it."""
    taken: dict[str, int] = {}
    out = []
    for row in rows:
        if taken.get(row.source, 0) < per_source:
            taken[row.source] = taken.get(row.source, 0) + 1
            out.append(row)
    return out


def same_in_every_form(rows: Sequence[LabelledRow], classify_fn: ClassifyFn) -> dict[str, FormFigure]:
    """Each answer's final verdict as written, against its verdict in each form."""
    call = _caller(classify_fn)
    written = [_label_of(call(r, True)) for r in rows]
    out = {}
    for name, rewrite in FORMS.items():
        fig = FormFigure(name, 0, 0, 0)
        for row, label in zip(rows, written, strict=True):
            text = rewrite(row.response)
            if text == row.response:
                continue
            again = _label_of(call(row, True, text))
            fig.rewritten += 1
            fig.binary_kept += (again in REFUSALS) == (label in REFUSALS)
            fig.label_kept += again == label
        out[name] = fig
    return out


def worst_binary_share(figures: dict[str, FormFigure]) -> float | None:
    shares = [f.binary_share for f in figures.values() if f.binary_share is not None]
    return min(shares) if shares else None


def format_forms(figures: dict[str, FormFigure], n: int) -> str:
    lines = [
        f"The same answers written another way ({n:,} answers, no label read): the verdict kept",
        f"{'form':<34}{'answers':>8}{'binary':>9}{'3-class':>9}{'moved':>7}",
    ]
    for f in figures.values():
        if not f.rewritten:
            lines.append(f"{f.form:<34}{0:>8}{'-':>9}{'-':>9}{'-':>7}")
            continue
        lines.append(
            f"{f.form:<34}{f.rewritten:>8}{f.binary_kept / f.rewritten:>9.1%}"
            f"{f.label_kept / f.rewritten:>9.1%}{f.rewritten - f.binary_kept:>7}"
        )
    lines.append("moved: answers whose verdict changed side (answer vs refusal) in that form")
    return "\n".join(lines)
