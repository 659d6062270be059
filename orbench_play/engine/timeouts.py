"""Time limits that fit streaming, and the watchdog that enforces them.

A streamed answer has three ways to take too long, and each gets its own limit
so that no answer that is still arriving is ever cut off at default settings:

- **first chunk** (`--timeout`, `ORBENCH_TIMEOUT_S`, model_list
  `litellm_params.timeout`; default 60 s): connecting, and waiting for the
  stream's first chunk;
- **idle** (`--idle-timeout`, `ORBENCH_IDLE_TIMEOUT_S`, model_list
  `litellm_params.stream_timeout`; default 30 s, never more than the first-chunk
  limit): the longest wait for new text once the answer (or its thoughts) has started;
- **overall**: the first-chunk limit plus an allowance per requested token
  (`--token-timeout`, `ORBENCH_TOKEN_TIMEOUT_S`, model_list
  `model_info.timeout_per_token`; default 1 s), so the limit grows with
  max tokens and a stream delivering at least one token a second always ends
  on its own. `--token-timeout 0` makes `--timeout` a hard limit on the whole
  attempt, as it was before.

Precedence: a value given for the run (CLI flag, `RunConfig`) wins, then the
model's own entry in the model_list, then the environment, then the default.

"Idle" means no new content: only chunks that carry text (answer or
thoughts) or a finish reason count, so keep-alive comments and empty chunks
cannot hold a cell open past the idle limit. Once a finish reason has
arrived, the answer is whole: a server that then keeps the connection open
without `[DONE]` gets `AFTER_FINISH_S` (at most the idle limit) to send its
usage, and the attempt ends as a complete answer, not a timeout.

The watchdog is one timer per attempt. The hot path (one call per chunk with
text) only stores the time of the latest one; the timer re-arms itself from
that when it fires early, so per-chunk cost stays a float store.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..types import TOKEN_TIMEOUT_CEILING_S
from .failures import CellFailure

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_IDLE_TIMEOUT_S = 30.0
DEFAULT_TOKEN_TIMEOUT_S = 1.0
AFTER_FINISH_S = 2.0
"""After a finish reason, how long a stream may stay open for its usage and `[DONE]`."""

ENV_TIMEOUT = "ORBENCH_TIMEOUT_S"
ENV_IDLE_TIMEOUT = "ORBENCH_IDLE_TIMEOUT_S"
ENV_TOKEN_TIMEOUT = "ORBENCH_TOKEN_TIMEOUT_S"  # noqa: S105 -- a variable name, not a secret


def seconds(raw: object, what: str, *, allow_zero: bool = False, most: float | None = None) -> float:
    """A finite, positive number of seconds (or 0 when allowed), at most `most`;
    ValueError with a one-line reason."""
    try:
        value = float(raw)  # type: ignore[arg-type]  # any value (env, YAML, argparse): float() refusing it is the check
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number of seconds, got {raw!r}") from None
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        low = "0 or more" if allow_zero else "more than 0"
        raise ValueError(f"{what} must be {low} seconds, got {raw!r}")
    if most is not None and value > most:
        raise ValueError(f"{what} must be at most {most:g} seconds, got {raw!r}")
    return value


def env_seconds(
    env: Mapping[str, str], name: str, default: float, *, allow_zero: bool = False, most: float | None = None
) -> float:
    raw = (env.get(name) or "").strip()
    return seconds(raw, name, allow_zero=allow_zero, most=most) if raw else default


def add_time_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """The CLI's `--idle-timeout` and `--token-timeout` (next to its `--timeout`)."""

    def parse(allow_zero: bool, most: float | None = None) -> Callable[[str], float]:
        def value(text: str) -> float:
            try:
                return seconds(text, "the value", allow_zero=allow_zero, most=most)
            except ValueError as exc:
                raise argparse.ArgumentTypeError(str(exc).replace("the value ", "")) from None

        return value

    parser.add_argument(
        "--idle-timeout",
        type=parse(False),
        default=None,
        help=f"longest wait for new text (answer or thoughts) once an answer started, in seconds; keep-alives "
        f"do not count (default: the model_list's "
        f"litellm_params.stream_timeout, else ${ENV_IDLE_TIMEOUT}, else {DEFAULT_IDLE_TIMEOUT_S:g}; at most --timeout)",
    )
    parser.add_argument(
        "--token-timeout",
        type=parse(True, TOKEN_TIMEOUT_CEILING_S),
        default=None,
        help=f"seconds added to the limit for a whole answer per max token (default: the model_list's "
        f"model_info.timeout_per_token, else ${ENV_TOKEN_TIMEOUT}, else {DEFAULT_TOKEN_TIMEOUT_S:g}; "
        f"0 makes --timeout the limit for the whole answer; at most {TOKEN_TIMEOUT_CEILING_S:g})",
    )


def check_env(env: Mapping[str, str] | None = None) -> None:
    """Raise ValueError naming the first timeout variable that is set to nonsense (the CLI exits 2 on it)."""
    env = os.environ if env is None else env
    env_seconds(env, ENV_TIMEOUT, DEFAULT_TIMEOUT_S)
    env_seconds(env, ENV_IDLE_TIMEOUT, DEFAULT_IDLE_TIMEOUT_S)
    env_seconds(env, ENV_TOKEN_TIMEOUT, DEFAULT_TOKEN_TIMEOUT_S, allow_zero=True, most=TOKEN_TIMEOUT_CEILING_S)


@dataclass(frozen=True, slots=True)
class Limits:
    """The three limits of one attempt, in seconds."""

    first_s: float
    idle_s: float
    total_s: float

    @property
    def transport_s(self) -> float:
        """What to give LiteLLM/httpx as their own (per read) timeout: a backstop
        just above ours, so our watchdog decides and says which limit it was."""
        return max(self.first_s, self.idle_s) + 5.0


def _env_or(env: Mapping[str, str], name: str, default: float, *, allow_zero: bool = False) -> float:
    most = TOKEN_TIMEOUT_CEILING_S if name == ENV_TOKEN_TIMEOUT else None
    try:
        return env_seconds(env, name, default, allow_zero=allow_zero, most=most)
    except ValueError:
        return default  # the CLI refuses nonsense up front; a server keeps its defaults


def limits_for(
    *,
    run_timeout_s: float | None,
    run_idle_s: float | None,
    run_token_s: float | None,
    model_timeout_s: float | None,
    model_idle_s: float | None,
    model_token_s: float | None,
    max_tokens: int,
    env: Mapping[str, str] | None = None,
) -> Limits:
    """Resolve the limits of one cell: run value, else model value, else env, else default."""
    env = os.environ if env is None else env

    def pick(run: float | None, model: float | None, name: str, default: float, zero: bool = False) -> float:
        if run is not None:
            return run
        if model is not None:
            return model
        return _env_or(env, name, default, allow_zero=zero)

    first = pick(run_timeout_s, model_timeout_s, ENV_TIMEOUT, DEFAULT_TIMEOUT_S)
    idle = min(first, pick(run_idle_s, model_idle_s, ENV_IDLE_TIMEOUT, DEFAULT_IDLE_TIMEOUT_S))
    per_token = pick(run_token_s, model_token_s, ENV_TOKEN_TIMEOUT, DEFAULT_TOKEN_TIMEOUT_S, True)
    return Limits(first_s=first, idle_s=idle, total_s=first + per_token * max(0, max_tokens))


class StreamTimeout(CellFailure):
    """One of the three limits was reached; the message says which."""


def _timeout_message(kind: str, limits: Limits, chars: int) -> str:
    if kind == "first":
        return f"Timed out after {limits.first_s:g} s waiting for the answer to start."
    kept = f" after {chars} characters (partial text kept, not scored)" if chars else ""
    if kind == "idle":
        return f"Timed out: no new text for {limits.idle_s:g} s{kept}."
    return f"Timed out after {limits.total_s:g} s, the limit for this answer's length{kept}."


class Watchdog:
    """Cancels the attempt it guards when a limit is reached, and turns that
    cancellation into a `StreamTimeout` (an outside cancellation, e.g. Stop,
    passes through untouched). Set `last` to the loop time of each chunk with
    content; call `finished()` when a finish reason arrives: from then on the
    attempt ends quietly after a short grace instead of timing out. `settle()`
    ends it quietly at once (the verdict settled; the caller keeps what arrived)."""

    __slots__ = ("_cancelling", "_chars", "_ends", "_handle", "_loop", "_start", "_task", "fired", "last", "limits")

    def __init__(self, limits: Limits, chars: Callable[[], int] = lambda: 0):
        self.limits = limits
        self.last = 0.0
        """Loop time of the latest chunk; 0.0 until the first one."""
        self._chars = chars
        """Characters received so far (for the message)."""
        self.fired: str | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._ends: float | None = None
        """Loop time the grace after a finish reason ends; None before one."""

    def settle(self) -> None:
        """The answer's verdict settled (`verdicts.settle`): end the attempt now,
        quietly (no timeout), closing its request so the provider stops generating."""
        if self.fired is None and getattr(self, "_task", None) is not None:
            self.fired = "settled"
            if self._handle is not None:
                self._handle.cancel()
            self._task.cancel()

    def finished(self) -> None:
        """A finish reason arrived: the rest of the stream (usage, `[DONE]`) gets a short grace."""
        if self._ends is None and self.fired is None:
            self._ends = self._loop.time() + min(AFTER_FINISH_S, self.limits.idle_s)
            if self._handle is not None:
                self._handle.cancel()
            self._arm(self._loop.time())

    async def __aenter__(self) -> Watchdog:
        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("Watchdog must run inside a task")
        self._task = task
        self._cancelling = task.cancelling()
        self._start = self._loop.time()
        self._arm(self._start)
        return self

    def _arm(self, now: float) -> None:
        lim = self.limits
        due = self._start + lim.total_s
        if self.last:
            due = min(due, self.last + lim.idle_s)
        else:
            due = min(due, self._start + lim.first_s, now + lim.idle_s)
        if self._ends is not None:
            due = min(self._start + lim.total_s, self._ends)
        self._handle = self._loop.call_at(due, self._check)

    def _check(self) -> None:
        if self.fired is not None:  # already ended (settled): one cancel only
            return
        now = self._loop.time()
        lim = self.limits
        slack = 1e-3  # the loop may wake a hair early
        if self._ends is not None:  # after a finish reason only the grace (or the whole limit) counts
            if now + slack < min(self._ends, self._start + lim.total_s):
                self._arm(now)
                return
            self.fired = "finished"
        elif now + slack >= self._start + lim.total_s:
            self.fired = "total"
        elif not self.last and now + slack >= self._start + lim.first_s:
            self.fired = "first"
        elif self.last and now + slack >= self.last + lim.idle_s:
            self.fired = "idle"
        else:
            self._arm(now)
            return
        self._task.cancel()

    async def __aexit__(self, exc_type, exc, tb) -> bool | None:
        if self._handle is not None:
            self._handle.cancel()
        if self.fired is None:
            return None
        # Our cancel, unless someone else cancelled too (Stop): then theirs wins.
        # Whatever the attempt raised after our cancel (CancelledError, or a
        # library's wrapping of it) is a consequence of the limit.
        if self._task.uncancel() <= self._cancelling and exc_type is not None:
            if self.fired in ("finished", "settled"):
                return True  # whole, its end unsaid; or stopped on purpose: done either way
            raise StreamTimeout(_timeout_message(self.fired, self.limits, self._chars())) from exc
        return None
