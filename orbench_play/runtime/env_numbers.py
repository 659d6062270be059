"""Numbers read from environment variables, one way everywhere.

A setting such as `ORBENCH_SESSION_RUNS=abc` must not stop a public Space from
starting, so by default a value that is not a number is logged and the default
used; a setting whose wrong value would surprise later (the embedded model's
slots and threads) can ask for the error instead. Bounds stay with each caller:
some clamp, some fall back to the default.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TypeVar

log = logging.getLogger(__name__)

Number = TypeVar("Number", int, float)


def env_number(name: str, default: Number, convert: Callable[[str], Number], *, strict: bool = False) -> Number:
    """The variable `name` as a number (`convert`: int or float); `default` when it is
    unset or blank. A value that does not convert is logged and `default` returned, or
    with `strict` raises ValueError naming the variable."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return convert(raw)
    except ValueError:
        kind = "an integer" if convert is int else "a number"
        if strict:
            raise ValueError(f"{name} must be {kind}, got {raw!r}") from None
        log.warning("%s=%r is not %s; using %s", name, raw, kind, default)
        return default
