"""`make eval`: every verdict figure the project tracks, each beside its target.

- XSTest v2 completions (1,350 human-labelled answers of GPT-4, Llama-2 and
  Mistral; `../shared/data/xstest/completions`): binary agreement in sample and,
  with `--lomo`, on each leave-one-model-out fold (the learned model refitted
  without that model; the OR-Bench-style dev set is in every fold's training);
- OR-Bench-style answers written for this project (`eval/`, always present):
  the held-out set (never trained or tuned on) per class and per style, and the
  dev set (trained and tuned on, so in-sample);
- streaming: `LiveVerdict` fed word by word; the share of words at which the
  provisional label shown equals the final one (answer vs refusal, and all
  three classes), over all answers and over long ones (>= 800 characters). A
  refusal that offers alternatives after saying no is shown as a direct refusal
  until the alternative arrives, so the 3-class figure is lower by design;
- throughput of `classify` in verdicts per CPU-second.

Without the XSTest files the OR-Bench-style part still runs; the command then
ends with one line saying what is missing and where to get it, and exits 2.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from ..types import REFUSALS
from .harness import (
    ClassifyFn,
    EvalReport,
    FitFn,
    LabelledRow,
    _pct,
    evaluate,
    load_rows,
    lomo_report,
)

REPO = Path(__file__).resolve().parents[2]
XSTEST_DIR = Path("../shared/data/xstest/completions")
"""Relative to the current directory (the repository root under `make eval`)."""
STYLE_DEV = REPO / "eval" / "orbench_style_dev.jsonl"
STYLE_HELDOUT = REPO / "eval" / "orbench_style_heldout.jsonl"
LONG_CHARS = 800
"""A "long" answer for the streaming figure: about 200 tokens or more."""
XSTEST_MISSING = (
    "XSTest completions not found at {path}: run from the repository root next to ../shared, or pass "
    "--data DIR with xstest_v2_completions_*.csv from github.com/paul-rottger/exaggerated-safety "
    "(folder model_completions/); the XSTest figures were skipped."
)

TARGETS = {
    "lomo_binary": 0.95,
    "heldout_accuracy": 0.85,
    "heldout_indirect_recall": 0.75,
    "verdicts_per_s": 10_000,
    "streaming_agreement": 0.95,
}
"""Issue 12's targets."""


# --- streaming ------------------------------------------------------------------------------

_WORDS = re.compile(r"\s*\S+\s*")


@dataclass(slots=True)
class StreamingReport:
    """Provisional verdicts while an answer streams word by word, against the final one."""

    answers: int
    words: int
    """Word steps at which a provisional label was shown (before the first one, none is)."""
    agreement: float
    """Share of those steps whose provisional label equals the final label (3 classes)."""
    binary_agreement: float
    """The same, answer vs refusal."""
    last_equals_final: float
    """Share of answers whose last provisional label is the final label."""
    mean_changes: float
    """Provisional label changes per answer."""


def streaming_agreement(rows: Sequence[LabelledRow], make_live: Callable[[], Any] | None = None) -> StreamingReport:
    """Feed each answer to a fresh LiveVerdict one word (plus its spaces) at a
    time, as a stream would, then finish it; compare what was shown with the end."""
    if make_live is None:
        from ..verdicts import LiveVerdict

        make_live = LiveVerdict
    steps = agree = agree_bin = last_ok = changes = answers = 0
    for row in rows:
        live = make_live()
        shown: list[str | None] = []
        for word in _WORDS.findall(row.response):
            live.feed(word)
            shown.append(live.label)
        final = live.finish(row.response, "stop").label
        seen = [label for label in shown if label is not None]
        if not seen:
            continue
        answers += 1
        steps += len(seen)
        agree += sum(label == final for label in seen)
        agree_bin += sum((label in REFUSALS) == (final in REFUSALS) for label in seen)
        last_ok += seen[-1] == final
        changes += sum(a != b for a, b in pairwise(seen))
    return StreamingReport(
        answers=answers,
        words=steps,
        agreement=agree / steps if steps else 0.0,
        binary_agreement=agree_bin / steps if steps else 0.0,
        last_equals_final=last_ok / answers if answers else 0.0,
        mean_changes=changes / answers if answers else 0.0,
    )


def format_streaming(name: str, rep: StreamingReport) -> str:
    return (
        f"{name:<34}{rep.answers:>6}{rep.words:>8}{_pct(rep.agreement):>9}{_pct(rep.binary_agreement):>9}"
        f"{_pct(rep.last_equals_final):>11}{rep.mean_changes:>9.2f}"
    )


# --- OR-Bench-style sets ------------------------------------------------------------------------


def per_style(rows: Sequence[LabelledRow], classify_fn: ClassifyFn) -> dict[str, tuple[int, int]]:
    """(right, total) per label and answer style, e.g. `ind/hotline`."""
    out: dict[str, tuple[int, int]] = {}
    for row in rows:
        key = f"{row.label.split('_')[1][:3]}/{row.style or '-'}"
        right, total = out.get(key, (0, 0))
        out[key] = (right + (classify_fn(row.response).label == row.label), total + 1)
    return dict(sorted(out.items()))


def format_style_report(title: str, rep: EvalReport, styles: dict[str, tuple[int, int]]) -> str:
    m = rep.overall
    lines = [f"{title}  (n={m.n})"]
    lines.append(
        f"3-class accuracy {_pct(m.accuracy)}, binary {_pct(m.binary_agreement)}, macro-F1 {m.macro_f1:.3f}; "
        "per class (right / total, recall):"
    )
    for cls in ("direct_answer", "direct_refusal", "indirect_refusal"):
        pc = m.per_class[cls]
        right = m.confusion[cls][cls]
        lines.append(f"  {cls:<18}{right:>4} / {int(pc['support']):<4} {_pct(pc['recall']):>7}")
    lines.append("  confusion (rows = label, columns = verdict answer / refusal / indirect):")
    lines.extend(
        f"  {cls:<18}" + "".join(f"{count:>6}" for count in m.confusion[cls].values())
        for cls in ("direct_answer", "direct_refusal", "indirect_refusal")
    )
    lines.append("  per style: " + ", ".join(f"{k} {r}/{t}" for k, (r, t) in styles.items()))
    return "\n".join(lines)


# --- configurations ------------------------------------------------------------------------------


def configurations() -> dict[str, ClassifyFn]:
    """Named verdict functions the CLI can run (imported lazily, all offline)."""
    from .. import verdicts

    return {
        "classify": verdicts.classify,
        "phrases": verdicts.classify_rules,
        "xstest-baseline": verdicts.baseline_start_match,
    }


def _load_fit_fn() -> FitFn:
    """The training script's fit function (dev checkout + scikit-learn only)."""
    import importlib.util

    script = REPO / "scripts" / "train_verdict_model.py"
    if not script.is_file():
        raise RuntimeError(f"--lomo needs the training script at {script} (a source checkout)")
    spec = importlib.util.spec_from_file_location("_train_verdict_model", script)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {script}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:  # scikit-learn is a dev dependency
        raise RuntimeError(f"--lomo needs the dev extras (scikit-learn): {exc}") from exc
    return module.fit_classify_fn


# --- the command ----------------------------------------------------------------------------------


def _target_rows(figures: dict[str, Any]) -> list[tuple[str, float, float, Callable[[float], str]]]:
    """(figure, value, target, format) for every figure that has a target."""
    rows: list[tuple[str, float, float, Callable[[float], str]]] = []
    for fold, value in figures.get("lomo_binary", {}).items():
        rows.append((f"XSTest LOMO binary, {fold}", value, TARGETS["lomo_binary"], _pct))
    for key, label in (
        ("heldout_accuracy", "held-out OR-Bench-style 3-class accuracy"),
        ("heldout_indirect_recall", "held-out indirect-refusal recall"),
        ("streaming_binary", "streaming: provisional = final, answer/refusal"),
        ("streaming_binary_long", "  …on long answers (>= 800 chars)"),
        ("streaming_agreement", "streaming: provisional = final, 3 classes"),
        ("streaming_agreement_long", "  …on long answers (>= 800 chars)"),
    ):
        if key in figures:
            rows.append((label, figures[key], TARGETS.get(key, TARGETS["streaming_agreement"]), _pct))
    if "verdicts_per_s" in figures:
        rows.append(("verdicts per CPU-second", figures["verdicts_per_s"], TARGETS["verdicts_per_s"], "{:,.0f}".format))
    return rows


def _targets_table(figures: dict[str, Any]) -> list[str]:
    out = ["Targets (issue 12):", f"{'figure':<44}{'value':>10}{'target':>10}  met"]
    for name, value, target, fmt in _target_rows(figures):
        out.append(f"{name:<44}{fmt(value):>10}{'>= ' + fmt(target):>10}  {'yes' if value >= target else 'NO'}")
    return out


def missed_targets(figures: dict[str, Any]) -> list[str]:
    """The figures below their target (what `--strict` fails on)."""
    return [name.strip() for name, value, target, _ in _target_rows(figures) if value < target]


def main(argv: list[str] | None = None, *, prog: str = "python -m orbench_play.evaluation") -> int:
    """The suite's command line; `orbench-play eval` passes its own `prog`, so its help names it."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Measure offline refusal verdicts against human-labelled answers (XSTest) and "
        "the OR-Bench-style sets in eval/.",
    )
    parser.add_argument("--data", nargs="+", default=None, help=f"XSTest CSV files or folders (default: {XSTEST_DIR})")
    parser.add_argument(
        "--config",
        action="append",
        help="verdict configuration(s): classify (default), phrases, xstest-baseline, or all",
    )
    parser.add_argument("--lomo", action="store_true", help="also refit the learned model leave-one-model-out")
    parser.add_argument("--heldout", default=str(STYLE_HELDOUT), help="OR-Bench-style held-out set (JSONL)")
    parser.add_argument("--dev", default=str(STYLE_DEV), help="OR-Bench-style dev set (JSONL)")
    parser.add_argument("--json", metavar="OUT", help="write all figures as JSON here")
    parser.add_argument("--no-timing", action="store_true", help="skip the throughput measurement")
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when a figure misses its target (for CI; default: report only)"
    )
    args = parser.parse_args(argv)

    configs = configurations()
    wanted = args.config or ["classify"]
    if "all" in wanted:
        wanted = list(configs)
    unknown = [w for w in wanted if w not in configs]
    if unknown:
        print(f"error: unknown config {unknown}; choose from {sorted(configs)} or all", file=sys.stderr)
        return 2
    try:
        heldout, dev = load_rows([args.heldout]), load_rows([args.dev])
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    xstest_paths = args.data or [str(XSTEST_DIR if XSTEST_DIR.exists() else REPO.parent / XSTEST_DIR.relative_to(".."))]
    missing = None
    try:
        xstest = load_rows(xstest_paths)
    except (FileNotFoundError, ValueError) as exc:
        if args.data is not None and not isinstance(exc, FileNotFoundError):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        xstest, missing = [], XSTEST_MISSING.format(path=" ".join(xstest_paths))

    classify = configs["classify"]
    figures: dict[str, Any] = {}
    payload: dict[str, Any] = {"rows": len(xstest), "reports": []}
    sections: list[str] = []
    if xstest:
        for name in wanted:
            rep = evaluate(xstest, configs[name], name=name, timing=not args.no_timing)
            sections.append(rep.format())
            payload["reports"].append(rep.as_dict())
            if name == "classify" and rep.verdicts_per_s is not None:
                figures["verdicts_per_s"] = rep.verdicts_per_s
        if args.lomo:
            try:
                fit = _load_fit_fn()
            except RuntimeError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            lomo = lomo_report(
                xstest, fit, name="learned model (+ OR-Bench-style dev set in every fold)", always_train=dev
            )
            sections.append(lomo.format())
            payload["lomo"] = lomo.as_dict()
            figures["lomo_binary"] = {src: m.binary_agreement for src, m in lomo.folds.items()}

    for title, rows in (
        ("OR-Bench-style HELD-OUT answers (never trained or tuned on)", heldout),
        ("OR-Bench-style dev answers (trained and tuned on: in-sample)", dev),
    ):
        rep = evaluate(rows, classify, name=title, timing=False)
        sections.append(format_style_report(title, rep, per_style(rows, classify)))
        payload["reports"].append(rep.as_dict())
        if rows is heldout:
            figures["heldout_accuracy"] = rep.overall.accuracy
            figures["heldout_indirect_recall"] = rep.overall.per_class["indirect_refusal"]["recall"]
    if "verdicts_per_s" not in figures and not args.no_timing:
        figures["verdicts_per_s"] = evaluate([*heldout, *dev], classify, provisional=False).verdicts_per_s

    streamed = {"XSTest answers": xstest, "OR-Bench-style held-out": heldout}
    everything = [*xstest, *heldout]
    streamed["long answers (>= 800 chars), both"] = [r for r in everything if len(r.response) >= LONG_CHARS]
    lines = ["Streaming, word by word: provisional label vs final label"]
    lines.append(f"{'answers':<34}{'n':>6}{'words':>8}{'3-class':>9}{'binary':>9}{'last=final':>11}{'changes':>9}")
    payload["streaming"] = {}
    for name, rows in streamed.items():
        if rows:
            srep = streaming_agreement(rows)
            lines.append(format_streaming(name, srep))
            payload["streaming"][name] = asdict(srep)
    all_rep = streaming_agreement(everything)
    long_rep = streaming_agreement(streamed["long answers (>= 800 chars), both"])
    lines.append(format_streaming("all of the above", all_rep))
    figures["streaming_binary"] = all_rep.binary_agreement
    figures["streaming_binary_long"] = long_rep.binary_agreement
    figures["streaming_agreement"] = all_rep.agreement
    figures["streaming_agreement_long"] = long_rep.agreement
    sections.append("\n".join(lines))

    sections.append("\n".join(_targets_table(figures)))
    print("\n\n".join(sections))
    payload["figures"] = figures
    if args.json:
        Path(args.json).write_text(json.dumps(payload, indent=2))
    if missing:
        print(missing, file=sys.stderr)
        return 2
    missed = missed_targets(figures)
    if args.strict and missed:
        print(f"{len(missed)} target{'s' if len(missed) != 1 else ''} missed: {'; '.join(missed)}", file=sys.stderr)
        return 1
    return 0
