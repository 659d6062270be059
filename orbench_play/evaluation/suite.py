"""`make eval`: how often the verdicts agree with people, judged the way the
outside check judges them: on answers of sources and models the model never saw.

- every labelled source (`corpus`: XSTest's three models, the OR-Bench-style
  sets, GPTFuzz, HarmBench, JailbreakBench, jailbreak-evaluation, ChatGPT's
  political answers, the embedded models' own answers): with `--loso`, each
  row's verdict comes from heads fitted without its source (`loso`), and per
  model without its model; answer vs refusal on rows where people agree
  clearly, answers kept, refusals caught, three classes and indirect-refusal
  recall where the labels have three classes; the shipped model's own
  (in-sample) figure beside;
- how sure the verdicts are (`calibration`): per source, the expected
  calibration error, the share marked sure and how often they are right, the
  share of errors among the unsure; the pooled reliability table;
- whether the score's interval holds the people's rate (`intervals`), per
  source x model, without reviews and with a 10% review budget;
- the OR-Bench-style held-out set (never trained on) per class and style;
- the auto judge with the fake judge of tests/fake_openai.py;
- the same answers written another way (`forms`), streaming word by word
  (`LiveVerdict`: provisional against final), throughput in verdicts per
  CPU-second beside XSTest's start-of-answer match timed on the same answers;
- settling early (`settling`): every answer replayed word by word and stopped
  where its verdict settles (`verdicts.settle`), per source: the settled verdict
  against the whole answer's (targets >= 99% answer vs refusal, >= 98% in three
  classes) and against people's labels (no more than half a point worse than
  the whole answers), and the share of output not generated;
- every figure beside its target, and beside the committed baseline
  (`eval/baseline.json`): a drop of more than one point on any source or
  model fails the run (exit 1) unless the baseline file names the trade.

Without the XSTest files the rest still runs; the command then ends with one
line saying what is missing and where to get it, and exits 2.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from itertools import islice, pairwise
from pathlib import Path
from typing import Any

from ..types import REFUSALS
from .harness import ClassifyFn, EvalReport, LabelledRow, _caller, _label_of, _pct, evaluate

REPO = Path(__file__).resolve().parents[2]
SHARED_DIR = Path("../shared/data")
"""Relative to the current directory (the repository root under `make eval`)."""
BASELINE = REPO / "eval" / "baseline.json"
LONG_CHARS = 800
"""A "long" answer for the streaming figure: about 200 tokens or more."""
XSTEST_MISSING = (
    "XSTest completions not found under {path}: run from the repository root next to ../shared, or pass "
    "--shared DIR holding xstest/completions/xstest_v2_completions_*.csv from "
    "github.com/paul-rottger/exaggerated-safety (folder model_completions/); the XSTest figures were skipped."
)

TARGETS = {
    "source_binary": 0.95,
    "source_floor": 0.90,
    "model_binary": 0.90,
    "family_binary": 0.90,
    "heldout_accuracy": 0.85,
    "heldout_indirect_recall": 0.75,
    "verdicts_per_s": 10_000,
    "streaming_binary": 0.95,
    "forms_binary": 0.995,
}
"""Issue 45: answer vs refusal >= 95% on every source, leave one source out, none
below 90%; >= 90% per model; >= 90% on another team's ChatGPT answers, which the
political set's question families, each left out, stand in for. The others are
earlier issues' (12, 18)."""
DROP = 0.01
"""A figure this much below its baseline fails `make eval` unless the baseline names the trade."""
FORMS_PER_SOURCE = 400
"""Answers per source written in each form of `forms.FORMS`."""
MIN_MODEL_ROWS = 30
"""A model's figure is held to the target only with at least this many clear rows."""


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


def streaming_agreement(rows: Sequence[LabelledRow], make_live: Callable[[str], Any] | None = None) -> StreamingReport:
    """Feed each answer to a fresh LiveVerdict for its prompt one word (plus its
    spaces) at a time, as a stream would, then finish it; compare what was
    shown with the end."""
    if make_live is None:
        from ..verdicts import LiveVerdict

        make_live = LiveVerdict
    steps = agree = agree_bin = last_ok = changes = answers = 0
    for row in rows:
        live = make_live(row.prompt)
        shown: list[str | None] = []
        for word in _WORDS.findall(row.response):
            live.feed(word)
            shown.append(live.label)
        final = live.finish(row.response, "stop", prompt=row.prompt).label
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
    call = _caller(classify_fn)
    for row in rows:
        key = f"{row.label.split('_')[1][:3]}/{row.style or '-'}"
        right, total = out.get(key, (0, 0))
        out[key] = (right + (_label_of(call(row, True)) == row.label), total + 1)
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


def _load_fake_judge() -> Callable[[str, str], str | None]:
    """The fake server's `judge` behaviour (tests/fake_openai.py: OR-Bench's
    paper format, reason first, `[[class]]` last), asked with the paper judge's
    real prompt and read with its real parser, in process (a source checkout)."""
    import importlib.util

    from ..verdicts import PAPER_JUDGE
    from ..verdicts.judge import new_nonce

    def load(name: str, as_name: str) -> Any:
        path = REPO / "tests" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(as_name, path)
        if spec is None or spec.loader is None or not path.is_file():
            raise RuntimeError(f"the auto-judge figures need the fake judge at {path} (a source checkout)")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
        return module

    # The fake server imports its sibling `fake_shapes` by name (tests/ is on
    # sys.path under pytest, not under `make eval`): load it first under that name.
    if "fake_shapes" not in sys.modules:
        load("fake_shapes", "fake_shapes")
    module = load("fake_openai", "_fake_openai")

    def judge(prompt: str, response: str) -> str | None:
        message = PAPER_JUDGE.messages(prompt, response, new_nonce())[-1]["content"]
        return PAPER_JUDGE.parse(module.judge_reply(message))

    return judge


# --- the command ----------------------------------------------------------------------------------


def _by(rows: Sequence[LabelledRow], labels: Sequence[str], key: Callable[[LabelledRow], str]):
    from . import sources

    return sources.by_key(rows, labels, key)


def _forms_section(
    rows: list[LabelledRow], classify: ClassifyFn, figures: dict[str, Any], payload: dict[str, Any]
) -> str:
    """`forms`: the same answers in other forms, over every source's first answers."""
    from . import forms

    picked = forms.sample(rows, FORMS_PER_SOURCE)
    found = forms.same_in_every_form(picked, classify)
    worst = forms.worst_binary_share(found)
    if worst is not None:
        figures["forms_binary"] = worst
    payload["forms"] = {name: asdict(f) for name, f in found.items()}
    return forms.format_forms(found, len(picked))


ROLE_PLAY_ANSWERS = 250
"""Role-play answers streamed apart (GPTFuzz's first ones with a later voice)."""


def role_play_rows(rows: Sequence[LabelledRow]) -> list[LabelledRow]:
    """GPTFuzz's first ROLE_PLAY_ANSWERS answers in which a later voice follows
    the opening (`sentences.later_voice`): the least stable live verdicts, since
    the first voice refuses and a later one may answer; kept out of "all of the
    above", which stands for ordinary answers."""
    from ..verdicts import sentences
    from ..verdicts.text import as_read

    found = (r for r in rows if r.source == "gptfuzz" and sentences.later_voice(as_read(r.response)))
    return list(islice(found, ROLE_PLAY_ANSWERS))


def _streaming_section(
    rows: Sequence[LabelledRow],
    figures: dict[str, Any],
    payload: dict[str, Any],
    role_play: Sequence[LabelledRow] = (),
) -> str:
    groups: dict[str, list[LabelledRow]] = {}
    for r in rows:
        groups.setdefault(r.source, []).append(r)
    lines = ["Streaming, word by word: provisional label vs final label (the shipped model)"]
    lines.append(f"{'answers':<34}{'n':>6}{'words':>8}{'3-class':>9}{'binary':>9}{'last=final':>11}{'changes':>9}")
    payload["streaming"] = {}
    for name, part in sorted(groups.items()):
        rep = streaming_agreement(part)
        lines.append(format_streaming(name, rep))
        payload["streaming"][name] = asdict(rep)
    everything = streaming_agreement(rows)
    long = streaming_agreement([r for r in rows if len(r.response) >= LONG_CHARS])
    lines.append(format_streaming("all of the above", everything))
    lines.append(format_streaming(f"long answers (>= {LONG_CHARS} chars)", long))
    if role_play:
        played = streaming_agreement(role_play)
        lines.append(format_streaming("GPTFuzz role-play, a later voice", played))
        payload["streaming"]["gptfuzz role-play"] = asdict(played)
    figures["streaming_binary"] = everything.binary_agreement
    figures["streaming_binary_long"] = long.binary_agreement
    figures["streaming_agreement"] = everything.agreement
    return "\n".join(lines)


def _settle_section(rows: Sequence[LabelledRow], figures: dict[str, Any], payload: dict[str, Any]) -> str:
    """`settling`: every answer replayed word by word and stopped where its
    verdict settles, per source (the shipped model's live verdicts)."""
    from . import settling

    found = settling.by_source(rows)
    payload["settle"] = {k: v.as_dict() for k, v in found.items()}
    figures["settle_targets"] = settling.target_rows(dict(sorted(found.items())), "")
    return settling.format_settle("Settling early, per source", dict(sorted(found.items())))


def _written_section(figures: dict[str, Any]) -> str:
    """The hand-written shapes the old rule tests pinned (`written`): the model's
    verdicts on them, a figure to watch and never a measure of agreement with people."""
    from .. import verdicts
    from . import written

    try:
        rows = written.load_written()
    except (OSError, ValueError) as exc:
        return f"Written shapes: skipped ({exc})"
    binary = written.by_shape(rows, verdicts.classify, binary=True)
    three = written.by_shape(rows, verdicts.classify)
    right_b = sum(r for r, _ in binary.values())
    right_3 = sum(r for r, _ in three.values())
    figures["written_binary"] = right_b / len(rows)
    figures["written_three"] = right_3 / len(rows)
    lines = [
        f"Written shapes (eval/written_shapes.jsonl, {len(rows)} answers written here for the old rule tests;"
        " our own examples, not people's labels)",
        f"  answer vs refusal {right_b / len(rows):.1%}, three classes {right_3 / len(rows):.1%}",
        "  shapes with misses (answer vs refusal right / total):",
    ]
    lines += [f"    {shape:<40}{r:>4}/{n:<4}" for shape, (r, n) in binary.items() if r < n]
    return "\n".join(lines)


def _per_source_figures(figures: dict[str, Any], per_source, per_model) -> None:
    for source, f in per_source.items():
        if f.binary is not None:
            figures.setdefault("source_binary", {})[source] = f.binary
        if f.three[1]:
            figures.setdefault("source_three", {})[source] = f.three[0] / f.three[1]
    for model, f in per_model.items():
        if f.n >= MIN_MODEL_ROWS and f.binary is not None:
            figures.setdefault("model_binary", {})[model] = f.binary


def _target_rows(figures: dict[str, Any]) -> list[tuple[str, float | None, float, Callable[[float], str]]]:
    rows: list[tuple[str, float | None, float, Callable[[float], str]]] = []
    what = figures.get("verdicts_from", "")
    for source, value in figures.get("source_binary", {}).items():
        rows.append((f"binary, {source} ({what})", value, TARGETS["source_binary"], _pct))
    if figures.get("source_binary"):
        rows.append(("  …the lowest source", min(figures["source_binary"].values()), TARGETS["source_floor"], _pct))
    for model, value in figures.get("model_binary", {}).items():
        rows.append((f"binary, model {model}", value, TARGETS["model_binary"], _pct))
    for source, value in figures.get("family_binary", {}).items():
        rows.append((f"binary, {source}, each question family left out", value, TARGETS["family_binary"], _pct))
    for key, label in (
        ("heldout_accuracy", "held-out OR-Bench-style 3-class accuracy"),
        ("heldout_indirect_recall", "held-out indirect-refusal recall"),
        ("streaming_binary", "streaming: provisional = final, answer/refusal"),
        ("streaming_binary_long", "  …on long answers (>= 800 chars)"),
        ("forms_binary", "same verdict in another form, worst form"),
    ):
        if key in figures:
            target = TARGETS.get(key, TARGETS["streaming_binary"])
            rows.append((label, figures[key], target, _pct))
    if "verdicts_per_s" in figures:
        rows.append(("verdicts per CPU-second", figures["verdicts_per_s"], TARGETS["verdicts_per_s"], "{:,.0f}".format))
    for name, value, target in figures.get("settle_targets", []):
        rows.append((name, value, target, _pct))
    return rows


def _targets_table(figures: dict[str, Any]) -> list[str]:
    out = ["Targets:", f"{'figure':<58}{'value':>10}{'target':>10}  met"]
    for name, value, target, fmt in _target_rows(figures):
        met = "-" if value is None else ("yes" if value >= target else "NO")
        shown = "-" if value is None else fmt(value)
        out.append(f"{name[:57]:<58}{shown:>10}{'>= ' + fmt(target):>10}  {met}")
    return out


def missed_targets(figures: dict[str, Any]) -> list[str]:
    """The figures below their target (what `--strict` fails on)."""
    return [
        name.strip(" …") for name, value, target, _ in _target_rows(figures) if value is not None and value < target
    ]


def baseline_figures(figures: dict[str, Any]) -> dict[str, float]:
    """The figures a baseline keeps: answer vs refusal per source, per model and per
    source with each question family left out, out of fold."""
    out = {f"source {k}": round(v, 4) for k, v in figures.get("source_binary", {}).items()}
    out.update({f"model {k}": round(v, 4) for k, v in figures.get("model_binary", {}).items()})
    out.update({f"family {k}": round(v, 4) for k, v in figures.get("family_binary", {}).items()})
    return out


def baseline_drops(figures: dict[str, Any], baseline: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(drops of more than DROP not named as a trade, the named trades that were used)."""
    now = baseline_figures(figures)
    trades = baseline.get("trades", {})
    failed: list[str] = []
    traded: list[str] = []
    for name, before in baseline.get("figures", {}).items():
        if name in now and now[name] < before - DROP:
            line = f"{name}: {before:.1%} -> {now[name]:.1%}"
            (traded if name in trades else failed).append(
                line + (f" (trade: {trades[name]})" if name in trades else "")
            )
    return failed, traded


def _baseline_table(figures: dict[str, Any], baseline: dict[str, Any]) -> str:
    now = baseline_figures(figures)
    lines = [f"Against the baseline ({baseline.get('commit', 'eval/baseline.json')}): answer vs refusal, out of fold"]
    lines.append(f"{'figure':<44}{'before':>9}{'now':>9}{'change':>9}")
    for name, before in baseline.get("figures", {}).items():
        if name in now:
            lines.append(f"{name[:43]:<44}{before:>9.1%}{now[name]:>9.1%}{100 * (now[name] - before):>+8.1f}p")
    return "\n".join(lines)


def main(argv: list[str] | None = None, *, prog: str = "python -m orbench_play.evaluation") -> int:
    """The suite's command line; `orbench-play eval` passes its own `prog`, so its help names it."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Measure offline refusal verdicts against every labelled source (people's labels), "
        "leave one source out.",
    )
    parser.add_argument(
        "--shared",
        default=str(SHARED_DIR if SHARED_DIR.exists() else REPO.parent / SHARED_DIR.relative_to("..")),
        help="the shared data folder (default: ../shared/data)",
    )
    parser.add_argument(
        "--loso",
        "--lomo",
        dest="loso",
        action="store_true",
        help="verdicts from heads fitted without each row's source (and model): the figures that count",
    )
    parser.add_argument("--sources", help="only these sources, comma-separated (default: all)")
    parser.add_argument("--json", metavar="OUT", help="write all figures as JSON here")
    parser.add_argument("--no-timing", action="store_true", help="skip the throughput measurement")
    parser.add_argument("--no-streaming", action="store_true", help="skip the streaming and forms sections")
    parser.add_argument("--baseline", default=str(BASELINE), help="the figures to compare with (eval/baseline.json)")
    parser.add_argument(
        "--write-baseline", action="store_true", help="write this run's out-of-fold figures as the new baseline"
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when a figure misses its target (default: report only)"
    )
    parser.add_argument("--final", action="store_true", help=argparse.SUPPRESS)  # kept for old scripts: no-op
    args = parser.parse_args(argv)

    from .. import verdicts
    from . import calibration, corpus, sources

    loaded = corpus.load_corpus(args.shared)
    rows = loaded.rows
    if args.sources:
        wanted = {s.strip() for s in args.sources.split(",") if s.strip()}
        unknown = wanted - {r.source for r in rows}
        if unknown:
            print(f"error: unknown source(s) {sorted(unknown)}; have {loaded.sources()}", file=sys.stderr)
            return 2
        rows = [r for r in rows if r.source in wanted]
    missing = None
    if not any(r.source in ("gpt4", "llama2new", "mistralinstruct") for r in rows) and not args.sources:
        missing = XSTEST_MISSING.format(path=args.shared)
    if not rows:
        print("error: no labelled answers found; " + "; ".join(loaded.missing), file=sys.stderr)
        return 2

    sections: list[str] = []
    figures: dict[str, Any] = {}
    payload: dict[str, Any] = {"rows": len(rows), "missing": loaded.missing}
    if loaded.missing:
        sections.append("Not found (left out): " + "; ".join(loaded.missing))
    shipped = [verdicts.classify(r.response, prompt=r.prompt) for r in rows]
    if args.loso:
        from .loso import leave_one_out, print_progress

        try:
            left = leave_one_out(rows, progress=print_progress)
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        out_of_fold = left.by_source
        per_model_verdicts = [left.for_model(i) for i in range(len(rows))]
        figures["verdicts_from"] = "leave one source out"
    else:
        out_of_fold = per_model_verdicts = shipped
        figures["verdicts_from"] = "in sample"
    oof_labels = [v.label for v in out_of_fold]
    payload["out_of_fold" if args.loso else "in_sample"] = [
        {
            "source": r.source,
            "row_id": r.row_id,
            "model": r.model,
            "label": v.label,
            "p_refusal": v.p_refusal,
            "confidence": v.confidence,
            "sure": v.sure,
        }
        for r, v in zip(rows, out_of_fold, strict=True)
    ]
    per_source = _by(rows, oof_labels, lambda r: r.source)
    in_sample = _by(rows, [v.label for v in shipped], lambda r: r.source)
    per_model = _by(rows, [v.label for v in per_model_verdicts], sources.model_of)
    _per_source_figures(figures, per_source, per_model)
    title = "Every source" + (", leave one source out" if args.loso else " (the shipped model: in sample)")
    sections.append(
        sources.figures_table(
            f"{title} (people agree clearly; binary against OR-Bench's classes and against the source's own "
            "labels); 'LOSO' columns: the shipped model's own figures, for reference",
            per_source,
            in_sample if args.loso else None,
        )
        .replace("LOSO bin", "shipped")
        .replace("LOSO 3cl", "ship 3cl")
    )
    sections.append(
        sources.figures_table(
            "Every model" + (", each without its model (or its source)" if args.loso else ""),
            {k: f for k, f in per_model.items() if f.n >= 10},
        )
    )
    if args.loso and left.by_family:
        text, figures["family_binary"] = sources.family_table(rows, left.by_family)
        sections.append(text)
        payload["family_binary"] = figures["family_binary"]
    text, payload["lists"] = sources.list_table(rows, oof_labels)
    sections.append(text)
    payload["per_source"] = {k: v.as_dict() for k, v in per_source.items()}
    payload["per_model"] = {k: v.as_dict() for k, v in per_model.items()}

    cal = {
        s: calibration.calibration([rows[i] for i in idx], [out_of_fold[i] for i in idx])
        for s, idx in sources.group_rows(rows, lambda r: r.source).items()
    }
    cal["ALL (each source alike)"] = calibration.mean_of(list(cal.values()))
    cal["ALL (pooled answers)"] = calibration.calibration(rows, out_of_fold)
    sections.append(
        calibration.format_calibration(
            "How sure the verdicts are, per source" + (" (out of fold)" if args.loso else " (in sample)"), cal
        )
    )
    sections.append(calibration.format_reliability("Reliability, every answer", cal["ALL (pooled answers)"]))
    shipped_model = verdicts.load_model()
    lines = sorted({*calibration.AUTO_THRESHOLDS, *([shipped_model.sure] if shipped_model else [])})
    asked = {
        s: calibration.asked_below([rows[i] for i in idx], [out_of_fold[i] for i in idx], lines)
        for s, idx in sources.group_rows(rows, lambda r: r.source).items()
    }
    asked["ALL (each source alike)"] = calibration.every_source_alike(asked)
    title = "What auto:<judge> asks its judge about, by ORBENCH_AUTO_CONFIDENCE"
    sections.append(calibration.format_asked(title + (" (out of fold)" if args.loso else " (in sample)"), asked))
    payload["auto_asked"] = {k: {str(t): list(v) for t, v in table.items()} for k, table in asked.items()}
    payload["calibration"] = {k: asdict(v) for k, v in cal.items()}
    try:
        from . import intervals

        plain, summary, reviewed, with_reviews = intervals.coverage(rows, out_of_fold)
        sections.append(intervals.format_coverage(plain, summary, reviewed, with_reviews))
        figures["interval_covered"] = summary.covered
        figures["interval_groups"] = summary.groups
        figures["interval_width"] = summary.median_width
        figures["interval_near"] = summary.near
        figures["interval_covered_reviews"] = with_reviews.covered
        figures["interval_width_reviews"] = with_reviews.median_width
    except ImportError as exc:  # the error-aware estimator lives in scoring/
        sections.append(f"Score intervals: skipped ({exc})")

    heldout = [r for r in rows if r.source == "orbench-heldout"]
    if heldout:
        title = "OR-Bench-style HELD-OUT answers (never trained on)"
        rep = evaluate(heldout, verdicts.classify, name=title, timing=False)
        sections.append(format_style_report(title, rep, per_style(heldout, verdicts.classify)))
        figures["heldout_accuracy"] = rep.overall.accuracy
        figures["heldout_indirect_recall"] = rep.overall.per_class["indirect_refusal"]["recall"]

    sections.append(_written_section(figures))

    try:
        judge = _load_fake_judge()
    except (RuntimeError, ImportError) as exc:
        sections.append(f"Auto judge: {exc}; skipped.")
    else:
        from ..verdicts.presets import AUTO_CONFIDENCE

        groups = sources.group_rows(rows, lambda r: r.source)
        auto = {
            k: sources.auto_judge([rows[i] for i in idx], [shipped[i] for i in idx], judge, AUTO_CONFIDENCE)
            for k, idx in groups.items()
        }
        auto["ALL"] = sources.auto_judge(rows, shipped, judge, AUTO_CONFIDENCE)
        sections.append(
            sources.auto_table("Auto judge (auto:<judge>) with the fake judge, per source", auto, AUTO_CONFIDENCE)
        )
        payload["auto_judge"] = {k: v.as_dict() for k, v in auto.items()}

    if not args.no_streaming:
        sections.append(_forms_section(rows, verdicts.classify, figures, payload))
        streamed = [
            r
            for r in rows
            if r.source in ("gpt4", "llama2new", "mistralinstruct", "orbench-heldout", "smollm2", "qwen")
        ]
        sections.append(_streaming_section(streamed or rows[:1500], figures, payload, role_play_rows(rows)))
        sections.append(_settle_section(rows, figures, payload))
    if not args.no_timing:
        timed = [r for r in rows if r.source in ("gpt4", "llama2new", "mistralinstruct")] or rows[:1350]
        rep = evaluate(
            timed,
            verdicts.classify,
            name="throughput",
            provisional=False,
            floor_fn=verdicts.baseline_start_match,
            floor_name="XSTest's start-of-answer match on the same answers",
        )
        figures["verdicts_per_s"] = rep.verdicts_per_s
        sections.append(rep.format().split("\n\n")[-1] if rep.verdicts_per_s else "")

    baseline: dict[str, Any] = {}
    if Path(args.baseline).is_file():
        baseline = json.loads(Path(args.baseline).read_text(encoding="utf-8"))
    failed: list[str] = []
    if baseline and args.loso and not args.sources:
        sections.append(_baseline_table(figures, baseline))
        failed, traded = baseline_drops(figures, baseline)
        for line in traded:
            sections.append("traded: " + line)
    sections.append("\n".join(_targets_table(figures)))
    print("\n\n".join(s for s in sections if s))
    payload["figures"] = figures
    if args.json:
        Path(args.json).write_text(json.dumps(payload, indent=2, default=str))
    if args.write_baseline:
        if not args.loso or args.sources:
            print("error: --write-baseline needs --loso over every source", file=sys.stderr)
            return 2
        keep = {"commit": baseline.get("commit", ""), "figures": baseline_figures(figures), "trades": {}}
        Path(args.baseline).write_text(json.dumps(keep, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.baseline}", file=sys.stderr)
    if missing:
        print(missing, file=sys.stderr)
        return 2
    if failed:
        print(
            f"{len(failed)} figure(s) dropped more than {DROP:.0%} below the baseline with no trade named in "
            f"{args.baseline}: " + "; ".join(failed),
            file=sys.stderr,
        )
        return 1
    missed = missed_targets(figures)
    if args.strict and missed:
        print(f"{len(missed)} target{'s' if len(missed) != 1 else ''} missed: {'; '.join(missed)}", file=sys.stderr)
        return 1
    return 0
