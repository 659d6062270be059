"""How long a visitor's session lives, and that every way it ends frees its files.

A session ends in one of four ways, and each runs `Session.close` (its spool
and downloads deleted, its run stopped):

- **Its time to live passes** (`ORBENCH_SESSION_TTL_S`, default 1,800 s since
  it was last used): Gradio's own expiry of the `gr.State`
  (`time_to_live`, counted from the last time an event wrote the state) calls
  the state's delete callback. A client that never opens Gradio's heartbeat
  (a raw HTTP or `gradio_client` caller) expires the same way.
- **The tab closes**: Gradio marks its state closed and then keeps it for an
  hour whatever the state's time to live; the reaper below ends it at the
  session's own time to live.
- **Gradio evicts it** when more sessions than `state_session_capacity` exist;
  Gradio then drops the state *without* its delete callback. The capacity is
  set from the disk budget (`capacity`): as many sessions as could each fill
  their share (`exports.session_disk_share`) within ORBENCH_SESSIONS_DISK_MB.
- **The process ends**: the next start removes what it left (`exports.sweep_leftovers`).

The reaper (`sweep`, every few seconds on the server's event loop, started by
the app's lifespan with the start-up sweep) closes every session made by
`session.new_session` that no Gradio state holds any more (evicted), or that
has gone unused for its time to live, unless a run is live in it. A session
that is garbage-collected before the reaper sees it closes its files then
(`weakref.finalize`). No Gradio import: the lifespan gets the app from Gradio; no import of `session`
either (it imports this module): a session here is anything with `files`, `closed`,
`running`, `last_used` and `close()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import AsyncIterator, Iterable
from typing import Any

from ...runtime.env_numbers import env_number

log = logging.getLogger(__name__)

DEFAULT_TTL_S = 1800.0
UNHELD_GRACE_S = 10.0
"""A session no Gradio state holds is closed once unused this long (a handler may be
about to hand a fresh one to Gradio)."""
MIN_CAPACITY, MAX_CAPACITY = 2, 10_000
"""Bounds of `capacity` (Gradio's own default is the upper one)."""

_tracked: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
"""Sessions made for Gradio, by id (a session compares by value, so it cannot be in a set)."""
_holders: weakref.WeakSet[Any] = weakref.WeakSet()
"""Gradio `StateHolder`s of the apps this process serves (a session they hold is live)."""


def ttl_s() -> float:
    """ORBENCH_SESSION_TTL_S: seconds a session lives after its last use (default 1,800)."""
    value = env_number("ORBENCH_SESSION_TTL_S", DEFAULT_TTL_S, float)
    return value if 0 < value < float("inf") else DEFAULT_TTL_S


def reap_every_s() -> float:
    """How often the reaper looks: a quarter of the time to live, between 0.2 and 30 s."""
    return max(0.2, min(30.0, ttl_s() / 4))


def capacity(total_bytes: int | None = None, share_bytes: int | None = None) -> int:
    """Gradio's `state_session_capacity` from the disk budget: how many sessions could
    each hold their share within the total, between MIN_CAPACITY and MAX_CAPACITY."""
    from .exports import session_disk_share, sessions_disk_limit_bytes

    total = sessions_disk_limit_bytes() if total_bytes is None else total_bytes
    share = session_disk_share() if share_bytes is None else share_bytes
    return max(MIN_CAPACITY, min(MAX_CAPACITY, total // max(1, share)))


def track(sess: Any) -> Any:
    """Watch `sess` (made for Gradio): the reaper may end it, and its files go when it is collected."""
    _tracked[id(sess)] = sess
    weakref.finalize(sess, sess.files.close)
    return sess


def held_sessions(holders: Iterable[Any]) -> set[int] | None:
    """ids of the values (sessions among them) some Gradio state holds now; None when
    that cannot be read this time (Gradio changed its dicts while we read them)."""
    held: set[int] = set()
    try:
        for holder in list(holders):
            for state in list(holder.session_data.values()):
                held.update(map(id, list(state.state_data.values())))
    except (RuntimeError, AttributeError):
        return None
    return held


def sweep(now: float | None = None, held: set[int] | None = None, ttl: float | None = None) -> int:
    """Close the tracked sessions that have ended (see the module docstring); how many.
    `held`: ids of the sessions Gradio holds (None: unknown, so only the time to live counts)."""
    now = time.monotonic() if now is None else now
    ttl = ttl_s() if ttl is None else ttl
    closed = 0
    for sess in list(_tracked.values()):
        if sess.closed or sess.running:
            continue
        idle = now - sess.last_used
        if idle > ttl or (held is not None and id(sess) not in held and idle > UNHELD_GRACE_S):
            sess.close()
            closed += 1
    if closed:
        log.info("ended %d session(s) no longer used", closed)
    return closed


async def reap_forever() -> None:
    """`sweep` every `reap_every_s`, with what the apps' Gradio states hold."""
    while True:
        await asyncio.sleep(reap_every_s())
        try:
            sweep(held=held_sessions(_holders))
        except Exception:  # the reaper must outlive any one bad sweep
            log.exception("session sweep failed")


@contextlib.asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """The app's lifespan (`launch(app_kwargs={"lifespan": ...})`): at start-up remove the
    files of ended processes and watch this app's Gradio states; then reap until shutdown."""
    from .exports import sweep_leftovers

    with contextlib.suppress(OSError):
        removed = sweep_leftovers()
        if removed:
            log.info("removed %d folder(s) left by ended processes", len(removed))
    holder = getattr(app, "state_holder", None)
    if holder is not None:
        _holders.add(holder)
    task = asyncio.create_task(reap_forever())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        if holder is not None:
            _holders.discard(holder)
