"""Evaluation harness: how often do our verdicts agree with people?

Runs any verdict function over human-labelled completions (`data` reads
them: XSTest CSV, our generic CSV, the OR-Bench-style JSONL sets) and reports
binary agreement (answer vs any refusal), 3-class accuracy and macro-F1, a
confusion matrix, a per-source (per-model) breakdown, the agreement of
provisional verdicts made from a 100-character prefix, and throughput;
`lomo_report` refits a learned classifier leaving one source out at a time.

`make eval` (``python -m orbench_play.evaluation --lomo``) runs the whole suite
in `suite`.

Pure Python and the standard library only: no pandas or scikit-learn needed.
``python -m orbench_play.evaluation --help`` for the command line.
"""

from __future__ import annotations

import inspect
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..types import REFUSALS, Verdict
from .data import CLASSES, XSTEST_LABELS, LabelledRow, load_csv, load_jsonl, load_rows

__all__ = [
    "CLASSES",
    "PREFIX_CHARS",
    "XSTEST_LABELS",
    "ClassifyFn",
    "EvalReport",
    "FitFn",
    "LabelledRow",
    "LomoReport",
    "Metrics",
    "compute_metrics",
    "evaluate",
    "format_report",
    "load_csv",
    "load_jsonl",
    "load_rows",
    "lomo_report",
]

PREFIX_CHARS = 100
MIN_PASSES = 5
"""Throughput is timed over at least this many passes (and at least `min_timing_s`)."""

ClassifyFn = Callable[..., Any]
"""`fn(text)` or `fn(text, prompt=...)` returning a Verdict or a label string."""


@dataclass(slots=True)
class Metrics:
    n: int
    binary_agreement: float
    accuracy: float
    macro_f1: float
    confusion: dict[str, dict[str, int]]
    """confusion[true][predicted] = count, over CLASSES."""
    per_class: dict[str, dict[str, float]]
    """precision / recall / f1 / support per class."""
    binary_confusion: dict[str, int]
    """tp/fp/fn/tn with 'refusal' as the positive class."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "binary_agreement": self.binary_agreement,
            "accuracy": self.accuracy,
            "macro_f1": self.macro_f1,
            "confusion": self.confusion,
            "per_class": self.per_class,
            "binary_confusion": self.binary_confusion,
        }


@dataclass(slots=True)
class EvalReport:
    name: str
    overall: Metrics
    per_source: dict[str, Metrics]
    provisional_agreement: float | None = None
    """Share of answers whose provisional verdict from the first 100 characters
    has the same binary label (answer vs refusal) as the final verdict."""
    verdicts_per_s: float | None = None
    """Verdicts per CPU-second in the fastest timed pass over the rows."""
    verdicts_per_s_median: float | None = None
    """…and in the median pass (the spread says how noisy the machine was)."""
    floor_per_s: float | None = None
    """The floor's verdicts per CPU-second in its fastest pass, timed in the same
    loop, pass for pass: the speed of this machine at this moment, which moves
    the classifier's own figure by up to 2.4x between runs on a shared VM."""
    floor_name: str = ""
    source_counts: dict[str, int] = field(default_factory=dict)
    """Which verdict layer (Verdict.source) decided how many answers."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "overall": self.overall.as_dict(),
            "per_source": {k: v.as_dict() for k, v in self.per_source.items()},
            "provisional_agreement": self.provisional_agreement,
            "verdicts_per_s": self.verdicts_per_s,
            "verdicts_per_s_median": self.verdicts_per_s_median,
            "floor_per_s": self.floor_per_s,
            "floor_name": self.floor_name,
            "decided_by": self.source_counts,
        }

    def format(self) -> str:
        return format_report(self)


# --- metrics ------------------------------------------------------------------------


def _label_of(result: Any) -> str:
    return result.label if isinstance(result, Verdict) else str(result)


def compute_metrics(truth: Sequence[str], pred: Sequence[str]) -> Metrics:
    if len(truth) != len(pred):
        raise ValueError("truth and pred differ in length")
    n = len(truth)
    confusion = {t: dict.fromkeys(CLASSES, 0) for t in CLASSES}
    bin_conf = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    agree = correct = 0
    for t, p in zip(truth, pred, strict=True):
        if p not in CLASSES:
            raise ValueError(f"prediction {p!r} is not one of {CLASSES}")
        confusion[t][p] += 1
        correct += t == p
        tr, pr = t in REFUSALS, p in REFUSALS
        agree += tr == pr
        bin_conf["tp" if tr and pr else "fn" if tr else "fp" if pr else "tn"] += 1
    per_class: dict[str, dict[str, float]] = {}
    f1s = []
    for c in CLASSES:
        tp = confusion[c][c]
        predicted = sum(confusion[t][c] for t in CLASSES)
        support = sum(confusion[c].values())
        precision = tp / predicted if predicted else 0.0
        recall = tp / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_class[c] = {"precision": precision, "recall": recall, "f1": f1, "support": support}
        if support:  # classes absent from the truth do not count (as sklearn with labels=present)
            f1s.append(f1)
    return Metrics(
        n=n,
        binary_agreement=agree / n if n else 0.0,
        accuracy=correct / n if n else 0.0,
        macro_f1=sum(f1s) / len(f1s) if f1s else 0.0,
        confusion=confusion,
        per_class=per_class,
        binary_confusion=bin_conf,
    )


def _caller(classify_fn: ClassifyFn) -> Callable[..., Any]:
    """Adapt fn(text[, final=][, prompt=]) to one calling convention."""
    try:
        params: Mapping[str, Any] = inspect.signature(classify_fn).parameters
    except (TypeError, ValueError):
        params = {}
    takes_prompt = "prompt" in params
    takes_final = "final" in params

    def call(row: LabelledRow, final: bool, text: str | None = None) -> Any:
        kwargs: dict[str, Any] = {}
        if takes_prompt:
            kwargs["prompt"] = row.prompt
        if takes_final:
            kwargs["final"] = final
        return classify_fn(row.response if text is None else text, **kwargs)

    return call


def evaluate(
    rows: Sequence[LabelledRow],
    classify_fn: ClassifyFn,
    *,
    name: str = "",
    provisional: bool = True,
    timing: bool = True,
    min_timing_s: float = 1.0,
    floor_fn: ClassifyFn | None = None,
    floor_name: str = "",
) -> EvalReport:
    """Run `classify_fn` over `rows` and compare with the human labels.
    With `floor_fn` (the simplest verdict there is), its passes alternate with
    the classifier's, so the two speeds are measured on the same machine state."""
    call = _caller(classify_fn)
    results = [call(r, True) for r in rows]
    preds = [_label_of(v) for v in results]
    truth = [r.label for r in rows]
    overall = compute_metrics(truth, preds)
    per_source: dict[str, Metrics] = {}
    for source in sorted({r.source for r in rows}):
        idx = [i for i, r in enumerate(rows) if r.source == source]
        per_source[source] = compute_metrics([truth[i] for i in idx], [preds[i] for i in idx])
    decided: dict[str, int] = {}
    for v in results:
        key = v.source if isinstance(v, Verdict) else "-"
        decided[key] = decided.get(key, 0) + 1

    prov = None
    if provisional and rows:
        same = 0
        for r, final_label in zip(rows, preds, strict=True):
            early = _label_of(call(r, False, r.response[:PREFIX_CHARS]))
            same += (early in REFUSALS) == (final_label in REFUSALS)
        prov = same / len(rows)

    speed = median_speed = floor_speed = None
    if timing and rows:
        # CPU time of this process, so that other work on a shared machine does
        # not distort the figure (the classifier is single-threaded, pure Python).
        # On a shared virtual machine CPU time itself still varies (up to 1.8x
        # between runs minutes apart): every pass is timed and the fastest
        # reported, as timeit does, with the median beside it to show the spread.
        floor_call = _caller(floor_fn) if floor_fn is not None else None
        passes: list[float] = []
        floor_passes: list[float] = []
        while len(passes) < MIN_PASSES or sum(passes) < min_timing_s:
            if floor_call is not None:
                start = time.process_time()
                for r in rows:
                    floor_call(r, True)
                floor_passes.append(max(time.process_time() - start, 1e-9))
            start = time.process_time()
            for r in rows:
                call(r, True)
            passes.append(max(time.process_time() - start, 1e-9))
        speed = len(rows) / min(passes)
        median_speed = len(rows) / statistics.median(passes)
        floor_speed = len(rows) / min(floor_passes) if floor_passes else None

    return EvalReport(
        name=name or getattr(classify_fn, "__name__", "classifier"),
        overall=overall,
        per_source=per_source,
        provisional_agreement=prov,
        verdicts_per_s=speed,
        verdicts_per_s_median=median_speed,
        floor_per_s=floor_speed,
        floor_name=floor_name if floor_speed is not None else "",
        source_counts=decided,
    )


FitFn = Callable[[Sequence[LabelledRow]], ClassifyFn]


@dataclass(slots=True)
class LomoReport:
    """Leave-one-model(source)-out: fit on the other sources, test on this one."""

    name: str
    folds: dict[str, Metrics]
    in_sample: dict[str, Metrics]

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "lomo": {k: v.as_dict() for k, v in self.folds.items()},
            "in_sample": {k: v.as_dict() for k, v in self.in_sample.items()},
        }

    def format(self) -> str:
        lines = [f"Leave-one-model-out vs in-sample: {self.name}"]
        lines.append(
            f"{'held-out source':<18}{'n':>6}{'LOMO bin':>10}{'LOMO F1':>9}{'in-smp bin':>12}{'in-smp F1':>11}"
        )
        for src, m in self.folds.items():
            ins = self.in_sample.get(src)
            lines.append(
                f"{src:<18}{m.n:>6}{_pct(m.binary_agreement):>10}{m.macro_f1:>9.3f}"
                f"{_pct(ins.binary_agreement) if ins else '-':>12}{(f'{ins.macro_f1:.3f}' if ins else '-'):>11}"
            )
        return "\n".join(lines)


def lomo_report(
    rows: Sequence[LabelledRow],
    fit_fn: FitFn,
    *,
    name: str = "",
    in_sample: bool = True,
    always_train: Sequence[LabelledRow] = (),
) -> LomoReport:
    """For each source: fit on the others (plus `always_train`, e.g. the
    OR-Bench-style dev set), evaluate on it; and, for comparison, fit on
    everything and evaluate on it."""
    sources = sorted({r.source for r in rows})
    folds: dict[str, Metrics] = {}
    for src in sources:
        train = [r for r in rows if r.source != src] + list(always_train)
        test = [r for r in rows if r.source == src]
        fn = fit_fn(train)
        call = _caller(fn)
        folds[src] = compute_metrics([r.label for r in test], [_label_of(call(r, True)) for r in test])
    ins: dict[str, Metrics] = {}
    if in_sample:
        call = _caller(fit_fn([*rows, *always_train]))
        for src in sources:
            test = [r for r in rows if r.source == src]
            ins[src] = compute_metrics([r.label for r in test], [_label_of(call(r, True)) for r in test])
    return LomoReport(name=name or "fitted", folds=folds, in_sample=ins)


# --- formatting ---------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


_SHORT = {"direct_answer": "answer", "direct_refusal": "refusal", "indirect_refusal": "indirect"}


def format_report(rep: EvalReport) -> str:
    m = rep.overall
    out = [f"Verdicts vs human labels: {rep.name}  (n={m.n})", ""]
    out.append(f"{'source':<18}{'n':>6}{'binary':>9}{'3-class acc':>13}{'macro-F1':>10}")
    for src, sm in [*rep.per_source.items(), ("ALL", m)]:
        out.append(f"{src:<18}{sm.n:>6}{_pct(sm.binary_agreement):>9}{_pct(sm.accuracy):>13}{sm.macro_f1:>10.3f}")
    out += ["", "Confusion (rows = human, columns = verdict):"]
    out.append(f"{'':<12}" + "".join(f"{_SHORT[c]:>10}" for c in CLASSES))
    for t in CLASSES:
        out.append(f"{_SHORT[t]:<12}" + "".join(f"{m.confusion[t][p]:>10}" for p in CLASSES))
    out += ["", f"{'class':<18}{'precision':>10}{'recall':>8}{'F1':>7}{'support':>9}"]
    for c in CLASSES:
        pc = m.per_class[c]
        out.append(f"{c:<18}{pc['precision']:>10.3f}{pc['recall']:>8.3f}{pc['f1']:>7.3f}{int(pc['support']):>9}")
    b = m.binary_confusion
    out += ["", f"binary (refusal = positive): tp={b['tp']} fp={b['fp']} fn={b['fn']} tn={b['tn']}"]
    if rep.provisional_agreement is not None:
        out.append(f"provisional (first {PREFIX_CHARS} chars) agrees with final: {_pct(rep.provisional_agreement)}")
    if rep.verdicts_per_s is not None:
        per = 1e6 / rep.verdicts_per_s if rep.verdicts_per_s else float("inf")
        median = f", median pass {rep.verdicts_per_s_median:,.0f}" if rep.verdicts_per_s_median else ""
        out.append(
            f"throughput: {rep.verdicts_per_s:,.0f} verdicts per CPU-second in the fastest pass "
            f"({per:.1f} µs per verdict{median})"
        )
        if rep.floor_per_s:
            out.append(
                f"  floor, {rep.floor_name or 'the simplest verdict'}, timed pass for pass beside it: "
                f"{rep.floor_per_s:,.0f}/s; the classifier runs at {rep.verdicts_per_s / rep.floor_per_s:.3f} of it"
            )
    if rep.source_counts:
        out.append("decided by: " + ", ".join(f"{k}={v}" for k, v in sorted(rep.source_counts.items())))
    return "\n".join(out)
