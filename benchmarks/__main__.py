"""`python -m benchmarks [--quick] [--only NAME,...] [--out bench-results.json]`

Runs the figures of issues #5 and #10, each against its floor measured back to
back on the same machine, prints a table and writes the JSON. Never fails on
timing: a figure that cannot run here is reported as skipped with the reason.
Exit status is 0 unless the command line is wrong.
"""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys
import time
import traceback

from . import common
from .report import Figure, machine, skipped, table, write_json

GROUPS = (
    "fanout", "scale", "live_engine", "replay", "coldstart", "live", "live_page", "load", "load_short", "replicas",
    "local", "verdicts", "prompt_sets", "soak", "resources", "first_run",
)  # fmt: skip
UNITS = {
    "fanout": "s",
    "scale": "s",
    "live_engine": "s",
    "replay": "s",
    "coldstart": "s",
    "live": "s",
    "live_page": "s",
    "load": "x",
    "load_short": "s",
    "replicas": "s",
    "local": "x",
    "verdicts": "verdicts/s",
    "prompt_sets": "s",
    "soak": "MB",
    "resources": "MB",
    "first_run": "s",
}


MODULES = {
    "live_engine": "live_engine",
    "replay": "replay",
    "coldstart": "coldstart",
    "live": "live",
    "live_page": "live_page",
    "load": "load",
    "load_short": "load_short",
    "replicas": "replicas",
    "local": "local",
    "verdicts": "verdicts_bench",
    "prompt_sets": "prompt_sets",
    "soak": "soak",
    "resources": "resources",
    "first_run": "first_run",
}
"""Groups whose module's `figures(quick, command)` gives their figures (imported only when run)."""


def _run_group(name: str, quick: bool, command: str, state: dict) -> list[Figure]:
    if name == "fanout":
        from . import fanout

        figs, state["fanout64"] = fanout.figures_fanout(quick, command)
        return figs
    if name == "scale":
        from . import fanout

        return fanout.figures_scale(quick, command, state.get("fanout64"))
    module = importlib.import_module(f".{MODULES[name]}", __package__)
    return module.figures(quick, command)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (smoke test): numbers are not meaningful")
    ap.add_argument("--only", default="", help=f"comma-separated subset of: {','.join(GROUPS)}")
    ap.add_argument("--out", default="bench-results.json", help="where to write the JSON (default: %(default)s)")
    args = ap.parse_args(argv)
    only = [x.strip() for x in args.only.split(",") if x.strip()] or list(GROUPS)
    unknown = [x for x in only if x not in GROUPS]
    if unknown:
        ap.error(f"unknown figure(s) {','.join(unknown)}; choose from {','.join(GROUPS)}")

    common.setup_env()
    command = "python -m benchmarks " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    command = command.strip()
    env = machine()
    print(
        f"orbench-play benchmarks{' (quick)' if args.quick else ''}: {', '.join(only)}  [{env['cpus']} CPUs, load {env.get('loadavg')}]",
        flush=True,
    )
    figures: list[Figure] = []
    state: dict = {}
    t_all = time.perf_counter()
    for name in GROUPS:
        if name not in only:
            continue
        t0 = time.perf_counter()
        print(f"- {name} ...", end="", flush=True)
        try:
            got = _run_group(name, args.quick, command, state)
        except Exception as exc:  # a broken figure is reported, the others still run
            traceback.print_exc()
            got = [skipped(name, UNITS[name], f"error: {exc.__class__.__name__}: {exc}", command)]
        for f in got:
            f.detail.setdefault("command", command)
            f.detail.setdefault("machine", env)
            f.detail["machine"] = {**env, **{k: v for k, v in machine().items() if k in ("loadavg", "time")}}
        figures.extend(got)
        print(f" {time.perf_counter() - t0:.1f} s", flush=True)
        write_json(figures, args.out)  # partial results survive an interruption
    print()
    print(table(figures))
    print(f"\n{len(figures)} figures in {time.perf_counter() - t_all:.0f} s; written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
