"""The learned model: a multinomial logistic regression over the answer's
opening n-grams and the rule signals, shipped as JSON and scored in pure Python."""

from __future__ import annotations

import json
import math
from collections.abc import Collection, KeysView, Mapping, Sequence
from functools import lru_cache
from importlib import resources
from itertools import compress, repeat

from .rules import rule_signals
from .text import _opening

_ZEROS = repeat(0j)


def features(text: str) -> tuple[list[str], list[str]]:
    """The learned model's features of an answer (or a streaming prefix).

    Returns ``(ngrams, fixed)``: word unigrams and bigrams of the opening, which
    the model scales by 1/sqrt(len(ngrams)) so long and short answers weigh
    alike; and features counted at full weight: the first one to three words
    and the rule signals. Shared with scripts/train_verdict_model.py.
    """
    ngrams, fixed, _ = opening_features(text)
    return list(ngrams), fixed


def opening_features(text: str) -> tuple[KeysView[str], list[str], str]:
    """`features`, plus what the layers after the model read again: the
    normalised opening (`text.normalise`) and its n-grams, so that nothing is
    normalised twice. The n-grams are the keys of the ordered dict they were
    collected in, not a copied list or set: the model sums their weights in one
    fixed order (the same verdict in every process, whatever its hash seed), and
    the gates test them as a set-like view. A frozenset copy tested faster gate
    by gate, but since `rule_signals` takes its gate words out once, making the
    copy cost more than it saved (1.2% of a verdict's instructions)."""
    head, toks, ordered = _opening(text)
    grams = ordered.keys()
    n = len(text)
    fixed = [
        "s1:" + " ".join(toks[:1]),
        "s2:" + " ".join(toks[:2]),
        "s3:" + " ".join(toks[:3]),
        _LENGTH_BUCKETS[(n >= 120) + (n >= 300) + (n >= 800)],
    ]
    fixed += compress(_SIGNAL_FEATURES, rule_signals(text, head, grams).values())
    return grams, fixed, head


_LENGTH_BUCKETS = ("len:0", "len:1", "len:2", "len:3")
"""Answer length: under 120 characters, under 300, under 800, longer."""
_SIGNAL_FEATURES = tuple("r:" + k for k in rule_signals("x"))
"""The rule signals' feature names, in the order `rule_signals` returns them (a
dict literal's, the same in every call): the true ones are picked by
`itertools.compress`, not a comprehension over the dict's items."""


class LinearModel:
    """Multinomial logistic regression over binary features, scored in pure Python."""

    __slots__ = ("_d", "bias", "labels", "meta", "weights")

    def __init__(
        self, labels: list[str], bias: list[float], weights: Mapping[str, Sequence[float]], meta: dict
    ) -> None:
        self.labels = tuple(labels)
        self.bias = bias
        self.weights = weights
        self.meta = meta
        # softmax only depends on score differences: keep class 1 and class 2
        # relative to class 0 as one complex number per feature (real, imaginary),
        # so a single C-level sum(map(...)) scores all three classes
        self._d = {f: complex(w[1] - w[0], w[2] - w[0]) for f, w in weights.items()}

    @classmethod
    def from_json(cls, data: dict) -> LinearModel:
        labels = list(data["labels"])
        scale = float(data.get("scale", 1.0))
        weights = {f: tuple(w * scale for w in ws) for f, ws in data["weights"].items()}
        bias = [float(b) for b in data["bias"]]
        if len(labels) != 3 or len(bias) != 3 or any(len(w) != 3 for w in weights.values()):
            raise ValueError("malformed verdict model: shape mismatch")
        return cls(labels, bias, weights, data.get("meta", {}))

    def scores(self, feats: tuple[Collection[str], list[str]]) -> list[float]:
        """Class scores relative to the first class (softmax is shift-invariant)."""
        grams, fixed = feats
        get = self._d.get
        z = sum(map(get, grams, _ZEROS), 0j)
        if grams:
            z /= math.sqrt(len(grams))
        z += sum(map(get, fixed, _ZEROS), 0j)
        bias = self.bias
        return [0.0, bias[1] - bias[0] + z.real, bias[2] - bias[0] + z.imag]

    def proba(self, feats: tuple[Collection[str], list[str]]) -> list[float]:
        # the softmax of [0, a, b] written out for its three classes: the same
        # arithmetic, operation for operation, as the loop over the scores it replaced
        _, a, b = self.scores(feats)
        top = max(0.0, a, b)
        e0, e1, e2 = math.exp(-top), math.exp(a - top), math.exp(b - top)
        total = e0 + e1 + e2
        return [e0 / total, e1 / total, e2 / total]

    def predict(self, feats: tuple[Collection[str], list[str]]) -> tuple[str, list[float]]:
        p = self.proba(feats)
        refusal = 1.0 - p[0]
        if refusal < 0.5:
            return self.labels[0], p
        return (self.labels[1] if p[1] >= p[2] else self.labels[2]), p


MODEL_RESOURCE = "verdict_model.json"


@lru_cache(maxsize=1)
def load_model() -> LinearModel | None:
    """The shipped model, or None when it is missing or unreadable (then the
    phrase rules decide)."""
    try:
        raw = resources.files("orbench_play").joinpath("assets", MODEL_RESOURCE).read_text(encoding="utf-8")
        return LinearModel.from_json(json.loads(raw))
    except (OSError, ValueError, KeyError, TypeError):
        return None
