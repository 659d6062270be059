"""What the page says and needs about state shared between replicas (Redis):
the start-up rule, the banner's lines, and a visitor's id for the per-visitor limits.

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
    """The visitor's address (`guards.visitors`: the peer, or the entry the trusted
    proxies added, per ORBENCH_PROXY_HOPS) as a keyed hash, for the per-visitor limits;
    None when the address is unknown (the limits then count per session). With Redis
    the key is under the shared secret, so every replica agrees; while Redis is down,
    under this installation's own."""
    address = request_address(request)
    if not address:
        return None
    from ...cache import default_cache, scope

    if redis_link.link() is not None:
        await default_cache().prepare()
    return scope.visitor_key(address)


def request_address(request: Any) -> str | None:
    """The visitor's address, by the trust rule of `guards.visitors`."""
    return guards.visitors.request_address(request)
