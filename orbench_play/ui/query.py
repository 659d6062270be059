"""The URL query form of a run set-up: `/?models=a,b&split=hard-1k&categories=privacy,illegal&n=2&seed=7`.

`parse_query` never raises: a bad value falls back to the default with a warning
the page shows, because a shared link with a typo should still open.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from ..types import CATEGORIES, SPLITS

MAX_MODELS = 6
MAX_PER_CATEGORY = 20
MAX_SEED = 2**31 - 1
DEFAULT_SPLIT = "hard-1k"


@dataclass
class Setup:
    models: list[str] = field(default_factory=list)
    split: str = DEFAULT_SPLIT
    categories: list[str] = field(default_factory=list)
    """Empty means all categories."""
    n: int = 1
    seed: int = 0


def _int(value: str, lo: int, hi: int, name: str, default: int, warnings: list[str]) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        warnings.append(f"Ignored {name}={value!r} in the link: not a whole number.")
        return default
    if not lo <= number <= hi:
        clamped = max(lo, min(hi, number))
        warnings.append(f"{name}={number} in the link is out of range; using {clamped}.")
        return clamped
    return number


def _split_list(value: str) -> list[str]:
    out: list[str] = []
    for part in str(value).split(","):
        part = part.strip()
        if part and part not in out:
            out.append(part)
    return out


def parse_query(params: Mapping[str, str], default: Setup | None = None) -> tuple[Setup, list[str]]:
    """Query parameters → (set-up, warnings). Unknown keys are ignored."""
    base = default or Setup()
    setup = Setup(list(base.models), base.split, list(base.categories), base.n, base.seed)
    warnings: list[str] = []
    if "models" in params:
        names = _split_list(params["models"])
        if len(names) > MAX_MODELS:
            warnings.append(f"The link names {len(names)} models; using the first {MAX_MODELS}.")
            names = names[:MAX_MODELS]
        setup.models = names
    if "split" in params:
        split = str(params["split"]).strip().lower()
        if split in SPLITS:
            setup.split = split
        else:
            warnings.append(f"Unknown split {split!r} in the link; using {setup.split}.")
    if "categories" in params:
        cats = [c.lower() for c in _split_list(params["categories"])]
        if "all" in cats or not cats:
            setup.categories = []
        else:
            bad = [c for c in cats if c not in CATEGORIES]
            if bad:
                warnings.append(f"Ignored unknown categor{'y' if len(bad) == 1 else 'ies'} in the link: {', '.join(bad)}.")
            setup.categories = [c for c in cats if c in CATEGORIES]
    if "n" in params:
        setup.n = _int(params["n"], 1, MAX_PER_CATEGORY, "n", setup.n, warnings)
    if "seed" in params:
        setup.seed = _int(params["seed"], 0, MAX_SEED, "seed", setup.seed, warnings)
    return setup, warnings


def to_query(models: Sequence[str], split: str, categories: Sequence[str] | None, n: int, seed: int) -> str:
    """The shareable query string (starting with `?`), in the contract's key order."""
    safe = "/@:._-~"
    cats = list(categories or [])
    parts = [
        "models=" + ",".join(quote(m, safe=safe) for m in models),
        "split=" + quote(split, safe=safe),
        "categories=" + (",".join(quote(c, safe=safe) for c in cats) if cats else "all"),
        f"n={int(n)}",
        f"seed={int(seed)}",
    ]
    return "?" + "&".join(parts)
