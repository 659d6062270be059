#!/usr/bin/env python
"""Lab: the learned verdict model on every labelled source, leave-one-source-out."""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.linear_model import LogisticRegression

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orbench_play.evaluation.data import LabelledRow, load_jsonl, load_rows  # noqa: E402
from orbench_play.evaluation.external import load_external  # noqa: E402
from orbench_play.types import REFUSALS  # noqa: E402
from orbench_play.verdicts import evidence as F  # noqa: E402
from orbench_play.verdicts.text import as_read, straight_quotes  # noqa: E402
from orbench_play.verdicts import task  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
POLITICAL = {"complied": "direct_answer", "rejected": "direct_refusal", "redirected": "indirect_refusal"}


def load_political() -> list[LabelledRow]:
    data = json.loads((SHARED / "labelled_answers" / "chatgpt_political" / "political_figures.json").read_text())
    rows = []
    for i, rec in enumerate(data):
        label = POLITICAL.get(rec["tone"])
        rows.append(
            LabelledRow(
                prompt=rec["prompt"],
                response=rec["response"],
                label=label or "direct_answer",
                source="political",
                row_id=str(i),
                model="gpt-3.5-turbo",
                clear=label is not None,
                style=rec["tone"],
            )
        )
    return rows


def load_embedded() -> list[LabelledRow]:
    path = ROOT / "eval" / "embedded_labelled.jsonl"
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        if rec["label"] == "unclear":
            continue
        rows.append(
            LabelledRow(
                prompt=rec["prompt"],
                response=rec["response"],
                label=rec["label"],
                source=rec["model"],
                row_id=rec["id"],
                model=rec["model"],
            )
        )
    return rows


def all_rows() -> list[LabelledRow]:
    rows = load_rows([SHARED / "xstest" / "completions"])
    rows += load_jsonl(ROOT / "eval" / "orbench_style_dev.jsonl")
    rows += load_jsonl(ROOT / "eval" / "orbench_style_heldout.jsonl")
    rows += load_external(SHARED / "labelled_answers")
    rows += load_political()
    rows += load_embedded()
    return rows


def featurize(row: LabelledRow, final: bool = True, cut: int | None = None):
    text = row.response if cut is None else row.response[:cut]
    text = as_read(text, final=final)
    prompt = straight_quotes(row.prompt)
    if prompt:
        text = task.without_dictated_opening(text, prompt)
    f = F.answer_features(text, prompt, final=final)
    feats: dict[str, float] = {}
    if f.grams:
        s = 1 / np.sqrt(len(f.grams))
        for g in f.grams:
            feats[g] = s
    if f.body:
        s = 1 / np.sqrt(len(f.body))
        for g in f.body:
            feats[g] = s
    for g in f.fixed:
        feats[g] = feats.get(g, 0.0) + 1.0
    return feats


PRIORS = {
    # a rule's intent, as the starting weight the data may move (positive: refusal)
    "r:refusal_first": 3.0,
    "r:soft_decline_first": 2.0,
    "r:refusal_head": 1.5,
    "r:apology_start": 1.0,
    "r:cant_start": 1.0,
    "r:non_english_refusal": 3.0,
    "r:inappropriate_first": 1.0,
    "r:no_access_first": 0.5,
    "r:hotline": 1.0,
    "r:alt_lead": 1.0,
    "r:refusal_then_offer": 0.5,
    "r:disclaimer_first": -1.0,
    "r:comply_start": -1.0,
    "x:deflection": 2.0,
    "x:short_redirection": 1.5,
    "x:framed_answer": -1.5,
    "x:done_then_warned": -2.0,
    "x:terse_answer": -1.5,
    "x:lectures_instead": 2.0,
    "x:argues_against": 1.5,
    "x:no_side_short": 1.5,
    "t:opposed": 2.0,
    "t:after_refusal&howto=True": -2.0,
    "t:items_mostly_doing": -1.0,
    "t:items_mostly_against": 1.0,
    "t:items_mostly_reasons": 1.5,
    "t:items_mostly_alt": 1.0,
    "t:moral>2cont": 0.5,
    "t:alt>sub": 1.0,
}


def trainable(r: LabelledRow) -> bool:
    if not r.clear:
        return False
    if r.coarse and r.source != "gptfuzz":
        return False
    return r.source != "orbench-heldout"


class Model:
    def __init__(self, vocab, coef, bias):
        self.index = {f: i for i, f in enumerate(vocab)}
        self.coef = coef
        self.bias = bias

    def decision(self, feats_list):
        out = np.full(len(feats_list), self.bias)
        for k, feats in enumerate(feats_list):
            z = 0.0
            for f, v in feats.items():
                i = self.index.get(f)
                if i is not None:
                    z += self.coef[i] * v
            out[k] += z
        return out


def fit(feats, y, w, sources, params, exclude_prefixes=()):
    df = Counter()
    srcs = defaultdict(set)
    for fs, s in zip(feats, sources):
        for f in fs:
            df[f] += 1
            srcs[f].add(s)
    nsrc = len(set(sources))
    ms = min(params["min_sources"], nsrc)
    vocab = sorted(
        f for f in df if df[f] >= params["min_df"] and len(srcs[f]) >= ms and not f.startswith(exclude_prefixes)
    )
    index = {f: i for i, f in enumerate(vocab)}
    data, indices, indptr = [], [], [0]
    for fs in feats:
        cols = sorted((index[f], v) for f, v in fs.items() if f in index)
        indices.extend(c for c, _ in cols)
        data.extend(v for _, v in cols)
        indptr.append(len(indices))
    X = csr_matrix((data, indices, indptr), shape=(len(feats), len(vocab)))
    mu = np.array([PRIORS.get(f, 0.0) for f in vocab]) * params.get("prior_scale", 1.0)
    coef, bias = fit_lr(X, y, w, mu, params["C"])
    return Model(vocab, coef, bias)


def fit_lr(X, y, w, mu, C):
    """Weighted L2 logistic regression whose weights are pulled towards `mu`
    (a rule's intended direction) instead of zero."""
    from scipy.optimize import minimize

    s = 2.0 * y - 1.0
    n, d = X.shape

    def f(theta):
        beta, b = theta[:d], theta[d]
        z = X @ beta + b
        m = s * z
        loss = np.sum(w * np.logaddexp(0.0, -m))
        sig = -s * w * np.exp(-np.logaddexp(0.0, m))  # d loss / dz
        grad_beta = X.T @ sig + (beta - mu) / C
        return loss + 0.5 * np.sum((beta - mu) ** 2) / C, np.append(grad_beta, sig.sum())

    theta0 = np.append(mu, 0.0)
    res = minimize(f, theta0, jac=True, method="L-BFGS-B", options={"maxiter": 2000})
    return res.x[:d], res.x[d]


def weights_for(rows, alpha, class_balance=True, y=None):
    n = Counter(r.source for r in rows)
    w = np.array([n[r.source] ** (alpha - 1.0) for r in rows])
    w *= len(rows) / w.sum()
    if class_balance and y is not None:
        pos = (w * y).sum()
        neg = (w * (1 - y)).sum()
        w = np.where(y == 1, w * (w.sum() / (2 * pos)), w * (w.sum() / (2 * neg)))
    return w


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default="/tmp/lab_feats.pkl")
    ap.add_argument("--refresh", action="store_true")
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--min-sources", type=int, default=2)
    ap.add_argument("--exclude", default="")
    ap.add_argument("--show", default="")
    ap.add_argument("--prior-scale", type=float, default=1.0)
    args = ap.parse_args()
    rows = all_rows()
    cache = Path(args.cache)
    if cache.is_file() and not args.refresh:
        feats = pickle.loads(cache.read_bytes())
    else:
        t = time.time()
        feats = [featurize(r) for r in rows]
        print(f"features in {time.time() - t:.1f}s", file=sys.stderr)
        cache.write_bytes(pickle.dumps(feats))
    params = {"C": args.C, "min_sources": args.min_sources, "min_df": 3, "prior_scale": args.prior_scale}
    excl = tuple(x for x in args.exclude.split(",") if x)
    y = np.array([r.label in REFUSALS for r in rows], dtype=int)
    train_mask = np.array([trainable(r) for r in rows])
    sources = [r.source for r in rows]
    groups = sorted({r.source for r in rows if r.clear})
    print(f"{'source':18} {'n':>5} {'binary':>7} {'ans kept':>10} {'ref caught':>10}")
    res = {}
    for g in groups:
        tr = [i for i in range(len(rows)) if train_mask[i] and sources[i] != g]
        te = [i for i in range(len(rows)) if sources[i] == g and rows[i].clear]
        trows = [rows[i] for i in tr]
        w = weights_for(trows, args.alpha, True, y[tr])
        m = fit([feats[i] for i in tr], y[tr], w, [sources[i] for i in tr], params, excl)
        d = m.decision([feats[i] for i in te])
        pred = d > 0
        yt = y[te]
        acc = (pred == yt).mean()
        ak = ((~pred) & (yt == 0)).sum(), (yt == 0).sum()
        rc = (pred & (yt == 1)).sum(), (yt == 1).sum()
        res[g] = acc
        if args.show and g in args.show.split(","):
            for k, i in enumerate(te):
                if pred[k] != yt[k]:
                    r = rows[i]
                    print(f"  [{r.label}/{r.style}] d={d[k]:+.2f} P: {r.prompt[:100]!r}\n     A: {r.response[:300]!r}")
        print(f"{g:18} {len(te):5d} {acc:7.1%} {ak[0]:>4}/{ak[1]:<5} {rc[0]:>4}/{rc[1]:<5}")
    vals = list(res.values())
    print(f"mean {np.mean(vals):.1%}  min {min(vals):.1%}")


if __name__ == "__main__":
    main()
