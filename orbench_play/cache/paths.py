"""Where the cache lives: the one folder that the answer cache, the spend
ledger and the per-installation secret all sit in. Its own module because all
three need it and none of them should import another to find it."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """ORBENCH_CACHE_DIR, else the per-user cache folder (XDG on Linux)."""
    explicit = os.environ.get("ORBENCH_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "orbench-play"
