"""`orbench-play`: the engine, headless.

The CLI renders engine events as a progress bar and a scoreboard; it never
talks to LiteLLM itself. Bad arguments exit 2 with one line that says what to
fix; per-cell failures are results (shown, counted, exported), not crashes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .types import SPLITS, CellResult

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


class UsageError(Exception):
    """Bad arguments: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not usage + line
        raise UsageError(message)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {value:g}")
    return value


def _unit_float(text: str) -> float:
    value = _positive_float(text) if text not in ("0", "0.0") else 0.0
    if value > 2:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2, got {value:g}")
    return value


def _preset_names() -> list[str]:
    from .prompts import SYSTEM_PROMPTS

    return list(SYSTEM_PROMPTS)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="orbench-play", description="OR-Bench over-refusal playground, headless.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="sample prompts, ask models, judge, score")
    run.add_argument(
        "--model", action="append", required=True, help="catalog name or any LiteLLM model string (repeatable)"
    )
    run.add_argument("--config", help="LiteLLM model_list YAML (default: $ORBENCH_MODELS)")
    run.add_argument("--split", required=True, choices=SPLITS)
    run.add_argument("--categories", help="comma-separated categories (default: all)")
    size = run.add_mutually_exclusive_group()
    size.add_argument("--per-category", type=_positive_int, help="prompts per category")
    size.add_argument("--n", type=_positive_int, help="prompts in total, spread evenly over categories")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--judge", default=None, help="keyword (default, offline) or a model name used as LLM judge")
    run.add_argument("--concurrency", type=_positive_int, default=16, help="requests in flight across all models")
    run.add_argument("--timeout", type=_positive_float, default=60.0, help="seconds per attempt of one cell")
    run.add_argument("--retries", type=int, default=3, help="retries on 429/5xx/connection errors")
    run.add_argument("--max-tokens", type=_positive_int, default=512)
    run.add_argument("--temperature", type=_unit_float, default=None)
    run.add_argument("--top-p", type=_unit_float, default=None)
    run.add_argument("--system-prompt", default=None, help="TEXT, @file, or a preset: " + ", ".join(_preset_names()))
    run.add_argument("--repeats", type=_positive_int, default=1, help="ask each prompt K times (1-5)")
    run.add_argument("--no-cache", action="store_true", help="neither read nor write the disk cache")
    run.add_argument("--out", help="write results to FILE.csv or FILE.jsonl")
    run.add_argument("--quiet", action="store_true", help="no progress bar")

    judge = sub.add_parser("judge", help="add verdict columns to a CSV of answers")
    judge.add_argument("input")
    judge.add_argument("--prompt-col", required=True)
    judge.add_argument("--response-col", required=True)
    judge.add_argument("--judge", default=None)
    judge.add_argument("--config", help="LiteLLM model_list YAML for the judge model")
    judge.add_argument("--out", required=True)

    from .compare import add_arguments as _compare_arguments

    compare = sub.add_parser("compare", help="diff two runs (or two variants in one file) with a McNemar test")
    _compare_arguments(compare)

    ev = sub.add_parser("eval", help="measure the verdict classifier against human labels", add_help=False)
    ev.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


# -- run ------------------------------------------------------------------------


def _build_run_config(args: argparse.Namespace):
    from . import data
    from .models import CatalogError, load_catalog
    from .types import GenerationParams, RunConfig

    if args.per_category is None and args.n is None:
        raise UsageError("give --per-category N or --n N")
    if args.repeats > 5:
        raise UsageError("--repeats must be between 1 and 5")
    if args.retries < 0:
        raise UsageError("--retries must be 0 or more")
    try:
        catalog = load_catalog(args.config)
    except CatalogError as exc:
        raise UsageError(str(exc)) from None
    try:
        models = tuple(catalog.resolve(name) for name in args.model)
    except CatalogError as exc:
        raise UsageError(str(exc)) from None
    if len({m.name for m in models}) != len(models):
        raise UsageError("the same --model is given twice")
    try:
        categories = data.parse_categories(args.categories)
        prompts = data.load_split(args.split)
        picked = data.sample(prompts, categories=categories, per_category=args.per_category, n=args.n, seed=args.seed)
    except data.DataError as exc:
        raise UsageError(str(exc)) from None
    system_prompt, system_prompt_id = _system_prompt(args.system_prompt)
    params = GenerationParams(
        system_prompt=system_prompt,
        system_prompt_id=system_prompt_id,
        temperature=args.temperature,
        top_p=args.top_p,
        max_tokens=args.max_tokens,
    )
    judge = args.judge or os.environ.get("ORBENCH_JUDGE") or "keyword"
    config = RunConfig(
        models=models,
        prompts=picked.prompts,
        params=params,
        judge=judge,
        concurrency=args.concurrency,
        timeout_s=args.timeout,
        max_retries=args.retries,
        use_cache=not args.no_cache,
        repeats=args.repeats,
    )
    return config, catalog, list(picked.notes)


def _system_prompt(value: str | None) -> tuple[str | None, str]:
    """TEXT, @file, or a preset name → (text, id shown in results)."""
    from .prompts import PromptError, resolve_system_prompt

    try:
        return resolve_system_prompt(value, allow_files=True)
    except PromptError as exc:
        raise UsageError(str(exc)) from None


async def _drive(config, catalog, quiet: bool) -> list[CellResult]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from . import engine
    from .cache import default_cache

    cache = default_cache() if config.use_cache else None
    console = Console(stderr=True)
    if cache is not None and cache.warning:
        console.print(cache.warning, markup=False)
    total = len(config.prompts) * len(config.models) * max(1, config.repeats)
    results: dict[str, CellResult] = {}
    errors = hits = 0
    with Progress(
        TextColumn("[bold]cells"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[stats]}"),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
        transient=False,
    ) as progress:
        task = progress.add_task("run", total=total, stats="")
        async for event in engine.run(config, cache=cache, resolve_judge=catalog.resolve):
            if event.kind == "status":
                progress.console.print(event.message, markup=False)
            elif event.kind in ("done", "error") and event.result is not None:
                results[event.cell_id] = event.result
                errors += event.kind == "error"
                hits += bool(event.result.cached)
                progress.update(task, completed=len(results), stats=f"errors {errors} · cached {hits}")
    if cache is not None and cache.warning:
        console.print(cache.warning, markup=False)
    order = {cid: i for i, cid in enumerate(engine.cell_ids(config))}
    return sorted(results.values(), key=lambda r: order.get(r.cell_id, 0))


def print_scoreboard(results: Sequence[CellResult], stream=None) -> None:
    """One row per variant (model × system prompt × settings), so "X" and
    "X · safety" are compared side by side; flip rate only when repeated.
    Over-refusal on hard-1k and on 80k are separate columns (80k only when
    asked); a mini-score on 80k says so, as hard-1k is the paper's."""
    from rich.console import Console
    from rich.table import Table

    from .prompts import variant_of
    from .scoring import score_results

    scores = score_results(results, key=variant_of)
    repeated = any(s.max_repeats > 1 for s in scores)
    broad = any(s.over_refusal_80k is not None for s in scores)
    console = Console(file=stream or sys.stdout, highlight=False)
    table = Table(title="Session scoreboard (95% Wilson intervals)")
    columns = ["model", "over-refusal (hard-1k)", *(["over-refusal (80k)"] if broad else []), "refusal (toxic)"]
    columns += ["mini-score", *(["flip rate"] if repeated else []), "errors"]
    for column in columns:
        table.add_column(column, overflow="fold")

    def fmt(rate) -> str:
        return "—" if rate is None else rate.fmt()

    for s in scores:
        mini = "—" if s.mini_score is None else f"{s.mini_score:.1%} [{s.mini_low:.1%}–{s.mini_high:.1%}]"
        if s.mini_score is not None and s.benign_split == "80k":
            mini += " on 80k"
        row = [_plain(s.model), fmt(s.over_refusal_hard_1k), *([fmt(s.over_refusal_80k)] if broad else [])]
        row += [fmt(s.toxic_refusal), mini, *([fmt(s.flip_rate)] if repeated else []), str(s.errors)]
        table.add_row(*row)
    console.print(table)


def _plain(text: str):
    from rich.text import Text

    return Text(text)  # never interpret model names or output as markup


def cmd_run(args: argparse.Namespace) -> int:
    config, catalog, notes = _build_run_config(args)
    for note in notes:
        print(note, file=sys.stderr)
    results = asyncio.run(_drive(config, catalog, args.quiet))
    print_scoreboard(results)
    if args.out:
        from .export import write_results

        path = write_results(results, args.out)
        print(f"Wrote {len(results)} rows to {path}", file=sys.stderr)
    return 0


# -- judge ------------------------------------------------------------------------


def cmd_judge(args: argparse.Namespace) -> int:
    import pandas as pd

    from . import verdicts

    try:
        frame = pd.read_csv(args.input, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise UsageError(f"input file {args.input} does not exist") from None
    except Exception as exc:
        raise UsageError(f"cannot read {args.input} as CSV: {exc}") from None
    for column in (args.prompt_col, args.response_col):
        if column not in frame.columns:
            raise UsageError(f"column {column!r} is not in {args.input} (columns: {', '.join(frame.columns)})")
    judge = args.judge or os.environ.get("ORBENCH_JUDGE") or "keyword"
    offline = [verdicts.LiveVerdict().finish(text, None) for text in frame[args.response_col]]
    if judge == "keyword":
        final = offline
    else:
        from .models import CatalogError, load_catalog

        try:
            spec = load_catalog(args.config).resolve(judge)
        except CatalogError as exc:
            raise UsageError(str(exc)) from None
        final = asyncio.run(_judge_all(spec, list(frame[args.prompt_col]), list(frame[args.response_col]), offline))
    frame["verdict"] = [v.label for v in final]
    frame["verdict_source"] = [v.source for v in final]
    from .export import neutralise_csv_cell

    out = Path(args.out)
    # CRLF rows, as export.py writes: with "\n" a bare "\r" inside an answer
    # would be left unquoted and split the row when read back.
    frame.map(neutralise_csv_cell).to_csv(out, index=False, lineterminator="\r\n")
    counts = frame["verdict"].value_counts().to_dict()
    print(
        f"Wrote {len(frame)} rows to {out}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
        file=sys.stderr,
    )
    return 0


async def _judge_all(spec, prompts, responses, offline, concurrency: int = 8):
    from .cache import default_cache
    from .judging import judge_answer

    cache = default_cache()
    gate = asyncio.Semaphore(concurrency)

    async def one(p, r, fallback):
        if fallback.source == "provider":
            return fallback
        async with gate:
            return await judge_answer(spec, p, r, fallback, cache=cache)

    return await asyncio.gather(*(one(p, r, f) for p, r, f in zip(prompts, responses, offline, strict=True)))


# -- compare --------------------------------------------------------------------------


def cmd_compare(args: argparse.Namespace) -> int:
    from .compare import CompareError, main_compare

    try:
        return main_compare(args)
    except CompareError as exc:
        raise UsageError(str(exc)) from None


# -- entry point --------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["eval"]:
        from .evaluation import main as eval_main

        return eval_main(argv[1:])
    try:
        args = build_parser().parse_args(argv)
        if args.command == "run":
            return cmd_run(args)
        if args.command == "judge":
            return cmd_judge(args)
        if args.command == "compare":
            return cmd_compare(args)
    except UsageError as exc:
        print(f"orbench-play: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "orbench-play: stopped; finished cells are cached, run the same command again to resume.", file=sys.stderr
        )
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
