"""A comparison for people: tables (pandas, for the UI and `--out`), the
terminal rendering (rich), and the comparison of results files that
`orbench-play compare` (`cli.compare`) prints."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..scoring import Rate
from ..scoring.stability import Tally
from ..types import CellResult
from .files import load_results as _load_file
from .stats import CompareError, Comparison, compare, compare_variants, fmt_p, quoted_list, select, variants

if TYPE_CHECKING:
    import pandas as pd

FRAME_COLUMNS: tuple[str, ...] = (
    "row_id", "kind", "category", "prompt", "verdict A", "verdict B", "answer A", "answer B", "disagree",
)  # fmt: skip


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


def comparison_from_files(
    files: Sequence[str],
    a: str | None = None,
    b: str | None = None,
    turn: int = 1,
    *,
    loader: Callable[[str], list[CellResult]] | None = None,
) -> Comparison:
    """Compare two results (or two variants of one), at one `turn` of the conversations
    (1: the OR-Bench prompt); `loader` reads one source (default `load_results`; the
    CLI passes one that also reads published sessions)."""
    load_results = loader or _load_file
    if len(files) > 2:
        raise CompareError("give one results file (with --a and --b) or two files.")
    if len(files) == 1:
        results = load_results(files[0])
        names = variants(results)
        if a is None and b is None and len(names) == 2:
            a, b = names
        if a is None or b is None:
            raise CompareError(f"{files[0]} has variants {quoted_list(names)}; choose two with --a NAME --b NAME.")
        return compare_variants(results, a, b, turn=turn)
    ra_all, rb_all = load_results(files[0]), load_results(files[1])
    name_a, ra = select(ra_all, a, where=files[0], flag="--a")
    name_b, rb = select(rb_all, b, where=files[1], flag="--b")
    if name_a == name_b:  # e.g. the same model name before and after a fine-tune
        name_a, name_b = f"{name_a} ({Path(files[0]).name})", f"{name_b} ({Path(files[1]).name})"
    return compare(ra, rb, name_a=name_a, name_b=name_b, turn=turn)


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
