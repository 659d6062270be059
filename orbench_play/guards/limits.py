"""Door 3, volume: how much one session may ask (cells per run, runs per
minute, the length of a custom prompt), with a message that says what to change.

Runs per minute are counted per visitor (their address, by `visitors`' trust
rule, as a keyed hash): in this process (`LocalRunWindows`), or, with
`ORBENCH_REDIS_URL`, in Redis, so a visitor's next run counts whichever
replica or tab it reaches (`RunWindow`). While Redis is unreachable the
process's count stands in; a session whose visitor is unknown counts alone.
A run that cost nothing (every cell a cached replay) is given back (`refund`)."""

from __future__ import annotations

import collections
import contextlib
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..runtime import redis_link
from .mode import GuardError, env_int

DEFAULT_MAX_CELLS = 80
DEFAULT_RUNS_PER_MINUTE = 6
DEFAULT_ENDPOINT_CHECKS_PER_MINUTE = 10
DEFAULT_MAX_PROMPT_CHARS = 4000


def check_custom_prompt(
    text: str, *, max_chars: int | None = None, env: Mapping[str, str] | None = None, what: str = "custom prompt"
) -> str:
    """A visitor's own prompt (or follow-up message, `what`): stripped, non-empty,
    at most ORBENCH_MAX_PROMPT_CHARS characters."""
    limit = max_chars or env_int(env, "ORBENCH_MAX_PROMPT_CHARS", DEFAULT_MAX_PROMPT_CHARS)
    value = (text or "").strip()
    if not value:
        raise GuardError(f"The {what} is empty.")
    if len(value) > limit:
        raise GuardError(f"The {what} has {len(value):,} characters; the limit is {limit:,}.")
    return value


DEFAULT_MAX_TURNS = 4
"""Turns per conversation in public mode (the first included): three follow-ups."""
DEFAULT_MAX_CONTEXT_CHARS = 24_000
"""Characters of a conversation a follow-up may send in public mode (every earlier
message and answer, plus the new message): about 6,000 tokens."""


@dataclass(frozen=True)
class FollowUpCaps:
    """How far a public demo lets a conversation grow: turns (ORBENCH_MAX_TURNS) and
    characters sent with a follow-up (ORBENCH_MAX_CONTEXT_CHARS)."""

    turns: int = DEFAULT_MAX_TURNS
    context_chars: int = DEFAULT_MAX_CONTEXT_CHARS

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> FollowUpCaps:
        return cls(
            turns=env_int(env, "ORBENCH_MAX_TURNS", DEFAULT_MAX_TURNS),
            context_chars=env_int(env, "ORBENCH_MAX_CONTEXT_CHARS", DEFAULT_MAX_CONTEXT_CHARS),
        )

    def text(self) -> str:
        return f"{self.turns} turns per conversation and {self.context_chars:,} characters of conversation"


def check_prompt_lengths(
    prompts: Iterable[Any], follow_ups: Iterable[Any] = (), *, env: Mapping[str, str] | None = None
) -> None:
    """Every prompt a public run sends, from any source (OR-Bench, a prompt set, typed),
    and every follow-up's message, within ORBENCH_MAX_PROMPT_CHARS; else GuardError
    naming the first row over it."""
    limit = env_int(env, "ORBENCH_MAX_PROMPT_CHARS", DEFAULT_MAX_PROMPT_CHARS)
    for prompt in prompts:
        text = getattr(prompt, "text", "") or ""
        if len(text) > limit:
            raise GuardError(
                f"{_row_name(getattr(prompt, 'row_id', ''))} has a prompt of {len(text):,} characters; the public "
                f"demo allows {limit:,} per prompt. Leave that row out of the prompt set, or run the app yourself."
            )
    for follow in follow_ups:
        message = getattr(follow, "text", "") or ""
        if len(message) > limit:
            raise GuardError(f"The follow-up has {len(message):,} characters; the limit is {limit:,}.")


def _row_name(row_id: str) -> str:
    """`custom:set.csv:41` → "Prompt set set.csv, row 42"; an OR-Bench row or a typed prompt by its id."""
    if row_id.startswith("custom:"):
        name, _, index = row_id[len("custom:") :].rpartition(":")
        if name and index.isdigit():
            return f"Prompt set {name}, row {int(index) + 1},"
    return f"Row {row_id}" if row_id else "A prompt"


class SessionLimiter:
    """Caps one session's runs: cells (prompts × models × repeats) per run and
    runs per rolling minute. Keep one per browser session (e.g. in `gr.State`).

    Limits come from ORBENCH_MAX_CELLS and ORBENCH_RUNS_PER_MINUTE. A refused
    run does not count against the per-minute budget. Adding a custom endpoint
    (a DNS look-up) is limited too: ORBENCH_ENDPOINT_CHECKS_PER_MINUTE (default 10).
    """

    def __init__(
        self,
        max_cells: int | None = None,
        runs_per_minute: int | None = None,
        *,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.max_cells = max_cells or env_int(env, "ORBENCH_MAX_CELLS", DEFAULT_MAX_CELLS)
        self.runs_per_minute = runs_per_minute or env_int(env, "ORBENCH_RUNS_PER_MINUTE", DEFAULT_RUNS_PER_MINUTE)
        self.endpoint_checks_per_minute = env_int(
            env, "ORBENCH_ENDPOINT_CHECKS_PER_MINUTE", DEFAULT_ENDPOINT_CHECKS_PER_MINUTE
        )
        self._clock = clock
        self._runs: collections.deque[float] = collections.deque()
        self._checks: collections.deque[float] = collections.deque()
        self._lock = threading.Lock()

    def check_endpoint_check(self) -> None:
        """Admit one more endpoint check (Add endpoint) this minute, or raise GuardError."""
        with self._lock:
            now = self._clock()
            while self._checks and now - self._checks[0] >= 60.0:
                self._checks.popleft()
            if len(self._checks) >= self.endpoint_checks_per_minute:
                wait = max(1, int(60.0 - (now - self._checks[0]) + 0.999))
                raise GuardError(
                    f"Slow down: the public demo checks {self.endpoint_checks_per_minute} endpoints per minute "
                    f"per session; try again in {wait} s."
                )
            self._checks.append(now)

    def check_run(self, n_cells: int) -> RunTicket:
        """Admit a run of `n_cells` or raise GuardError saying what to change.

        Every run is capped, whoever configured its models: the owner's
        entries are exempt only from the endpoint and provider checks, since
        they spend the owner's keys too."""
        self.check_cells(n_cells)
        with self._lock:
            now = self._clock()
            while self._runs and now - self._runs[0] >= 60.0:
                self._runs.popleft()
            if len(self._runs) >= self.runs_per_minute:
                raise self._slow_down(60.0 - (now - self._runs[0]))
            self._runs.append(now)
        return RunTicket("session", stamp=now)

    async def check_run_async(self, n_cells: int, visitor: str | None = None) -> RunTicket:
        """`check_run`, with runs counted per `visitor` (a keyed hash of their
        address): across every replica when Redis is configured (one round trip),
        else in this process; per session only when the visitor is unknown."""
        if visitor is None:
            return self.check_run(n_cells)
        self.check_cells(n_cells)
        window = RunWindow.shared()
        if window is not None:
            try:
                wait, member = await window.admit(visitor, self.runs_per_minute)
            except redis_link.Unavailable:
                window = None  # this process's count until Redis is back
            else:
                if wait is not None:
                    raise self._slow_down(wait, per="visitor")
                return RunTicket("shared", visitor=visitor, stamp=member)
        wait_s, stamp = LOCAL_RUNS.admit(visitor, self.runs_per_minute, self._clock())
        if wait_s is not None:
            raise self._slow_down(wait_s, per="visitor")
        return RunTicket("visitor", visitor=visitor, stamp=stamp)

    async def refund(self, ticket: RunTicket | None) -> None:
        """Give back a run that cost nothing (every cell replayed from the cache)."""
        if ticket is None:
            return
        if ticket.where == "session":
            with self._lock, contextlib.suppress(ValueError):
                self._runs.remove(float(ticket.stamp))
        elif ticket.where == "visitor" and ticket.visitor is not None:
            LOCAL_RUNS.forget(ticket.visitor, float(ticket.stamp))
        elif ticket.where == "shared" and ticket.visitor is not None:
            window = RunWindow.shared()
            if window is not None:
                with contextlib.suppress(redis_link.Unavailable):
                    await window.forget(ticket.visitor, str(ticket.stamp))

    def _slow_down(self, wait_s: float, per: str = "session") -> GuardError:
        wait = max(1, int(wait_s + 0.999))
        return GuardError(
            f"Slow down: the public demo allows {self.runs_per_minute} runs per minute per {per}; "
            f"try again in {wait} s."
        )

    def check_cells(self, n_cells: int) -> None:
        """The cap on cells per run (nothing to count: the same on every replica)."""
        if n_cells <= 0:
            raise GuardError("Nothing to run: pick at least one prompt and one model.")
        if n_cells > self.max_cells:
            raise GuardError(
                f"This run has {n_cells} cells (prompts × models); the public demo allows {self.max_cells} per run. "
                "Pick fewer prompts or models."
            )


@dataclass(frozen=True)
class RunTicket:
    """Where an admitted run was counted (`refund` gives it back): this session, this
    process's window of `visitor`, or the shared one; `stamp` names the entry."""

    where: str
    visitor: str | None = None
    stamp: float | str = 0.0


MAX_VISITORS = 100_000
"""Visitors whose windows this process keeps at once (the least recently seen go first)."""


class LocalRunWindows:
    """Each visitor's runs of the last minute in this process (their keyed address
    → run times), whatever session or tab they come from."""

    def __init__(self, max_visitors: int = MAX_VISITORS):
        self.max_visitors = max_visitors
        self._lock = threading.Lock()
        self._runs: collections.OrderedDict[str, collections.deque[float]] = collections.OrderedDict()

    def admit(self, visitor: str, per_minute: int, now: float) -> tuple[float | None, float]:
        """(None, stamp) when the run is admitted and counted, else (seconds to wait, 0)."""
        with self._lock:
            runs = self._runs.setdefault(visitor, collections.deque())
            self._runs.move_to_end(visitor)
            while runs and now - runs[0] >= 60.0:
                runs.popleft()
            if len(runs) >= per_minute:
                return 60.0 - (now - runs[0]), 0.0
            runs.append(now)
            while len(self._runs) > self.max_visitors:
                self._runs.popitem(last=False)
            return None, now

    def forget(self, visitor: str, stamp: float) -> None:
        with self._lock, contextlib.suppress(ValueError):
            runs = self._runs.get(visitor)
            if runs is not None:
                runs.remove(stamp)

    def clear(self) -> None:
        with self._lock:
            self._runs.clear()


LOCAL_RUNS = LocalRunWindows()
"""Runs per minute per visitor in this process (without Redis, or while it is down)."""


_WINDOW = """
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 60000)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], 60000)
return false
"""


class RunWindow:
    """A visitor's runs of the last minute in Redis (a sorted set per visitor,
    expiring with the window): checked and counted in one atomic script, so two
    replicas cannot both admit the run that goes over."""

    def __init__(self, link: redis_link.RedisLink):
        self.link = link

    @staticmethod
    def shared() -> RunWindow | None:
        link = redis_link.link()
        return RunWindow(link) if link is not None else None

    async def admit(self, visitor: str, per_minute: int) -> tuple[float | None, str]:
        """(None, the entry) when the run is admitted (and counted), else (seconds
        until it would be, "")."""
        now_ms = int(time.time() * 1000)
        name = redis_link.key("runs", visitor)
        member = f"{now_ms}:{secrets.token_hex(4)}"

        async def run(client):
            return await redis_link.script(client, _WINDOW)(keys=[name], args=[now_ms, per_minute, member])

        oldest = await self.link.run(run)
        if oldest is None:
            return None, member
        return 60.0 - (now_ms - float(oldest)) / 1000.0, ""

    async def forget(self, visitor: str, member: str) -> None:
        """Take a counted run back out of the visitor's window."""
        name = redis_link.key("runs", visitor)
        await self.link.run(lambda client: client.zrem(name, member))
