"""`orbench-play compare`: two runs (or two variants in one file), prompt by
prompt, with a McNemar test per split. The comparison itself is `compare`'s;
this module is the command's arguments and its output."""

from __future__ import annotations

import argparse

from ..compare import CompareError, comparison_frame, comparison_from_files, print_comparison
from .args import UsageError, output_file, positive_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files",
        nargs="+",
        metavar="RESULTS",
        help="one or two results: files (CSV or JSONL from `run --out`), or published sessions "
        "(a dataset folder from `publish --to-folder`, or a Hub id USER/NAME; HF_TOKEN for a private one)",
    )
    parser.add_argument("--a", dest="a", metavar="NAME", help="variant (or model) A: in the first file")
    parser.add_argument(
        "--b", dest="b", metavar="NAME", help="variant (or model) B: in the second file, or the same file"
    )
    parser.add_argument(
        "--turn", type=positive_int, default=1, metavar="N",
        help="compare turn N of the conversations (default 1, the OR-Bench prompt; 2: the answers after "
        "`run --follow-up`)",
    )  # fmt: skip
    parser.add_argument("--show", type=int, default=20, metavar="N", help="disagreeing prompts to print (default 20)")
    parser.add_argument(
        "--out", metavar="FILE.csv", type=output_file(".csv"), help="write the full side-by-side table as CSV"
    )


def _read(source: str):
    """A results file, else a published session (folder or Hub id), as results."""
    from pathlib import Path

    from ..compare import load_results
    from ..publish import PublishError, load_session
    from ..publish.folder import looks_like_hub_id

    path = Path(source).expanduser()
    if path.is_file() or not (path.is_dir() or looks_like_hub_id(source)):
        return load_results(source)  # a file, or its usual "does not exist"

    try:
        return load_session(source)
    except PublishError as exc:
        raise CompareError(str(exc)) from None


def cmd_compare(args: argparse.Namespace, stream=None) -> int:
    """Print the comparison; bad input (a CompareError) is a usage error (exit 2)."""
    try:
        comparison = comparison_from_files(args.files, args.a, args.b, turn=getattr(args, "turn", 1), loader=_read)
    except CompareError as exc:
        raise UsageError(str(exc)) from None
    print_comparison(comparison, show=args.show, stream=stream)
    if getattr(args, "out", None):
        from ..export import neutralise_csv_cell

        frame = comparison_frame(comparison)
        frame.map(neutralise_csv_cell).to_csv(args.out, index=False, lineterminator="\r\n")
    return 0
