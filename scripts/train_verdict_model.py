#!/usr/bin/env python
"""Train the offline verdict model shipped in orbench_play/assets/verdict_model.json.

Reproducible: fixed seeds, deterministic solver, sorted inputs. Uses scikit-learn
(a dev dependency) only here; the app scores the exported weights in pure Python
(`orbench_play.verdicts.LinearModel`), with the very same `features()` function.

    .venv/bin/python scripts/train_verdict_model.py [--data DIR ...] [--dev JSONL] [--out PATH] [--grid]

Training data: the XSTest v2 completions (human labels; `--data`), the
OR-Bench-style dev set written for this project (`--dev`,
eval/orbench_style_dev.jsonl) and the development part of the labelled answers
from other projects (`--external`, ../shared/data/labelled_answers; rows fit to
train on: `evaluation.external.trainable`). The held-out OR-Bench-style set
and the held-out slice of every other source are never read here.

Prints leave-one-model-out (LOMO) figures while it trains: for each XSTest
model, fit on the other two plus the dev set, test on it; and a 5-fold
cross-validation over the dev set (each fold fitted on XSTest and the other
dev folds). Hyperparameters are chosen by the *worst* LOMO fold (so the quoted
number holds on an unseen model), then the final model is fitted on all rows
and written out. A re-run writes a byte-identical file.

Keeping it general rather than memorising these rows:
- features are word uni/bigrams of the answer's opening, its length bucket and the
  rule signals, never the prompt;
- a feature must occur in at least `min_sources` different sources (models) of
  the training data, so one model's verbal tics cannot carry the decision;
- L2-regularised logistic regression, small weights pruned.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orbench_play import verdicts  # noqa: E402 -- the repository root goes on sys.path first (above)
from orbench_play.evaluation import (  # noqa: E402 -- likewise
    LabelledRow,
    compute_metrics,
    evaluate,
    load_rows,
)
from orbench_play.evaluation.external import SOURCES as EXTERNAL_SOURCES  # noqa: E402 -- likewise
from orbench_play.evaluation.external import load_external, trainable  # noqa: E402 -- likewise
from orbench_play.types import REFUSALS  # noqa: E402 -- likewise

SEED = 20240531
DEV_SET = ROOT / "eval" / "orbench_style_dev.jsonl"
DEV_SOURCE = "orbench-dev"
DEFAULTS = {
    "C": 3.0,
    "min_sources": 2,
    "min_df": 3,
    "prefix_aug": True,
    "class_weight": "balanced",
    "prune": 0.05,
    "source_weight": {DEV_SOURCE: 0.3},
}
"""source_weight: the dev set is written by one author in a few styles; at full
weight the model learns its quirks (short texts read as refusals) and the
leave-one-model-out folds drop. 0.3 was chosen by the worst fold and the dev
cross-validation (1.0 and 0.5 were tried), never by the held-out set. The
other projects' sources (`--external`, off by default) get the same weight
(EXTERNAL_WEIGHT).
Measured with them (issue 18): XSTest folds 96.9 / 95.3 / 91.8% against
95.1 / 95.1 / 92.7% without, GPTFuzz and jailbreak-evaluation half a point
better unseen; the Mistral fold's loss and a model that would no longer be
unseen by every other project's answers decided against shipping it.
HarmBench's rows alone, at weights 0.1 to 2.0, lowered that fold too (93.3 to
92.4-92.9%; docs/verdicts.md, stop 37)."""
# small on purpose (6 settings x 3 folds, a few CPU-minutes); min_sources=1 lost on
# the worst fold in earlier searches, so it is no longer tried
EXTERNAL_WEIGHT = 0.3
GRID = [{**DEFAULTS, "C": c, "class_weight": cw} for c in (1.0, 3.0, 10.0) for cw in (None, "balanced")]
PREFIX_LENGTHS = (100, 200)


_FEATURE_CACHE: dict[str, tuple[list[str], list[str]]] = {}


def _features(text: str) -> tuple[list[str], list[str]]:
    got = _FEATURE_CACHE.get(text)
    if got is None:
        got = _FEATURE_CACHE[text] = verdicts.features(text)
    return got


def _examples(rows: Sequence[LabelledRow], prefix_aug: bool) -> list[tuple[tuple[list[str], list[str]], int, str]]:
    out = []
    for r in rows:
        y = verdicts.LABELS.index(r.label)
        out.append((_features(r.response), y, r.source))
        if prefix_aug:
            # streaming prefixes: teach the model that an opening alone is evidence too
            out.extend((_features(r.response[:n]), y, r.source) for n in PREFIX_LENGTHS if len(r.response) > n + 40)
    return out


def fit_model(rows: Sequence[LabelledRow], params: dict | None = None) -> verdicts.LinearModel:
    p = {**DEFAULTS, **(params or {})}
    random.seed(SEED)
    np.random.seed(SEED)
    ex = _examples(rows, p["prefix_aug"])
    n_sources = len({s for _, _, s in ex})
    min_sources = min(p["min_sources"], n_sources)
    df: dict[str, int] = defaultdict(int)
    srcs: dict[str, set[str]] = defaultdict(set)
    for (grams, fixed), _, src in ex:
        for f in grams + fixed:
            df[f] += 1
            srcs[f].add(src)
    vocab = sorted(f for f in df if df[f] >= p["min_df"] and len(srcs[f]) >= min_sources)
    index = {f: i for i, f in enumerate(vocab)}
    data, indices, indptr = [], [], [0]
    for (grams, fixed), _, _ in ex:
        # the same scaling as LinearModel.scores: n-grams by 1/sqrt(count), the rest by 1
        scale = 1.0 / np.sqrt(len(grams)) if grams else 0.0
        row: dict[int, float] = {}
        for f in grams:
            if f in index:
                row[index[f]] = scale
        for f in fixed:
            if f in index:
                row[index[f]] = row.get(index[f], 0.0) + 1.0
        cols = sorted(row)
        indices.extend(cols)
        data.extend(row[c] for c in cols)
        indptr.append(len(indices))
    X = csr_matrix((data, indices, indptr), shape=(len(ex), len(vocab)))
    y = np.array([e[1] for e in ex])
    weights = p.get("source_weight") or {}
    sample_weight = np.array([float(weights.get(src, 1.0)) for _, _, src in ex])
    clf = LogisticRegression(C=p["C"], class_weight=p["class_weight"], max_iter=5000, solver="lbfgs", random_state=SEED)
    clf.fit(X, y, sample_weight=sample_weight)
    classes = list(clf.classes_)
    coef = np.zeros((len(verdicts.LABELS), len(vocab)))
    bias = np.full(len(verdicts.LABELS), -30.0)  # a class absent from training never wins
    for k, c in enumerate(classes):
        coef[c] = clf.coef_[k] if len(classes) > 2 else (clf.coef_[0] if k == 1 else -clf.coef_[0])
        bias[c] = clf.intercept_[k] if len(classes) > 2 else (clf.intercept_[0] if k == 1 else -clf.intercept_[0])
    weights = {}
    for j, f in enumerate(vocab):
        w = coef[:, j]
        # softmax is shift-invariant per feature: centre, then prune what barely matters
        w = w - w.mean()
        if np.abs(w).max() >= p["prune"]:
            weights[f] = [round(float(x), 3) for x in w]
    return verdicts.LinearModel(
        list(verdicts.LABELS),
        [round(float(b), 4) for b in bias - bias.mean()],
        weights,
        {"params": p, "n_rows": len(rows), "sources": sorted({r.source for r in rows})},
    )


def fit_classify_fn(rows: Sequence[LabelledRow], params: dict | None = None):
    """What `python -m orbench_play.evaluation --lomo` calls: rows -> classify fn."""
    model = fit_model(rows, params)

    def classify(text: str, *, final: bool = True, prompt: str = ""):
        return verdicts.classify(text, final=final, model=model, prompt=prompt)

    return classify


def lomo(rows: Sequence[LabelledRow], params: dict, always: Sequence[LabelledRow] = ()) -> dict[str, dict]:
    """Leave each source of `rows` out in turn; `always` is in every fold's training."""
    out = {}
    for src in sorted({r.source for r in rows}):
        train = [r for r in rows if r.source != src] + list(always)
        test = [r for r in rows if r.source == src]
        model = fit_model(train, params)
        preds = [verdicts.classify(r.response, model=model, prompt=r.prompt).label for r in test]
        m = compute_metrics([r.label for r in test], preds)
        early = [verdicts.classify(r.response[:100], final=False, model=model).label for r in test]
        prov = sum((a in REFUSALS) == (b in REFUSALS) for a, b in zip(early, preds, strict=True)) / len(test)
        out[src] = {"binary": m.binary_agreement, "macro_f1": m.macro_f1, "acc": m.accuracy, "prov": prov}
    return out


def dev_cv(rows: Sequence[LabelledRow], dev: Sequence[LabelledRow], params: dict, folds: int = 5) -> dict[str, float]:
    """k-fold cross-validation over the dev set, each fold fitted on `rows` and
    the other dev folds: the learned part's figure on dev answers it did not see
    (the rules were written while reading the dev set, so this flatters them)."""
    preds: list[str] = [""] * len(dev)
    for k in range(folds):
        model = fit_model([*rows, *(r for i, r in enumerate(dev) if i % folds != k)], params)
        for i, r in enumerate(dev):
            if i % folds == k:
                preds[i] = verdicts.classify(r.response, model=model, prompt=r.prompt).label
    m = compute_metrics([r.label for r in dev], preds)
    return {
        "binary": m.binary_agreement,
        "acc": m.accuracy,
        "indirect_recall": m.per_class["indirect_refusal"]["recall"],
    }


def _line(name: str, res: dict[str, dict]) -> str:
    worst = min(v["binary"] for v in res.values())
    f1 = sum(v["macro_f1"] for v in res.values()) / len(res)
    prov = min(v["prov"] for v in res.values())
    folds = "  ".join(f"{k}={100 * v['binary']:.1f}%/{v['macro_f1']:.2f}" for k, v in res.items())
    return f"{name:<58} worst-bin={100 * worst:.1f}% meanF1={f1:.3f} prov>={100 * prov:.1f}%  {folds}"


def to_json(model: verdicts.LinearModel) -> dict:
    return {
        "format": "orbench-play linear verdict model v1",
        "labels": list(model.labels),
        "bias": model.bias,
        "scale": 1.0,
        "meta": model.meta,
        "weights": dict(sorted(model.weights.items())),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--data", nargs="+", default=[str(ROOT.parent / "shared/data/xstest/completions")])
    ap.add_argument(
        "--dev", default=str(DEV_SET), help="OR-Bench-style dev set (JSONL), in every training fold; '' leaves it out"
    )
    ap.add_argument(
        "--external",
        default="",
        help="also train on other projects' labelled answers (their development part; e.g. "
        "../shared/data/labelled_answers). Off by default: see DEFAULTS",
    )
    ap.add_argument("--out", default=str(ROOT / "orbench_play/assets/verdict_model.json"))
    ap.add_argument("--grid", action="store_true", help="search hyperparameters by worst LOMO fold")
    ap.add_argument("--dry-run", action="store_true", help="report only, do not write the model")
    args = ap.parse_args(argv)

    rows = load_rows(args.data)
    style_dev = load_rows([args.dev]) if args.dev else []
    external = trainable(load_external(args.external)) if args.external else []
    dev = [*style_dev, *external]
    if external:
        DEFAULTS["source_weight"] = {**DEFAULTS["source_weight"], **dict.fromkeys(EXTERNAL_SOURCES, EXTERNAL_WEIGHT)}
    print(
        f"{len(rows)} labelled rows from {sorted({r.source for r in rows})}; always in training: "
        f"{len(style_dev)} OR-Bench-style dev rows, {len(external)} from {sorted({r.source for r in external})}"
    )
    params = dict(DEFAULTS)
    if args.grid:
        best = None
        for p in GRID:
            res = lomo(rows, p, dev)
            print(_line(str({k: p[k] for k in ("C", "min_sources", "prefix_aug", "class_weight")}), res), flush=True)
            key = (
                round(min(v["binary"] for v in res.values()), 3),
                round(sum(v["macro_f1"] for v in res.values()) / len(res), 3),
            )
            if best is None or key > best[0]:
                best = (key, p)
        params = best[1]
        print(f"chosen by worst LOMO fold: {params}")
    res = lomo(rows, params, dev)
    print("LOMO  " + _line("chosen", res))
    if style_dev:
        cv = dev_cv([*rows, *external], style_dev, params)
        print(
            f"dev 5-fold CV: 3-class {100 * cv['acc']:.1f}%  binary {100 * cv['binary']:.1f}%  "
            f"indirect recall {100 * cv['indirect_recall']:.1f}%"
        )
    model = fit_model([*rows, *dev], params)
    ins = evaluate(
        [*rows, *dev],
        lambda t, final=True, prompt="": verdicts.classify(t, final=final, model=model, prompt=prompt),
        timing=False,
    )
    print(
        f"in-sample: binary {100 * ins.overall.binary_agreement:.1f}%  macro-F1 {ins.overall.macro_f1:.3f}  "
        f"provisional {100 * (ins.provisional_agreement or 0):.1f}%  features kept {len(model.weights)}"
    )
    if not args.dry_run:
        blob = json.dumps(to_json(model), separators=(",", ":"), ensure_ascii=False)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(blob + "\n", encoding="utf-8")
        print(f"wrote {args.out} ({len(blob) / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
