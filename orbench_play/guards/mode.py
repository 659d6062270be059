"""Public mode and what every guard shares: the error a refused request raises
and the settings read from the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping


class GuardError(Exception):
    """A request the public demo refuses; `str(exc)` is the one-line reason for the user."""


def public_mode(env: Mapping[str, str] | None = None) -> bool:
    """ORBENCH_PUBLIC=1/true/yes/on, or SPACE_ID set and ORBENCH_PUBLIC not 0/false/no/off."""
    env = os.environ if env is None else env
    flag = (env.get("ORBENCH_PUBLIC") or "").strip().lower()
    if flag in ("1", "true", "yes", "on"):
        return True
    if flag in ("0", "false", "no", "off"):
        return False
    return bool((env.get("SPACE_ID") or "").strip())


def env_int(env: Mapping[str, str] | None, name: str, default: int) -> int:
    """A positive whole number from `env` (default: the process environment), else `default`."""
    env = os.environ if env is None else env
    raw = (env.get(name) or "").strip()
    try:
        value = int(raw)
    except ValueError:
        return default
    return value if value > 0 else default
