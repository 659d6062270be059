#!/usr/bin/env python
"""Train the offline verdict model shipped in orbench_play/assets/verdict_model.json.

Reproducible: fixed seeds, deterministic solver, sorted inputs. Uses scikit-learn
(a dev dependency) only here; the app scores the exported weights in pure Python
(`orbench_play.verdicts.LinearModel`), with the very same `features()` function.

    .venv/bin/python scripts/train_verdict_model.py [--data DIR ...] [--out PATH] [--grid]

Prints leave-one-model-out (LOMO) figures while it trains: for each source in
the data, fit on the others, test on it. Hyperparameters are chosen by the
*worst* LOMO fold (so the quoted number holds on an unseen model), then the
final model is fitted on all rows and written out. A re-run writes a
byte-identical file.

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

from orbench_play import verdicts  # noqa: E402
from orbench_play.evaluation import (  # noqa: E402
    LabelledRow,
    compute_metrics,
    evaluate,
    load_rows,
)

SEED = 20240531
DEFAULTS = {"C": 10.0, "min_sources": 2, "min_df": 3, "prefix_aug": True, "class_weight": "balanced", "prune": 0.05}
# small on purpose (6 settings x 3 folds, a few CPU-minutes); min_sources=1 lost on
# the worst fold in earlier searches, so it is no longer tried
GRID = [
    {"C": c, "min_sources": 2, "min_df": 3, "prefix_aug": True, "class_weight": cw, "prune": 0.05}
    for c in (1.0, 3.0, 10.0)
    for cw in (None, "balanced")
]
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
            for n in PREFIX_LENGTHS:
                if len(r.response) > n + 40:
                    out.append((_features(r.response[:n]), y, r.source))
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
    clf = LogisticRegression(C=p["C"], class_weight=p["class_weight"], max_iter=5000, solver="lbfgs", random_state=SEED)
    clf.fit(X, y)
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

    def classify(text: str, *, final: bool = True):
        return verdicts.classify(text, final=final, model=model)

    return classify


def lomo(rows: Sequence[LabelledRow], params: dict) -> dict[str, dict]:
    out = {}
    for src in sorted({r.source for r in rows}):
        train = [r for r in rows if r.source != src]
        test = [r for r in rows if r.source == src]
        model = fit_model(train, params)
        preds = [verdicts.classify(r.response, model=model).label for r in test]
        m = compute_metrics([r.label for r in test], preds)
        early = [verdicts.classify(r.response[:100], final=False, model=model).label for r in test]
        prov = sum((a in verdicts_refusals) == (b in verdicts_refusals) for a, b in zip(early, preds)) / len(test)
        out[src] = {"binary": m.binary_agreement, "macro_f1": m.macro_f1, "acc": m.accuracy, "prov": prov}
    return out


verdicts_refusals = {"direct_refusal", "indirect_refusal"}


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
    ap.add_argument("--out", default=str(ROOT / "orbench_play/assets/verdict_model.json"))
    ap.add_argument("--grid", action="store_true", help="search hyperparameters by worst LOMO fold")
    ap.add_argument("--dry-run", action="store_true", help="report only, do not write the model")
    args = ap.parse_args(argv)

    rows = load_rows(args.data)
    print(f"{len(rows)} labelled rows from {sorted({r.source for r in rows})}")
    params = dict(DEFAULTS)
    if args.grid:
        best = None
        for p in GRID:
            res = lomo(rows, p)
            print(_line(str({k: p[k] for k in ("C", "min_sources", "prefix_aug", "class_weight")}), res), flush=True)
            key = (
                round(min(v["binary"] for v in res.values()), 3),
                round(sum(v["macro_f1"] for v in res.values()) / len(res), 3),
            )
            if best is None or key > best[0]:
                best = (key, p)
        params = best[1]
        print(f"chosen by worst LOMO fold: {params}")
    res = lomo(rows, params)
    print("LOMO  " + _line("chosen", res))
    model = fit_model(rows, params)
    ins = evaluate(rows, lambda t, final=True: verdicts.classify(t, final=final, model=model), timing=False)
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
