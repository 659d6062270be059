"""`orbench-play`: the engine, headless.

The CLI renders engine events as a progress bar and a scoreboard; it never
talks to LiteLLM itself. Bad arguments exit 2 with one line that says what to
fix; per-cell failures are results (shown, counted, exported), not crashes.

This module is the entry point (`orbench_play.cli:main`): the parser and the
dispatch. Each subcommand lives in its own module (`run`, `judge`, `compare`, `publish`, `score`,
`review`; `eval`
is `evaluation.suite`'s own command line).

May import anything below it: the engine, data, models, verdicts, cache,
compare, evaluation. Nothing imports the CLI.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import compare as cli_compare
from . import judge as cli_judge
from . import publish as cli_publish
from . import review as cli_review
from . import run as cli_run
from . import score as cli_score
from .args import Parser, UsageError
from .run import print_scoreboard

__all__ = ["UsageError", "build_parser", "main", "print_scoreboard"]

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="orbench-play", description="OR-Bench over-refusal playground, headless.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    cli_run.add_arguments(sub.add_parser("run", help="sample prompts, ask models, judge, score"))
    cli_judge.add_arguments(sub.add_parser("judge", help="add verdict columns to a CSV of answers"))

    cli_compare.add_arguments(
        sub.add_parser("compare", help="diff two runs (or two variants in one file) with a McNemar test")
    )

    cli_publish.add_arguments(
        sub.add_parser("publish", help="a session's results as a Hugging Face dataset (Hub or folder)")
    )
    cli_score.add_arguments(
        sub.add_parser("score", help="error-aware refusal rates per group of a run or judge output")
    )
    cli_review.add_arguments(sub.add_parser("review", help="the rows worth a person's look, to fill in"))

    ev = sub.add_parser("eval", help="measure the verdict classifier against human labels", add_help=False)
    ev.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


# -- entry point --------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["eval"]:
        from ..evaluation.suite import main as eval_main

        return eval_main(argv[1:], prog="orbench-play eval")
    try:
        args = build_parser().parse_args(argv)
        if args.command == "run":
            return cli_run.cmd_run(args)
        if args.command == "judge":
            return cli_judge.cmd_judge(args)
        if args.command == "compare":
            return cli_compare.cmd_compare(args)
        if args.command == "publish":
            return cli_publish.cmd_publish(args)
        if args.command == "score":
            return cli_score.cmd_score(args)
        if args.command == "review":
            return cli_review.cmd_review(args)
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
