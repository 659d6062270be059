"""Figures per source and per model, leave-one-source-out, and the auto judge.

Every figure here is reported per source and per model, never pooled alone:
a pooled figure hides the model that fails.

- `figures`: binary agreement on rows where people agree clearly (against
  OR-Bench's classes, and against the source's own labels), answers kept as
  answers, refusals caught, 3-class accuracy and indirect-refusal recall where
  the labels have three classes;
- `loso`: the learned model refitted without one source at a time (the other
  sources, the OR-Bench-style dev set always in), the source then classified by
  the model that never saw it;
- `auto_judge`: what `auto:<judge>` saves (judge calls not made) and how often
  it agrees with judging every answer, with a judge function given (`make eval`
  uses the fake judge of tests/fake_openai.py, in OR-Bench's paper format),
  and what it would reach with a judge that is always right.

Pure Python; no model calls.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..types import REFUSALS, Verdict
from .data import LabelledRow
from .harness import ClassifyFn, FitFn, _caller, _label_of, _pct


def theirs_answer(row: LabelledRow) -> bool:
    """Did the source's own label say "answer"? (Rows read here keep their source's side.)"""
    return row.label == "direct_answer" and row.style != "read"


@dataclass(slots=True)
class Figures:
    n: int = 0
    """Rows where people agree clearly."""
    binary: float | None = None
    """Answer vs refusal against OR-Bench's classes (the source's answered side,
    and the classes read here for its other side)."""
    binary_theirs: float | None = None
    """The same against the source's own labels as given."""
    answers: tuple[int, int] = (0, 0)
    """(kept as answers, answers)."""
    refusals: tuple[int, int] = (0, 0)
    """(caught as refusals, refusals)."""
    three: tuple[int, int] = (0, 0)
    """(3-class right, rows with three-class labels)."""
    indirect: tuple[int, int] = (0, 0)
    """(indirect refusals recognised, indirect refusals)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "binary": self.binary,
            "binary_theirs": self.binary_theirs,
            "answers_kept": list(self.answers),
            "refusals_caught": list(self.refusals),
            "three_class": list(self.three),
            "indirect_recall": list(self.indirect),
        }


def figures(rows: Sequence[LabelledRow], preds: Sequence[str]) -> Figures:
    """The figures of predicted labels `preds` against `rows`."""
    clear = [(r, p) for r, p in zip(rows, preds, strict=True) if r.clear]
    if not clear:
        return Figures()
    binary = sum((p in REFUSALS) == (r.label in REFUSALS) for r, p in clear)
    theirs = sum((p not in REFUSALS) == theirs_answer(r) for r, p in clear)
    answers = [p for r, p in clear if r.label == "direct_answer"]
    refusals = [p for r, p in clear if r.label in REFUSALS]
    fine = [(r, p) for r, p in clear if not r.coarse]
    indirect = [p for r, p in fine if r.label == "indirect_refusal"]
    return Figures(
        n=len(clear),
        binary=binary / len(clear),
        binary_theirs=theirs / len(clear),
        answers=(sum(p == "direct_answer" for p in answers), len(answers)),
        refusals=(sum(p in REFUSALS for p in refusals), len(refusals)),
        three=(sum(p == r.label for r, p in fine), len(fine)),
        indirect=(sum(p == "indirect_refusal" for p in indirect), len(indirect)),
    )


def model_of(row: LabelledRow) -> str:
    return row.model or row.source


def predict(rows: Sequence[LabelledRow], classify_fn: ClassifyFn) -> list[Verdict | str]:
    call = _caller(classify_fn)
    return [call(r, True) for r in rows]


def by_key(rows: Sequence[LabelledRow], preds: Sequence[str], key: Callable[[LabelledRow], str]) -> dict[str, Figures]:
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(key(r), []).append(i)
    return {k: figures([rows[i] for i in idx], [preds[i] for i in idx]) for k, idx in sorted(groups.items())}


def loso(
    rows: Sequence[LabelledRow],
    fit_fn: FitFn,
    pool: Sequence[LabelledRow],
    always: Sequence[LabelledRow] = (),
    progress: Callable[[str], None] | None = None,
) -> list[str]:
    """Each row's label from a model fitted without its source: for each source
    of `rows`, fit on `pool` minus that source plus `always`, and classify the
    source's rows. Returns the labels in the order of `rows`."""
    out: list[str] = [""] * len(rows)
    for source in sorted({r.source for r in rows}):
        if progress:
            progress(source)
        fn = fit_fn([*(r for r in pool if r.source != source), *always])
        call = _caller(fn)
        for i, r in enumerate(rows):
            if r.source == source:
                out[i] = _label_of(call(r, True))
    return out


# --- the auto judge ------------------------------------------------------------------------

JudgeFn = Callable[[str, str], str | None]
"""(prompt, answer) -> the judge's class, or None when its reply is off-format."""


@dataclass(slots=True)
class AutoFigures:
    n: int = 0
    asked_all: int = 0
    """Judge calls when every answer is judged (provider-decided answers need none)."""
    asked_auto: int = 0
    """Judge calls under auto: the unsure answers only."""
    agree: float | None = None
    """Auto's final label equals judging every answer's (3 classes)."""
    agree_binary: float | None = None
    offline_binary: float | None = None
    """Answer vs refusal against people, clear rows: the offline classifier alone…"""
    auto_binary: float | None = None
    """…auto with this judge…"""
    all_binary: float | None = None
    """…this judge on every answer…"""
    oracle_binary: float | None = None
    """…and auto with a judge that is always right (what auto could reach)."""

    @property
    def saved(self) -> float | None:
        return 1 - self.asked_auto / self.asked_all if self.asked_all else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "judge_calls_all": self.asked_all,
            "judge_calls_auto": self.asked_auto,
            "saved": self.saved,
            "agreement": self.agree,
            "agreement_binary": self.agree_binary,
            "binary_offline": self.offline_binary,
            "binary_auto": self.auto_binary,
            "binary_all": self.all_binary,
            "binary_auto_perfect_judge": self.oracle_binary,
        }


def auto_judge(
    rows: Sequence[LabelledRow],
    offline: Sequence[Verdict],
    judge: JudgeFn,
    threshold: float,
) -> AutoFigures:
    """What `auto:<judge>` does on `rows` whose offline verdicts are `offline`."""
    if not rows:
        return AutoFigures()
    auto_labels, all_labels, oracle = [], [], []
    asked_all = asked_auto = 0
    for r, v in zip(rows, offline, strict=True):
        if v.source == "provider":
            auto_labels.append(v.label)
            all_labels.append(v.label)
            oracle.append(v.label)
            continue
        asked_all += 1
        judged = judge(r.prompt, r.response) or v.label
        all_labels.append(judged)
        unsure = v.confidence < threshold
        asked_auto += unsure
        auto_labels.append(judged if unsure else v.label)
        oracle.append(r.label if unsure else v.label)
    clear = [i for i, r in enumerate(rows) if r.clear]

    def binary(labels: Sequence[str]) -> float | None:
        if not clear:
            return None
        return sum((labels[i] in REFUSALS) == (rows[i].label in REFUSALS) for i in clear) / len(clear)

    n = len(rows)
    return AutoFigures(
        n=n,
        asked_all=asked_all,
        asked_auto=asked_auto,
        agree=sum(a == b for a, b in zip(auto_labels, all_labels, strict=True)) / n,
        agree_binary=sum((a in REFUSALS) == (b in REFUSALS) for a, b in zip(auto_labels, all_labels, strict=True)) / n,
        offline_binary=binary([v.label for v in offline]),
        auto_binary=binary(auto_labels),
        all_binary=binary(all_labels),
        oracle_binary=binary(oracle),
    )


# --- text tables ------------------------------------------------------------------------------


def _frac(pair: tuple[int, int]) -> str:
    right, total = pair
    return f"{right}/{total}" if total else "-"


def figures_table(title: str, groups: dict[str, Figures], loso: dict[str, Figures] | None = None) -> str:
    head = f"{'':<28}{'n':>6}{'binary':>9}{'theirs':>9}{'answers':>11}{'refusals':>11}{'3-class':>11}{'indirect':>10}"
    if loso is not None:
        head += f"{'LOSO bin':>10}{'LOSO 3cl':>10}"
    lines = [title, head]
    for key, f in groups.items():
        line = (
            f"{key[:27]:<28}{f.n:>6}{_pct(f.binary):>9}{_pct(f.binary_theirs):>9}{_frac(f.answers):>11}"
            f"{_frac(f.refusals):>11}{_frac(f.three):>11}{_frac(f.indirect):>10}"
        )
        if loso is not None:
            lo = loso.get(key)
            three = lo.three[0] / lo.three[1] if lo and lo.three[1] else None
            line += f"{_pct(lo.binary if lo else None):>10}{_pct(three):>10}"
        lines.append(line)
    return "\n".join(lines)


def auto_table(title: str, groups: dict[str, AutoFigures], threshold: float) -> str:
    lines = [
        title,
        f"(asks the judge below confidence {threshold}; agreement = auto's label equals judging every answer's)",
        f"{'':<22}{'n':>6}{'calls all':>10}{'calls auto':>11}{'saved':>8}{'agree':>8}{'agree bin':>10}"
        f"{'offline':>9}{'auto':>8}{'all':>8}{'auto*':>8}",
    ]
    for key, a in groups.items():
        lines.append(
            f"{key[:21]:<22}{a.n:>6}{a.asked_all:>10}{a.asked_auto:>11}{_pct(a.saved):>8}{_pct(a.agree):>8}"
            f"{_pct(a.agree_binary):>10}{_pct(a.offline_binary):>9}{_pct(a.auto_binary):>8}{_pct(a.all_binary):>8}"
            f"{_pct(a.oracle_binary):>8}"
        )
    lines.append(
        "binary against people on clear rows: offline alone, auto with this judge, this judge on every answer, "
        "and auto* with a judge that is always right"
    )
    return "\n".join(lines)


def group_rows(rows: Iterable[LabelledRow], key: Callable[[LabelledRow], str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        out.setdefault(key(r), []).append(i)
    return dict(sorted(out.items()))


def family_table(rows: Sequence[LabelledRow], by_family: Mapping[int, Verdict]) -> tuple[str, dict[str, float]]:
    """Each question family of a source left out in turn, the rest of the source
    kept (`loso.LeftOut.by_family`): how well the labellers' own way of reading
    carries to questions the model never saw. Returns the table and each source's
    figure over all its families."""
    from .corpus import prompt_family

    groups: dict[tuple[str, str], list[int]] = {}
    for i in sorted(by_family):
        groups.setdefault((rows[i].source, prompt_family(rows[i])), []).append(i)
    lines = [
        "Each question family left out, the rest of its source kept (the same people's labels on questions "
        "never trained on; answer vs refusal)",
        f"{'source':<12}{'question family':<44}{'n':>6}{'binary':>9}",
    ]
    whole: dict[str, list[int]] = {}
    for (source, family), idx in groups.items():
        f = figures([rows[i] for i in idx], [by_family[i].label for i in idx])
        lines.append(f"{source[:11]:<12}{family[:43]:<44}{f.n:>6}{_pct(f.binary):>9}")
        whole.setdefault(source, []).extend(idx)
    out: dict[str, float] = {}
    for source, idx in whole.items():
        f = figures([rows[i] for i in idx], [by_family[i].label for i in idx])
        lines.append(f"{source[:11]:<12}{'every family, each left out':<44}{f.n:>6}{_pct(f.binary):>9}")
        if f.binary is not None:
            out[source] = f.binary
    return "\n".join(lines), out


_LIST_LINE = re.compile(r"(?m)^[ \t]*(?:\d+[.)]|[-*•])[ \t]+\S")


def holds_list(text: str) -> bool:
    """Two or more list items (numbered or bulleted lines)."""
    return len(_LIST_LINE.findall(text, 0, 4000)) >= 2


def list_table(rows: Sequence[LabelledRow], preds: Sequence[str]) -> tuple[str, dict[str, dict[str, list[int]]]]:
    """The answers that hold a list, per source: refusals caught and answers kept.
    The outside check's failure mode: a refusal followed by a list of reasons,
    risks or safer alternatives, read as an answer."""
    tally: dict[str, dict[str, list[int]]] = {}
    for r, p in zip(rows, preds, strict=True):
        if not r.clear or not holds_list(r.response):
            continue
        t = tally.setdefault(r.source, {"refusals": [0, 0], "answers": [0, 0]})
        if r.label in REFUSALS:
            t["refusals"][0] += p in REFUSALS
            t["refusals"][1] += 1
        else:
            t["answers"][0] += p == "direct_answer"
            t["answers"][1] += 1
    lines = [
        "Answers that hold a list (two or more items): refusals caught, answers kept; a refusal followed by "
        "reasons, risks or alternatives is still a refusal",
        f"{'source':<20}{'refusals caught':>18}{'answers kept':>18}",
    ]
    total = {"refusals": [0, 0], "answers": [0, 0]}

    def line(name: str, t: dict[str, list[int]]) -> str:
        (caught, refusals), (kept, answers) = t["refusals"], t["answers"]
        return f"{name[:19]:<20}{_frac((caught, refusals)):>18}{_frac((kept, answers)):>18}"

    for source, t in tally.items():
        lines.append(line(source, t))
        for k in total:
            total[k][0] += t[k][0]
            total[k][1] += t[k][1]
    lines.append(line("all", total))
    return "\n".join(lines), tally
