"""`orbench-play review FILE --budget K --out PICKS.csv [--seed S]`: the K rows of a
run or judge output worth a person's look, drawn by the review policy
(`scoring.review_policy`: systematic PPS, unsure verdicts most likely, every
verdict some chance), written with every column of FILE plus `row` (the row's
0-based position among FILE's data rows), `pick_probability` (its inclusion
probability) and an empty `human_verdict` to fill in. `orbench-play score FILE
--reviews PICKS.csv` then uses the filled rows. Rows a person already decided
(`verdict_source` `user`) are not drawn.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..export import csv_line, neutralise_csv_cell
from ..scoring import review_policy, sureness
from . import args as cli_args
from .args import UsageError
from .score import counted, probabilities, read_table, text, write_atomically

ADDED = ("row", "pick_probability", "human_verdict")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=cli_args.existing_file, help="a run or judge output (CSV or JSONL)")
    parser.add_argument("--budget", required=True, type=cli_args.positive_int, metavar="K", help="rows to pick")
    parser.add_argument(
        "--seed", type=int, default=review_policy.DEFAULT_SEED, help=f"(default {review_policy.DEFAULT_SEED})"
    )
    parser.add_argument("--out", required=True, type=cli_args.output_file(".csv"), help="PICKS.csv")


def cmd_review(args: argparse.Namespace) -> int:
    table = read_table(Path(args.file))
    rows = counted(table)
    p, note = probabilities(table, rows)
    frame = [i for i in rows if text(table.rows[i].get("verdict_source")).strip() != sureness.USER]
    if args.budget > len(frame):
        raise UsageError(
            f"--budget {args.budget}: {table.path} has only {len(frame)} rows with a verdict a person has not set"
        )
    weights = [review_policy.weight(p[i]) for i in frame]
    picks = review_policy.systematic_sample(weights, args.budget, seed=args.seed)
    columns = [c for c in table.columns if c not in ADDED]
    lines = [csv_line([*columns, *ADDED])]
    unsure = 0
    for j, pi in picks:
        i = frame[j]
        row = table.rows[i]
        unsure += 0.2 < p[i] < 0.8
        values = [neutralise_csv_cell(text(row.get(c))) for c in columns]
        lines.append(csv_line([*values, i, f"{pi:.6g}", ""]))
    if note:
        print(note, file=sys.stderr)
    write_atomically(Path(args.out), "".join(lines))
    print(
        f"Wrote {len(picks)} rows to {args.out} ({unsure} unsure, {len(picks) - unsure} sure); fill in "
        f"human_verdict, then: orbench-play score {args.file} --reviews {args.out} --out OUT.csv",
        file=sys.stderr,
    )
    return 0
