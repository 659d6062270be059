"""`orbench-play judge`: add `verdict` and `verdict_source` columns to a CSV of answers."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from . import args as cli_args
from .args import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", type=cli_args.existing_file)
    parser.add_argument("--prompt-col", required=True)
    parser.add_argument("--response-col", required=True)
    parser.add_argument("--judge", default=None, help=cli_args.JUDGE_HELP)
    parser.add_argument("--config", help="LiteLLM model_list YAML for the judge model")
    parser.add_argument("--out", required=True, type=cli_args.output_file(".csv"), help="OUT.csv")


def cmd_judge(args: argparse.Namespace) -> int:
    import pandas as pd

    from .. import verdicts

    try:
        frame = pd.read_csv(args.input, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise UsageError(f"input file {args.input} does not exist") from None
    except Exception as exc:
        raise UsageError(f"cannot read {args.input} as CSV: {exc}") from None
    from ..export import neutralise_csv_cell, unneutralise_csv_cell

    frame = frame.map(unneutralise_csv_cell)  # our own exports: judge the text, not the formula guard
    for column in (args.prompt_col, args.response_col):
        if column not in frame.columns:
            raise UsageError(f"column {column!r} is not in {args.input} (columns: {', '.join(frame.columns)})")
    judge = cli_args.judge_choice(args.judge)
    offline = [verdicts.LiveVerdict().finish(text, None) for text in frame[args.response_col]]
    if judge == "keyword":
        final = offline
    else:
        from ..models import CatalogError, load_catalog

        try:
            spec = load_catalog(args.config).resolve(judge)
        except CatalogError as exc:
            raise UsageError(str(exc)) from None
        final = asyncio.run(_judge_all(spec, list(frame[args.prompt_col]), list(frame[args.response_col]), offline))
    frame["verdict"] = [v.label for v in final]
    frame["verdict_source"] = [v.source for v in final]
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
    from ..cache import default_cache
    from ..engine.judging import judge_answer

    cache = default_cache()
    gate = asyncio.Semaphore(concurrency)

    async def one(p, r, fallback):
        if fallback.source == "provider":
            return fallback
        async with gate:
            return await judge_answer(spec, p, r, fallback, cache=cache)

    from .. import budget

    try:
        return await asyncio.gather(*(one(p, r, f) for p, r, f in zip(prompts, responses, offline, strict=True)))
    finally:  # verdicts and spend written behind the calls reach their stores
        await cache.drain()
        await budget.drain()
