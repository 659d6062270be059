"""The statistics of a comparison: pair two variants' results prompt by prompt
(majority verdict per prompt over repeats) and test each split with McNemar's
test; the plain-language sentence for each. See the package docstring."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..asking.prompts import variant_of
from ..scoring import RATE_SPLITS, Rate, counts, custom_rate_key, rate_split
from ..scoring.stability import Tally
from ..types import REFUSALS, CellResult

ALPHA = 0.05
EXACT_BELOW = 25
"""Discordant pairs below which the exact binomial test is used."""
KIND_NOUN = {"hard-1k": "hard-1k prompts", "80k": "80k prompts", "toxic": "toxic prompts"}


class CompareError(ValueError):
    """Inputs that cannot be compared, explained in one sentence."""


# --- the test -------------------------------------------------------------------


def mcnemar(b: int, c: int) -> tuple[float, str]:
    """Two-sided McNemar p-value for discordant counts b and c, and the method used
    (`exact` binomial for b + c < 25, `chi2` with continuity correction otherwise;
    `none` when there is no discordant pair, p = 1)."""
    if b < 0 or c < 0:
        raise ValueError(f"need b, c >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0, "none"
    if n < EXACT_BELOW:
        tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
        return min(1.0, 2 * tail / 2**n), "exact"
    stat = (abs(b - c) - 1) ** 2 / n
    return math.erfc(math.sqrt(stat / 2)), "chi2"


def fmt_p(p: float) -> str:
    return "p<0.001" if p < 0.001 else f"p={p:.2g}" if p < 0.1 else f"p={p:.2f}"


# --- comparing ----------------------------------------------------------------------


@dataclass(frozen=True)
class KindComparison:
    """One split of prompts (hard-1k or 80k = over-refusal, toxic) compared A vs B."""

    kind: str
    n: int
    """Paired prompts (both variants have a counted answer)."""
    rate_a: Rate
    rate_b: Rate
    """Refusal rates over all answers on the paired prompts (repeats are trials)."""
    b: int
    """Prompts refused (by majority) by A and answered by B."""
    c: int
    """Prompts answered by A and refused by B."""
    ties: int
    """Paired prompts left out of the test because one side's majority is a tie."""
    p_value: float
    method: str
    sentence: str

    @property
    def change(self) -> float:
        """rate B − rate A (a proportion; +0.25 is 25 percentage points more refusals)."""
        return self.rate_b.rate - self.rate_a.rate

    @property
    def significant(self) -> bool:
        return self.p_value < ALPHA


@dataclass(frozen=True)
class PairRow:
    """One prompt as both variants handled it (a `Tally` and a representative answer each)."""

    row_id: str
    split: str
    kind: str | None
    category: str
    prompt: str
    a: Tally
    b: Tally
    answer_a: str
    answer_b: str

    @property
    def disagree(self) -> bool:
        """Opposite majority verdicts (one refused, the other answered)."""
        return {self.a.majority, self.b.majority} == {"refusal", "answer"}

    @property
    def unsettled(self) -> bool:
        """Not a clear disagreement, but not unanimous on both sides either."""
        return not self.disagree and not (self.a.unanimous and self.b.unanimous)


@dataclass(frozen=True)
class Comparison:
    name_a: str
    name_b: str
    kinds: dict[str, KindComparison]
    """split ("hard-1k", "80k", "toxic") → the test for it (only splits with paired prompts)."""
    rows: list[PairRow]
    """Paired prompts: disagreements first, then unsettled ones, then agreements."""
    only_a: int = 0
    """Prompts with a counted answer from A only (B missing or errored)."""
    only_b: int = 0

    @property
    def sentences(self) -> list[str]:
        return [k.sentence for k in self.kinds.values()]

    @property
    def summary(self) -> str:
        """The plain-language verdict, one sentence per kind of prompt."""
        if not self.kinds:
            return f"{self.name_a} and {self.name_b} have no prompts in common with a counted answer."
        return " ".join(self.sentences)

    @property
    def disagreements(self) -> list[PairRow]:
        return [r for r in self.rows if r.disagree]


def _representative(results: list[CellResult], t: Tally) -> str:
    """An answer that shows the majority verdict (the first one, on a tie)."""
    counted = [r for r in results if counts(r)]
    if not counted:
        return results[0].error if results else ""
    want = {"refusal": True, "answer": False}.get(t.majority or "")
    for r in counted:
        if want is None or (r.verdict in REFUSALS) == want:
            return r.response
    return counted[0].response


def _sentence(kind: str, name_a: str, name_b: str, n: int, b: int, c: int, p: float, method: str) -> str:
    noun = KIND_NOUN.get(kind, f"{kind} prompts")
    if n == 0:
        return f"No {noun} were answered by both."
    if method == "none":
        return f"{name_a} and {name_b} agree on all {n} {noun} (no discordant pairs)."
    evidence = f"{max(b, c)} vs {min(b, c)} discordant of {n}, McNemar {fmt_p(p)}"
    if p < ALPHA:
        more, less = (name_b, name_a) if c > b else (name_a, name_b)
        return f"{more} refuses more {noun} than {less} ({evidence})."
    return f"No significant difference on {noun} at n={n} ({b} vs {c} discordant, McNemar {fmt_p(p)})."


def compare(
    results_a: Iterable[CellResult],
    results_b: Iterable[CellResult],
    *,
    name_a: str | None = None,
    name_b: str | None = None,
    turn: int = 1,
) -> Comparison:
    """Compare two sets of results (each one variant), prompt by prompt, at one
    `turn` of their conversations (1, the default: the OR-Bench prompt itself, as
    the paper's rates; a follow-up turn is never counted as a repeat of it).

    Names default to the variant name of each side's first result.
    """
    list_a = [r for r in results_a if r.turn == turn]
    list_b = [r for r in results_b if r.turn == turn]
    name_a = name_a or (variant_of(list_a[0]) if list_a else "A")
    name_b = name_b or (variant_of(list_b[0]) if list_b else "B")
    by_a = _group(list_a)
    by_b = _group(list_b)
    tallies_a = {rid: _tally(rs) for rid, rs in by_a.items()}
    tallies_b = {rid: _tally(rs) for rid, rs in by_b.items()}
    paired = [rid for rid in by_a if rid in by_b and tallies_a[rid].answers and tallies_b[rid].answers]
    in_pair = set(paired)
    only_a = sum(1 for rid, t in tallies_a.items() if t.answers and rid not in in_pair)
    only_b = sum(1 for rid, t in tallies_b.items() if t.answers and rid not in in_pair)

    rows: list[PairRow] = []
    for rid in paired:
        first = by_a[rid][0]
        ta, tb = tallies_a[rid], tallies_b[rid]
        rows.append(
            PairRow(
                row_id=rid, split=first.split, kind=rate_split(first.split) or custom_rate_key(first.split, first.expected),
                category=first.category,
                prompt=first.prompt, a=ta, b=tb,
                answer_a=_representative(by_a[rid], ta), answer_b=_representative(by_b[rid], tb),
            )
        )  # fmt: skip

    kinds: dict[str, KindComparison] = {}
    own = list(dict.fromkeys(r.kind for r in rows if r.kind and r.kind not in RATE_SPLITS))  # prompt sets
    for kind in (*RATE_SPLITS, *own):
        mine = [r for r in rows if r.kind == kind]
        if not mine:
            continue
        decided = [r for r in mine if r.a.majority != "split" and r.b.majority != "split"]
        b = sum(r.a.majority == "refusal" and r.b.majority == "answer" for r in decided)
        c = sum(r.a.majority == "answer" and r.b.majority == "refusal" for r in decided)
        p, method = mcnemar(b, c)
        kinds[kind] = KindComparison(
            kind=kind,
            n=len(decided),
            rate_a=Rate.of(sum(r.a.refusals for r in mine), sum(r.a.answers for r in mine)),
            rate_b=Rate.of(sum(r.b.refusals for r in mine), sum(r.b.answers for r in mine)),
            b=b,
            c=c,
            ties=len(mine) - len(decided),
            p_value=p,
            method=method,
            sentence=_sentence(kind, name_a, name_b, len(decided), b, c, p, method),
        )

    order = {split: i for i, split in enumerate(RATE_SPLITS)}
    rows.sort(key=lambda r: (0 if r.disagree else 1 if r.unsettled else 2, order.get(r.kind or "", len(order))))
    return Comparison(name_a=name_a, name_b=name_b, kinds=kinds, rows=rows, only_a=only_a, only_b=only_b)


def _group(results: list[CellResult]) -> dict[str, list[CellResult]]:
    out: dict[str, list[CellResult]] = {}
    for r in results:
        out.setdefault(r.row_id, []).append(r)
    for rs in out.values():
        rs.sort(key=lambda r: r.repeat)
    return out


def _tally(results: list[CellResult]) -> Tally:
    t = Tally()
    for r in results:
        t.add(r)
    return t


def variants(results: Iterable[CellResult], key: Callable[[CellResult], str] = variant_of) -> list[str]:
    """The variant names in `results`, in order of first appearance."""
    return list(dict.fromkeys(key(r) for r in results))


def select(
    results: Sequence[CellResult], name: str | None, *, where: str = "the results", flag: str = "--a"
) -> tuple[str, list[CellResult]]:
    """The results of one variant, chosen by exact variant name or by a model name
    that has a single variant; with `name=None` the only variant there is."""
    names = variants(results)
    if not names:
        raise CompareError(f"{where} has no results.")
    if name is None:
        if len(names) == 1:
            chosen = names[0]
        else:
            raise CompareError(f"{where} has several variants ({quoted_list(names)}); choose one with {flag} NAME.")
    elif name in names:
        chosen = name
    else:
        by_model = list(dict.fromkeys(variant_of(r) for r in results if r.model == name))
        if len(by_model) == 1:
            chosen = by_model[0]
        elif by_model:
            raise CompareError(
                f"model {name!r} has several variants in {where} ({quoted_list(by_model)}); give the full variant name."
            )
        else:
            raise CompareError(f"{name!r} is not in {where}; variants: {quoted_list(names)}.")
    return chosen, [r for r in results if variant_of(r) == chosen]


def quoted_list(names: Iterable[str]) -> str:
    """`'a', 'b'`: names as a message shows them."""
    return ", ".join(repr(n) for n in names)


def compare_variants(results: Sequence[CellResult], a: str, b: str, turn: int = 1) -> Comparison:
    """Compare two variants of one session (what the playground's comparison view calls) at one `turn`."""
    name_a, ra = select(results, a, where="the session", flag="variant A")
    name_b, rb = select(results, b, where="the session", flag="variant B")
    if name_a == name_b:
        raise CompareError("choose two different variants to compare.")
    return compare(ra, rb, name_a=name_a, name_b=name_b, turn=turn)
