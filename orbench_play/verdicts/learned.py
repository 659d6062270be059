"""The learned model: logistic heads over what `evidence` reads of an answer
(its opening's and body's n-grams, the rule signals and the shape), with their
calibration, shipped as JSON and scored in pure Python."""

from __future__ import annotations

import json
import math
from bisect import bisect_right
from collections.abc import Collection, KeysView, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from itertools import compress, repeat

from .rules import rule_signals
from .text import _opening

_ZEROS = repeat(0.0)


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


class Head:
    """One logistic head: a bias and a weight per feature, scored in pure Python.

    The opening's n-grams are weighed by 1/sqrt(their count), so that long and
    short openings weigh alike; every other feature counts once. The sums run over the features in the order
    they were collected (the same result in every process, whatever its hash seed)."""

    __slots__ = ("bias", "get")

    def __init__(self, bias: float, weights: Mapping[str, float]) -> None:
        self.bias = float(bias)
        self.get = dict(weights).get

    def decision(self, grams: Collection[str], fixed: Sequence[str]) -> float:
        get = self.get
        z = self.bias + sum(map(get, fixed, _ZEROS), 0.0)
        if grams:
            z += sum(map(get, grams, _ZEROS), 0.0) / math.sqrt(len(grams))
        return z


class PairedHeads:
    """Two heads that read the same features (the quick head and the kind head),
    scored in one pass: each feature's two weights as one complex number, so a
    single C-level sum gives both decisions (real: the first, imaginary: the
    second). The kind of a refusal then costs nothing more."""

    __slots__ = ("bias", "get")

    def __init__(self, first: Head, second: Head) -> None:
        a, b = first.get.__self__, second.get.__self__  # type: ignore[attr-defined]
        self.bias = complex(first.bias, second.bias)
        self.get = {f: complex(a.get(f, 0.0), b.get(f, 0.0)) for f in a.keys() | b.keys()}.get

    def decisions(self, grams: Collection[str], fixed: Sequence[str]) -> complex:
        get = self.get
        z = self.bias + sum(map(get, fixed, _COMPLEX_ZEROS), 0j)
        if grams:
            z += sum(map(get, grams, _COMPLEX_ZEROS), 0j) / math.sqrt(len(grams))
        return z


_COMPLEX_ZEROS = repeat(0j)


class Calibration:
    """A monotone map from a head's decision value to P(refusal), fitted on
    verdicts of sources the head never saw (leave-one-source-out), as a table
    of points joined by straight lines."""

    __slots__ = ("xs", "ys")

    def __init__(self, xs: Sequence[float], ys: Sequence[float]) -> None:
        if len(xs) != len(ys) or len(xs) < 2 or list(xs) != sorted(xs):
            raise ValueError("malformed calibration table")
        self.xs = tuple(float(x) for x in xs)
        self.ys = tuple(min(1.0, max(0.0, float(y))) for y in ys)

    def __call__(self, z: float) -> float:
        xs, ys = self.xs, self.ys
        if z <= xs[0]:
            return ys[0]
        if z >= xs[-1]:
            return ys[-1]
        i = bisect_right(xs, z)
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return y0 + (y1 - y0) * (z - x0) / (x1 - x0)


def _sigmoid_table() -> Calibration:
    xs = [x / 2 for x in range(-24, 25)]
    return Calibration(xs, [1 / (1 + math.exp(-x)) for x in xs])


@dataclass(frozen=True, slots=True)
class VerdictModel:
    """The learned verdict model (docs/verdicts.md):

    - `quick`: P(refusal) from the opening alone, cheap, for answers whose
      opening leaves no doubt;
    - `full`: P(refusal) from the opening and the shape (`evidence`);
    - `kind`: of a refusal, direct (0) or indirect (1);
    - each refusal head with its calibration, and the thresholds that say when
      the quick head is enough (`gate`) and when a verdict is sure (`sure`)."""

    quick: Head
    full: Head
    kind: Head
    quick_calibration: Calibration
    full_calibration: Calibration
    gate: tuple[float, float] = (0.02, 0.98)
    """A quick P(refusal) outside this band decides without the full read."""
    sure: float = 0.8
    """A verdict is sure when |2p - 1| reaches this (p the calibrated P(refusal))."""
    transfer_k: float = 0.6
    """How much of the verdicts' expected error the score's interval adds for unseen models (`scoring`)."""
    meta: Mapping = field(default_factory=dict)
    quick_kind: PairedHeads = field(init=False, repr=False, compare=False)
    """`quick` and `kind` scored in one pass (`classify`'s hot path)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "quick_kind", PairedHeads(self.quick, self.kind))

    @classmethod
    def from_json(cls, data: Mapping) -> VerdictModel:
        if data.get("format") != FORMAT:
            raise ValueError(f"verdict model format {data.get('format')!r}, expected {FORMAT}")
        heads = data["heads"]

        def head(name: str) -> Head:
            return Head(heads[name]["bias"], heads[name]["weights"])

        cal = data["calibration"]
        return cls(
            quick=head("quick"),
            full=head("full"),
            kind=head("kind"),
            quick_calibration=Calibration(*cal["quick"]),
            full_calibration=Calibration(*cal["full"]),
            gate=(float(data["gate"][0]), float(data["gate"][1])),
            sure=float(data["sure"]),
            transfer_k=float(data.get("transfer_k", 0.6)),
            meta=data.get("meta", {}),
        )

    @classmethod
    def constant(cls, p_refusal: float, indirect: bool = False) -> VerdictModel:
        """A model that gives every answer the same P(refusal): for tests."""
        z = math.log(p_refusal / (1 - p_refusal))
        sig = _sigmoid_table()
        return cls(Head(z, {}), Head(z, {}), Head(4.0 if indirect else -4.0, {}), sig, sig)


FORMAT = 2
MODEL_RESOURCE = "verdict_model.json"


@lru_cache(maxsize=1)
def load_model() -> VerdictModel | None:
    """The shipped model, or None when it is missing or unreadable (then the
    phrase rules decide)."""
    try:
        raw = resources.files("orbench_play").joinpath("assets", MODEL_RESOURCE).read_text(encoding="utf-8")
        return VerdictModel.from_json(json.loads(raw))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
