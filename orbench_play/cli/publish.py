"""`orbench-play publish`: a session's results as a Hugging Face dataset, on the
Hub (`--repo USER/NAME`) or in a folder (`--to-folder DIR`). The dataset is
`publish`'s; this module is the command's arguments and its output.

The token comes from `--token` or HF_TOKEN and goes only to the Hub's calls:
never printed, logged or written (an error's text is scrubbed of it)."""

from __future__ import annotations

import argparse
import os
import sys

from .args import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "sources",
        nargs="+",
        metavar="RESULTS",
        help="results files (CSV or JSONL from `run --out`), or published sessions (folders, Hub ids), joined",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--repo", metavar="USER/NAME", help="publish to this dataset repository on the Hub")
    where.add_argument("--to-folder", metavar="DIR", help="write the dataset folder (README.md + data/*.parquet) here")
    parser.add_argument("--private", action="store_true", help="make a new Hub repository private")
    parser.add_argument(
        "--token",
        default=None,
        help="a Hub token with write access (default: $HF_TOKEN; prefer the variable, a flag shows in `ps`)",
    )
    parser.add_argument("--title", default=None, help="the dataset's pretty name (default: orbench-play session DATE)")


def cmd_publish(args: argparse.Namespace) -> int:
    from ..compare import CompareError
    from ..publish import PublishError, publish_to_hub, read_any, write_folder

    token = (args.token or os.environ.get("HF_TOKEN") or "").strip()
    try:
        results = [r for source in args.sources for r in read_any(source, token=token or None)]
        if args.to_folder:
            folder = write_folder(results, args.to_folder, title=args.title)
            print(f"Wrote {len(results)} rows and the dataset card to {folder}", file=sys.stderr)
            return 0
        if not token:
            raise UsageError("publishing to the Hub needs a token with write access: set HF_TOKEN (or pass --token).")
        url = publish_to_hub(results, args.repo, token=token, private=args.private, title=args.title)
    except (PublishError, CompareError) as exc:
        raise UsageError(str(exc)) from None
    print(f"Published {len(results)} rows to {url}", file=sys.stderr)
    return 0
