"""The process's link to Redis (`ORBENCH_REDIS_URL`): where replicas keep the
state they share (answers, judge verdicts, the spend ledger, visitors' run
windows, the per-installation secret).

Why one module: every store that lives in Redis needs the same three things,
and they must agree on them:

- **one client and connection pool per event loop** (`client()`): redis-py's
  asyncio connections belong to the loop that opened them; the app has one
  loop, the CLI one per `asyncio.run`, tests one per test;
- **one view of health** (`up`, `why`): the first failed round trip marks the
  link down, and from then on nothing waits on Redis (cache reads miss at
  once, paid calls are refused) until a probe finds it again. The probe runs
  by itself in a thread of its own, with a short back-off, so the link
  recovers without traffic and without a restart;
- **one way to say what is wrong** (`status_line()`), which the page's banner,
  the CLI and the start-up check all print.

Failures are `redis.ConnectionError`/`TimeoutError`/`OSError`, raised to
callers as `Unavailable` with a one-line reason; the URL is never shown with
its password.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

URL_ENV = "ORBENCH_REDIS_URL"
PREFIX = "orbench:"
"""Every key this app writes starts with it, so one Redis can hold other data too."""
CONNECT_TIMEOUT_S = 2.0
OP_TIMEOUT_S = 3.0
"""Per round trip; a lost server is noticed within this, then nothing waits on it."""
BACKOFF_S = (0.5, 1.0, 2.0, 4.0)
"""Waits between probes while the link is down (the last one repeats)."""
MAX_CONNECTIONS = 256

T = TypeVar("T")


class Unavailable(Exception):
    """Redis cannot be reached right now; `str(exc)` is the one-line reason."""


def redis_url(env: Mapping[str, str] | None = None) -> str | None:
    """ORBENCH_REDIS_URL, or None when unset or blank (the embedded stores then)."""
    env = os.environ if env is None else env
    return (env.get(URL_ENV) or "").strip() or None


def safe_url(url: str) -> str:
    """The URL without user name and password: what logs and banners may show."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "localhost"
        port = f":{parts.port}" if parts.port else ""
        path = parts.path if parts.path not in ("", "/") else ""
        return f"{parts.scheme}://{host}{port}{path}"
    except ValueError:
        return "redis (unparsable URL)"


def _errors() -> tuple[type[BaseException], ...]:
    import redis.exceptions

    return (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError, asyncio.TimeoutError)


class RedisLink:
    """One Redis URL's clients (one per event loop) and its health."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.where = safe_url(url)
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
        self.up = True
        self.why = ""
        self.down_since: float | None = None
        self._failures = 0
        self._retry_at = 0.0
        self._probe: threading.Thread | None = None
        self._probe_lock = threading.Lock()
        self.quiet = False
        """Set by the start-up check, whose caller prints the one line itself."""

    # -- clients ---------------------------------------------------------------------

    def client(self) -> Any:
        """The `redis.asyncio.Redis` of the running loop (created on first use).

        One immediate retry on a connection error: after a Redis restart every
        pooled connection is dead, and the retry opens a fresh one instead of
        failing the first call. No back-off inside a call: waiting is the
        probe's job, never a cell's."""
        loop = asyncio.get_running_loop()
        found = self._clients.get(loop)
        if found is None:
            import redis.asyncio
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff

            found = redis.asyncio.Redis.from_url(
                self.url,
                socket_connect_timeout=CONNECT_TIMEOUT_S,
                socket_timeout=OP_TIMEOUT_S,
                retry=Retry(NoBackoff(), 1),
                max_connections=MAX_CONNECTIONS,
                client_name="orbench-play",
            )
            self._clients[loop] = found
        return found

    # -- health ----------------------------------------------------------------------

    def usable(self) -> bool:
        """Worth a round trip now: up, or down long enough that this call may probe."""
        return self.up or time.monotonic() >= self._retry_at

    async def run(self, op: Callable[[Any], Awaitable[T]]) -> T:
        """`await op(client)`; a lost server marks the link down and raises `Unavailable`
        (also, at once and without a round trip, while the link is down)."""
        if not self.usable():
            raise Unavailable(self.reason())
        try:
            result = await op(self.client())
        except _errors() as exc:
            self.mark_down(exc)
            raise Unavailable(self.reason()) from exc
        self.mark_up()
        return result

    def mark_down(self, exc: BaseException, *, probe: bool = True) -> None:
        now = time.monotonic()
        self._retry_at = now + BACKOFF_S[min(self._failures, len(BACKOFF_S) - 1)]
        self._failures += 1
        self.why = _describe(exc)
        if self.up:
            self.up = False
            self.down_since = now
            if not self.quiet:
                log.warning(
                    "Redis at %s is unreachable (%s): answers are not cached, paid calls are paused",
                    self.where,
                    self.why,
                )
        if probe:
            self._start_probe()

    def mark_up(self) -> None:
        self._failures = 0
        if not self.up:
            self.up = True
            self.why = ""
            self.down_since = None
            log.warning("Redis at %s is reachable again", self.where)

    def _start_probe(self) -> None:
        """Ping by itself until Redis answers, so the link (and the banner) recover
        without waiting for a visitor's next run. The probe has a thread, a loop
        and a client of its own: it works whether or not the caller has a loop
        (the start-up check's loop is gone a moment later)."""
        with self._probe_lock:
            if self._probe is not None and self._probe.is_alive():
                return
            self._probe = threading.Thread(target=self._probe_until_up, name="orbench-redis-probe", daemon=True)
            self._probe.start()

    def _probe_until_up(self) -> None:
        async def ping() -> None:
            import redis.asyncio

            client = redis.asyncio.Redis.from_url(
                self.url, socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=OP_TIMEOUT_S
            )
            try:
                await client.ping()
            finally:
                await client.aclose()

        while not self.up:
            time.sleep(max(0.05, self._retry_at - time.monotonic()))
            if self.up:
                return
            try:
                asyncio.run(ping())
            except Exception as exc:  # unreachable, or a wrong password: stays down
                self.mark_down(exc, probe=False)
                continue
            self.mark_up()

    def reason(self) -> str:
        """Why a call cannot use Redis, in a few words (for messages that embed it)."""
        return f"Redis at {self.where} is unreachable ({self.why or 'no answer'})"

    def status_line(self) -> str:
        """One line for banners and logs while the link is down; empty when it is up."""
        if self.up:
            return ""
        return (
            f"Shared state unavailable: Redis at {self.where} is unreachable ({self.why}). "
            "Answers are not cached and paid models are paused until it is back; "
            "free and local models still work. Reconnecting by itself."
        )

    async def check(self) -> None:
        """One PING; raises `Unavailable` with the reason (start-up, health checks)."""
        await self.run(lambda client: client.ping())


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:160]


# -- the process's link -------------------------------------------------------------

_links: dict[str, RedisLink] = {}


def link(env: Mapping[str, str] | None = None) -> RedisLink | None:
    """The link for ORBENCH_REDIS_URL (one per URL per process), None when unset."""
    url = redis_url(env)
    if url is None:
        return None
    found = _links.get(url)
    if found is None:
        found = _links[url] = RedisLink(url)
    return found


def status_line() -> str:
    """What the banner says about shared state: empty when Redis is unset or up."""
    current = link()
    return current.status_line() if current is not None else ""


def startup_check(timeout_s: float = 5.0) -> str | None:
    """At start-up, before serving: None when Redis is unset or answers, else the
    one-line reason (callers decide: refuse to start in public mode, else run
    uncached with a banner). Runs its own short-lived loop and client."""
    url = redis_url()
    if url is None:
        return None
    current = link()
    if current is None:
        return None

    async def ping() -> None:
        try:
            current.client()  # imports redis (seconds on a busy box) outside the time limit
            async with asyncio.timeout(timeout_s):
                await current.check()
        finally:
            client = current._clients.pop(asyncio.get_running_loop(), None)
            if client is not None:
                await client.aclose()

    current.quiet = True  # the caller prints the one line, not the link's log too
    try:
        asyncio.run(ping())
    except (Unavailable, TimeoutError) as exc:
        if current.up:  # a timeout of the whole check, not a failed round trip
            current.mark_down(exc)
        return f"Redis at {current.where} is unreachable ({current.why or exc})."
    except Exception as exc:  # a wrong password, a bad URL: say so, same as unreachable
        current.mark_down(exc)
        return f"Redis at {current.where} cannot be used ({current.why})."
    finally:
        current.quiet = False
    return None


def script(client: Any, source: str) -> Any:
    """`client.register_script(source)`, once per client: calls then send the
    script's SHA (EVALSHA), and load it again by themselves after a restart."""
    scripts = client.__dict__.setdefault("_orbench_scripts", {})
    found = scripts.get(source)
    if found is None:
        found = scripts[source] = client.register_script(source)
    return found


def key(*parts: str) -> str:
    """A key in this app's namespace: `orbench:` + the parts joined by `:`."""
    return PREFIX + ":".join(parts)
