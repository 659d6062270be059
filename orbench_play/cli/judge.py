"""`orbench-play judge`: add `verdict`, `verdict_source`, `judge_error`, `p_refusal` and `sure`
columns to a CSV of answers (`run`'s own output needs no column flags)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from ..verdicts.presets import auto_judge
from . import args as cli_args
from .args import UsageError

RUN_PROMPT_COL, RUN_RESPONSE_COL = "prompt", "response"
"""`run`'s own result columns: a file that has them needs no --prompt-col/--response-col."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", type=cli_args.existing_file)
    parser.add_argument(
        "--prompt-col", help=f"the prompt column (default: {RUN_PROMPT_COL!r}, as `orbench-play run` writes it)"
    )
    parser.add_argument(
        "--response-col", help=f"the answer column (default: {RUN_RESPONSE_COL!r}, as `orbench-play run` writes it)"
    )
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
    prompt_col, response_col = _columns(args, list(frame.columns))
    judge = cli_args.judge_choice(args.judge)
    # `run`'s failed cells (an `error` column) keep their error verdict: there is no answer to judge.
    failed = [bool(e.strip()) for e in frame["error"]] if "error" in frame.columns else [False] * len(frame)
    offline = [
        verdicts.LiveVerdict().finish(text, None, prompt=prompt)
        for prompt, text in zip(frame[prompt_col], frame[response_col], strict=True)
    ]
    if judge == "keyword":
        final = offline
    else:
        from ..models import CatalogError, load_catalog

        try:
            spec = load_catalog(args.config).resolve(auto_judge(judge) or judge)
        except CatalogError as exc:
            raise UsageError(str(exc)) from None
        final = asyncio.run(
            _judge_all(spec, judge, list(frame[prompt_col]), list(frame[response_col]), offline, skip=failed)
        )
    from ..engine.judging import judge_asked, judged_source
    from ..scoring import sureness

    # Only an answer the judge was asked about can say it failed (not `keyword`, not a sure
    # verdict under `auto:<judge>`, not the provider layer).
    outcomes = [
        judged_source(v) if judge_asked(judge, o) else (v.source, "") for v, o in zip(final, offline, strict=True)
    ]
    frame["verdict"] = ["error" if bad else v.label for v, bad in zip(final, failed, strict=True)]
    frame["verdict_source"] = ["" if bad else o[0] for o, bad in zip(outcomes, failed, strict=True)]
    frame["judge_error"] = ["" if bad else o[1] for o, bad in zip(outcomes, failed, strict=True)]
    sure_of = [(None, None) if bad else sureness.of_verdict(v) for v, bad in zip(final, failed, strict=True)]
    frame["p_refusal"] = ["" if p is None else f"{p:.6g}" for p, _ in sure_of]
    frame["sure"] = ["" if s is None else str(s) for _, s in sure_of]
    out = Path(args.out)
    # CRLF rows, as export.py writes: with "\n" a bare "\r" inside an answer
    # would be left unquoted and split the row when read back.
    frame.map(neutralise_csv_cell).to_csv(out, index=False, lineterminator="\r\n")
    counts = frame["verdict"].value_counts().to_dict()
    print(
        f"Wrote {len(frame)} rows to {out}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
        file=sys.stderr,
    )
    warning = judge_failure_line(list(frame["judge_error"]))
    if warning:
        print(warning, file=sys.stderr)
    return 0


def judge_failure_line(errors: list[str]) -> str:
    """One warning line when the LLM judge fell back on some answers: how many, and the
    first reason (empty when it never did)."""
    failed = [e for e in errors if e]
    if not failed:
        return ""
    n = len(failed)
    return (
        f"Warning: the LLM judge gave no verdict for {n} answer{'s' if n != 1 else ''}; "
        f'the offline verdict stands for {"them" if n != 1 else "it"} (verdict_source ends in "(judge failed)", '
        f"the reason is in judge_error). First reason: {failed[0]}"
    )


def _columns(args: argparse.Namespace, columns: list[str]) -> tuple[str, str]:
    """The prompt and answer columns: the flags, else `run`'s own `prompt` and `response`."""
    chosen = []
    for flag, given, default in (
        ("--prompt-col", args.prompt_col, RUN_PROMPT_COL),
        ("--response-col", args.response_col, RUN_RESPONSE_COL),
    ):
        name = given or default
        if name not in columns:
            how = "" if given else f" (the default for a file `orbench-play run` wrote); name it with {flag}"
            raise UsageError(f"column {name!r} is not in {args.input}{how} (columns: {', '.join(columns)})")
        chosen.append(name)
    return chosen[0], chosen[1]


async def _judge_all(spec, choice, prompts, responses, offline, concurrency: int = 8, skip=None):
    """Judge every answer (or, under `auto:<judge>`, the unsure ones) with `spec`; `skip`
    marks failed cells, which keep their error."""
    from ..cache import default_cache
    from ..engine.judging import judge_answer, judge_asked

    cache = default_cache()
    gate = asyncio.Semaphore(concurrency)

    async def one(p, r, fallback, skipped):
        if skipped or not judge_asked(choice, fallback):
            return fallback
        async with gate:
            return await judge_answer(spec, p, r, fallback, cache=cache)

    from .. import budget

    skip = skip or [False] * len(offline)
    try:
        return await asyncio.gather(
            *(one(p, r, f, s) for p, r, f, s in zip(prompts, responses, offline, skip, strict=True))
        )
    finally:  # verdicts and spend written behind the calls reach their stores
        await cache.drain()
        await budget.drain()
