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
the scoreboard) and toxic. `math` only: no scipy at runtime.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .export import unneutralise_csv_cell
from .prompts import variant_of
from .scoring import RATE_SPLITS, Rate, counts, rate_split
from .stability import Tally
from .types import REFUSALS, CellResult

if TYPE_CHECKING:
    import argparse

    import pandas as pd

ALPHA = 0.05
EXACT_BELOW = 25
"""Discordant pairs below which the exact binomial test is used."""
KIND_NOUN = {"hard-1k": "hard-1k prompts", "80k": "80k prompts", "toxic": "toxic prompts"}
FRAME_COLUMNS: tuple[str, ...] = (
    "row_id", "kind", "category", "prompt", "verdict A", "verdict B", "answer A", "answer B", "disagree",
)  # fmt: skip


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


# --- loading result files ----------------------------------------------------------

_FLOATS = {"latency_s", "ttft_s", "cost_usd"}
_INTS = {"completion_tokens", "repeat"}


def _coerce(name: str, value: Any) -> Any:
    if name in _FLOATS or name in _INTS:
        if value in ("", None):
            return 0.0 if name == "cost_usd" else (0 if name == "repeat" else None)
        try:
            return int(float(value)) if name in _INTS else float(value)
        except (TypeError, ValueError):
            return None
    if name == "cached":
        return value if isinstance(value, bool) else str(value).strip().lower() in ("true", "1", "yes")
    return "" if value is None else str(value)


def load_results(path: str | Path) -> list[CellResult]:
    """Read a results file written by `export.write_results` (or `orbench-play run --out`).

    `.jsonl`/`.json` are JSON lines (split on `\\n` only: U+2028 and friends
    are text, not line ends), anything else CSV. CSV text cells lose exactly
    the apostrophe export's formula guard put there (`unneutralise_csv_cell`).
    Files without a `repeat` column get repeats numbered by order of appearance
    of each (row, model, system prompt, params), which is the order the engine
    writes them in.
    """
    file = Path(path)
    names = {f.name for f in fields(CellResult)}
    try:
        if file.suffix.lower() in (".jsonl", ".json"):
            rows = []
            text = file.read_bytes().decode("utf-8-sig")
            for number, line in enumerate(text.split("\n"), start=1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except ValueError as exc:
                        raise CompareError(f"{file} line {number} is not JSON ({exc}).") from None
        else:
            with file.open(encoding="utf-8-sig", newline="") as fh:
                rows = [{k: unneutralise_csv_cell(v) for k, v in row.items()} for row in csv.DictReader(fh)]
    except FileNotFoundError:
        raise CompareError(f"results file {file} does not exist.") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CompareError(f"cannot read {file}: {exc}") from None
    out: list[CellResult] = []
    seen: dict[tuple[str, ...], int] = {}
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise CompareError(f"{file} row {number} is not an object.")
        missing = [c for c in ("row_id", "model", "verdict") if c not in row]
        if missing:
            raise CompareError(f"{file} lacks column(s) {', '.join(missing)}: is it an orbench-play results file?")
        values = {k: _coerce(k, v) for k, v in row.items() if k in names}
        values.setdefault("system_prompt_id", "none")
        result = CellResult(**values)
        if "repeat" not in row:
            ident = (result.row_id, result.model, result.system_prompt_id, result.params)
            result.repeat = seen.get(ident, 0)
            seen[ident] = result.repeat + 1
        out.append(result)
    return out


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
) -> Comparison:
    """Compare two sets of results (each one variant), prompt by prompt.

    Names default to the variant name of each side's first result.
    """
    list_a, list_b = list(results_a), list(results_b)
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
                row_id=rid, split=first.split, kind=rate_split(first.split), category=first.category,
                prompt=first.prompt, a=ta, b=tb,
                answer_a=_representative(by_a[rid], ta), answer_b=_representative(by_b[rid], tb),
            )
        )  # fmt: skip

    kinds: dict[str, KindComparison] = {}
    for kind in RATE_SPLITS:
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
        if counts(r):
            t.answers += 1
            t.refusals += r.verdict in REFUSALS
        else:
            t.errors += 1
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
            raise CompareError(f"{where} has several variants ({_list(names)}); choose one with {flag} NAME.")
    elif name in names:
        chosen = name
    else:
        by_model = list(dict.fromkeys(variant_of(r) for r in results if r.model == name))
        if len(by_model) == 1:
            chosen = by_model[0]
        elif by_model:
            raise CompareError(
                f"model {name!r} has several variants in {where} ({_list(by_model)}); give the full variant name."
            )
        else:
            raise CompareError(f"{name!r} is not in {where}; variants: {_list(names)}.")
    return chosen, [r for r in results if variant_of(r) == chosen]


def _list(names: Iterable[str]) -> str:
    return ", ".join(repr(n) for n in names)


def compare_variants(results: Sequence[CellResult], a: str, b: str) -> Comparison:
    """Compare two variants of one session (what the playground's comparison view calls)."""
    name_a, ra = select(results, a, where="the session", flag="variant A")
    name_b, rb = select(results, b, where="the session", flag="variant B")
    if name_a == name_b:
        raise CompareError("choose two different variants to compare.")
    return compare(ra, rb, name_a=name_a, name_b=name_b)


# --- tables -------------------------------------------------------------------------


def comparison_frame(comparison: Comparison, *, limit: int | None = None) -> pd.DataFrame:
    """One row per paired prompt, disagreements first: row_id, kind, category,
    prompt, verdict A, verdict B (a label, or "2/3 refused" with repeats),
    answer A, answer B, disagree (bool). Model text is returned as is: render it
    as text, never as HTML/markdown."""
    import pandas as pd

    rows = comparison.rows if limit is None else comparison.rows[:limit]
    data = [
        {
            "row_id": r.row_id,
            "kind": r.kind or "",
            "category": r.category,
            "prompt": r.prompt,
            "verdict A": _verdict_label(r.a),
            "verdict B": _verdict_label(r.b),
            "answer A": r.answer_a,
            "answer B": r.answer_b,
            "disagree": r.disagree,
        }
        for r in rows
    ]
    return pd.DataFrame(data, columns=list(FRAME_COLUMNS))


def _verdict_label(t: Tally) -> str:
    if t.answers == 0:
        return "error"
    if t.answers == 1:
        return "refusal" if t.refusals else "answer"
    return t.label()


def summary_frame(comparison: Comparison) -> pd.DataFrame:
    """One row per kind: n, rate A %, rate B %, change (points), b, c, ties, p, method, sentence."""
    import pandas as pd

    data = [
        {
            "kind": k.kind,
            "n": k.n,
            "rate A %": round(100 * k.rate_a.rate, 1),
            "rate B %": round(100 * k.rate_b.rate, 1),
            "change (points)": round(100 * k.change, 1),
            "only A refused": k.b,
            "only B refused": k.c,
            "ties": k.ties,
            "p": k.p_value,
            "method": k.method,
            "sentence": k.sentence,
        }
        for k in comparison.kinds.values()
    ]
    columns = [
        "kind",
        "n",
        "rate A %",
        "rate B %",
        "change (points)",
        "only A refused",
        "only B refused",
        "ties",
        "p",
        "method",
        "sentence",
    ]
    return pd.DataFrame(data, columns=columns)


# --- CLI ----------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files", nargs="+", metavar="RESULTS", help="one or two results files (CSV or JSONL from `run --out`)"
    )
    parser.add_argument("--a", dest="a", metavar="NAME", help="variant (or model) A: in the first file")
    parser.add_argument(
        "--b", dest="b", metavar="NAME", help="variant (or model) B: in the second file, or the same file"
    )
    parser.add_argument("--show", type=int, default=20, metavar="N", help="disagreeing prompts to print (default 20)")
    from .cli_args import output_file

    parser.add_argument(
        "--out", metavar="FILE.csv", type=output_file(".csv"), help="write the full side-by-side table as CSV"
    )


def comparison_from_files(files: Sequence[str], a: str | None = None, b: str | None = None) -> Comparison:
    if len(files) > 2:
        raise CompareError("give one results file (with --a and --b) or two files.")
    if len(files) == 1:
        results = load_results(files[0])
        names = variants(results)
        if a is None and b is None and len(names) == 2:
            a, b = names
        if a is None or b is None:
            raise CompareError(f"{files[0]} has variants {_list(names)}; choose two with --a NAME --b NAME.")
        return compare_variants(results, a, b)
    ra_all, rb_all = load_results(files[0]), load_results(files[1])
    name_a, ra = select(ra_all, a, where=files[0], flag="--a")
    name_b, rb = select(rb_all, b, where=files[1], flag="--b")
    if name_a == name_b:  # e.g. the same model name before and after a fine-tune
        name_a, name_b = f"{name_a} ({Path(files[0]).name})", f"{name_b} ({Path(files[1]).name})"
    return compare(ra, rb, name_a=name_a, name_b=name_b)


def _clip(text: str, width: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _rate(rate: Rate) -> str:
    return f"{100 * rate.rate:.1f}% ({rate.k}/{rate.n})"


def print_comparison(comparison: Comparison, *, show: int = 20, stream=None) -> None:
    """Render with rich; model names and text are never interpreted as markup."""
    import sys

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=stream or sys.stdout, highlight=False)
    console.print(Text(f"A: {comparison.name_a}\nB: {comparison.name_b}"), soft_wrap=True)
    table = Table(caption="Rates over all answers on paired prompts; McNemar on per-prompt verdicts.")
    for column in ("prompts", "n", "A refuses", "B refuses", "change", "A only/B only", "McNemar"):
        table.add_column(column, overflow="fold")
    for k in comparison.kinds.values():
        table.add_row(
            k.kind, str(k.n), _rate(k.rate_a), _rate(k.rate_b), f"{100 * k.change:+.1f} pts",
            f"{k.b}/{k.c}", f"{fmt_p(k.p_value)} {k.method}",
        )  # fmt: skip
    console.print(table)
    console.print(Text(comparison.summary), soft_wrap=True)
    ties = sum(k.ties for k in comparison.kinds.values())
    if ties:
        console.print(
            Text(f"{ties} prompt(s) with a tied majority over repeats were left out of the test."), soft_wrap=True
        )
    if comparison.only_a or comparison.only_b:
        console.print(
            Text(
                f"Unpaired prompts (no counted answer on the other side): A {comparison.only_a}, B {comparison.only_b}."
            ),
            soft_wrap=True,
        )
    shown = [r for r in comparison.rows if r.disagree or r.unsettled]
    if not shown:
        console.print(Text("The two agree on every paired prompt."))
        return
    console.print(
        Text(f"\nPrompts where they differ ({len(shown)}; showing {min(max(0, show), len(shown))}):", style="bold")
    )
    for i, r in enumerate(shown[: max(0, show)], start=1):
        console.print(
            Text(
                f"\n{i}. [{r.category}] {r.row_id}   A: {_verdict_label(r.a)}   B: {_verdict_label(r.b)}", style="bold"
            )
        )
        console.print(Text(f"   prompt: {_clip(r.prompt, 240)}"))
        console.print(Text(f"   A: {_clip(r.answer_a)}"))
        console.print(Text(f"   B: {_clip(r.answer_b)}"))


def main_compare(args: argparse.Namespace, stream=None) -> int:
    """`orbench-play compare`: print the comparison; CompareError means bad input (exit 2)."""
    comparison = comparison_from_files(args.files, args.a, args.b)
    print_comparison(comparison, show=args.show, stream=stream)
    if getattr(args, "out", None):
        from .export import neutralise_csv_cell

        frame = comparison_frame(comparison)
        frame.map(neutralise_csv_cell).to_csv(args.out, index=False, lineterminator="\r\n")
    return 0
