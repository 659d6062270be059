"""What the page says and needs about state shared between replicas (Redis):
the start-up rule, the banner's lines, and a visitor's id for the run limits.

Start-up (`startup_check`): with `ORBENCH_REDIS_URL` set and Redis not
answering, a public demo refuses to start (its budget and limits would not be
shared, so N replicas could spend N caps); anywhere else the app starts
uncached, with the reason in the banner, and reconnects by itself.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from ... import budget, guards
from ...runtime import redis_link

log = logging.getLogger(__name__)


def startup_check() -> None:
    """One clear line when Redis is configured but unreachable; in public mode,
    exit (status 1) instead of serving."""
    why = redis_link.startup_check()
    if why is None:
        return
    if guards.public_mode():
        print(
            f"orbench-play: {why} A public demo does not start without its shared state "
            "(budget, limits, cache): fix ORBENCH_REDIS_URL or start Redis.",
            file=sys.stderr,
        )
        raise SystemExit(1)
    print(
        f"orbench-play: {why} Starting without it: answers are not cached and paid models are paused "
        "until it answers (reconnecting by itself).",
        file=sys.stderr,
    )


def problems() -> list[str]:
    """The banner's lines about shared state: Redis unreachable (which says that
    paid models are paused), else a budget that cannot be checked."""
    line = redis_link.status_line() or budget.status_line()
    return [line] if line else []


async def visitor_id(request: Any) -> str | None:
    """The visitor's address as a keyed hash (the shared secret, so every replica
    agrees), for runs-per-minute limits across replicas; None when the limits
    are not shared or the address is unknown. Behind a proxy, the address is
    the client's when the proxy is trusted (uvicorn's FORWARDED_ALLOW_IPS)."""
    if redis_link.link() is None:
        return None
    client = getattr(request, "client", None)
    address = getattr(client, "host", None)
    if not address:
        return None
    from ...cache import default_cache, scope

    await default_cache().prepare()
    if scope.shared_secret() is None:
        return None  # Redis is down: the per-session limits stand in
    return scope.visitor_key(str(address))
