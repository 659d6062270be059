"""Where the cache lives: the one folder that the answer cache, the spend
ledger and the per-installation secret all sit in. Its own module because all
three need it and none of them should import another to find it."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path


def default_cache_dir() -> Path:
    """ORBENCH_CACHE_DIR, else the per-user cache folder (XDG on Linux).
    Worked out once for each value of the variables that name it: the cache
    key's secret asks for it once per model per run, and pathlib's expanduser
    cost more than the HMAC it keys."""
    environ = os.environ
    return _cache_dir(environ.get("ORBENCH_CACHE_DIR"), environ.get("XDG_CACHE_HOME"), environ.get("HOME"))


@lru_cache(maxsize=16)
def _cache_dir(explicit: str | None, xdg: str | None, home: str | None) -> Path:
    """`default_cache_dir` for these values (`home` only keys the cache:
    expanduser reads HOME itself)."""
    if explicit:
        return Path(explicit).expanduser()
    base = xdg or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "orbench-play"
