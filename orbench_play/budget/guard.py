"""Optional spend guard: `ORBENCH_BUDGET_USD` caps the estimated cost per UTC day.

Prices come from LiteLLM's cost data (the same numbers as the `cost_usd`
column). A model is *paid* when it is not the embedded model, has no custom
`api_base` (the engine cannot price those) and LiteLLM knows a positive price
for it; everything else is free and never blocked.

How it counts, so that many concurrent cells cannot run far past the cap:
before a paid call the engine `reserve`s the call's worst case (prompt plus
`max_tokens` of answer); a call is admitted while *spent + reserved* is below
the cap; when the call ends, `settle` replaces the reservation with the real
cost. The overshoot is therefore at most one admitted call's worst case per
concurrent slot at the moment the cap is crossed. A call that fails or is
stopped after its stream started is settled at what it streamed (the
provider's usage when it sent one, else ~4 characters a token plus the
prompt): providers bill streamed tokens even when the client hangs up, so
Stop cannot be used to spend past the cap. Calls refused before any stream
(429, 5xx, no connection) cost nothing.

Where the day's total lives is the ledger's business, and the rules above
are the guard's, the same for both ledgers:

- `FileLedger` (the default): a small JSON file next to the cache
  (`<ORBENCH_CACHE_DIR>/spend.json`), updated under a file lock, so it
  survives restarts and is shared by every session and every process using
  that cache; reservations are this process's.
- `redis_ledger.RedisLedger` (with `ORBENCH_REDIS_URL`): the total *and* the
  in-flight reservations in Redis, checked and taken in one atomic script, so
  N replicas together stay under one cap.

**Fail closed.** When the ledger cannot be read, or a cost cannot be written
(a full or read-only disk, Redis unreachable), paid calls stop with
`BudgetUnavailable` ("cannot be checked right now") until it can: a cost that
could not be recorded is kept and written first by the next reservation, and
no call is admitted before it is. Free models and cache hits keep working.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import fcntl
import json
import logging
import math
import os
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..types import ModelSpec

log = logging.getLogger(__name__)


class BudgetExceeded(Exception):
    """The day's budget is used up; `str(exc)` is the message for the user."""


class BudgetUnavailable(BudgetExceeded):
    """The spend cannot be checked or recorded right now, so paid calls pause
    (the guard fails closed); `str(exc)` says why, for the user."""


class LedgerError(Exception):
    """A ledger could not be read or written; `str(exc)` is the one-line reason."""


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _price(litellm_model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """LiteLLM's price for a call, or None when it has no cost data for the model."""
    try:
        import litellm

        p, c = litellm.cost_per_token(
            model=litellm_model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
        return float(p + c)
    except Exception:
        return None


@dataclass(slots=True)
class Reservation:
    guard: SpendGuard
    day: str
    amount: float
    settled: bool = False
    hold_id: str = ""
    """Its name in a shared ledger (empty for this process's reservations)."""


class SharedLedger(Protocol):
    """A ledger several processes share, reservations included (`redis_ledger`).
    Every method raises on failure; the guard turns that into fail-closed."""

    where: str

    def ready(self) -> bool:
        """Whether it can be reached now, as far as this process knows (no round trip)."""

    async def admit(
        self, day: str, limit: float, hold_id: str, amount: float, ttl_s: float, carry: dict[str, float]
    ) -> bool:
        """Atomically: add `carry` (costs recorded late) to their days, then take
        the reservation if the day's spend plus every live reservation is under
        `limit`. True when taken."""

    async def settle(self, day: str, hold_id: str, cost: float) -> None:
        """Drop the reservation and add `cost` to the day's spend, atomically."""

    async def spent(self, day: str) -> float: ...


def is_dollars(value: object) -> bool:
    """A finite, non-negative number (never a bool): what a ledger may hold for a day."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


class FileLedger:
    """`spend.json` {day: dollars} beside the cache, under an exclusive file lock
    (cross-process). Reservations stay in the guard (this process)."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.where = str(self.path)

    @contextlib.contextmanager
    def _locked(self):
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path.with_name(self.path.name + ".lock"), "a+") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(lock, fcntl.LOCK_UN)
        except OSError as exc:
            raise LedgerError(f"cannot lock {self.path} ({exc.strerror or exc})") from exc

    def _read(self) -> dict[str, float]:
        """{day: dollars}; LedgerError for anything else, so the guard fails closed:
        `null`, a list, NaN, infinities, negatives or text would reset or lift the cap."""
        try:
            ledger = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise LedgerError(f"cannot read {self.path} ({exc})") from exc
        if not isinstance(ledger, dict):
            raise LedgerError(f"{self.path} holds {type(ledger).__name__}, not dollars per day")
        for day, amount in ledger.items():
            if not is_dollars(amount):
                raise LedgerError(
                    f"{self.path} holds {amount!r} for {day}, not a finite, non-negative number of dollars"
                )
        return ledger

    def spent(self, day: str) -> float:
        return float(self._read().get(day, 0.0))

    def record(self, amounts: Mapping[str, float]) -> None:
        """Add `amounts` {day: dollars} to the ledger; LedgerError when it cannot be written."""
        with self._locked():
            ledger = self._read()
            for day, cost in amounts.items():
                ledger[day] = float(ledger.get(day, 0.0)) + cost
            for old in sorted(ledger)[:-7]:  # keep a week of history, no more
                ledger.pop(old, None)
            tmp = self.path.with_name(self.path.name + ".part")
            try:
                tmp.write_text(json.dumps(ledger, sort_keys=True), encoding="utf-8")
                tmp.replace(self.path)
            except OSError as exc:
                raise LedgerError(f"cannot write {self.path} ({exc.strerror or exc})") from exc


class SpendGuard:
    def __init__(
        self,
        limit_usd: float,
        path: str | os.PathLike[str] | None = None,
        *,
        ledger: SharedLedger | None = None,
        clock: Callable[[], dt.datetime] = _utc_now,
    ):
        if not (limit_usd >= 0 and math.isfinite(limit_usd)):
            raise ValueError(f"budget must be a non-negative number of dollars, got {limit_usd!r}")
        if (path is None) == (ledger is None):
            raise ValueError("give the guard either a ledger file or a shared ledger")
        self.limit_usd = float(limit_usd)
        self.shared = ledger
        self.file = FileLedger(path) if path is not None else None
        self.path = self.file.path if self.file is not None else None
        self._clock = clock
        self._lock = threading.Lock()
        self._reserved: dict[str, float] = {}
        self._paid_cache: dict[str, bool] = {}
        self._unrecorded: dict[str, float] = {}
        """Costs the ledger could not take yet: written first by the next reservation."""
        self.failure = ""
        """Why paid calls are paused although the cap is not reached (empty: they are not)."""
        self._tasks: set[asyncio.Task] = set()

    # -- pricing ---------------------------------------------------------------------

    def is_paid(self, spec: ModelSpec) -> bool:
        if spec.is_local or spec.api_base:
            return False
        known = self._paid_cache.get(spec.litellm_model)
        if known is None:
            price = _price(spec.litellm_model, 1000, 1000)
            known = bool(price and price > 0)
            self._paid_cache[spec.litellm_model] = known
        return known

    @staticmethod
    def worst_case(spec: ModelSpec, prompt_chars: int, max_tokens: int) -> float:
        """The most one call can cost: the prompt (4 chars a token, rounded up,
        plus chat overhead) and a full `max_tokens` answer."""
        return _price(spec.litellm_model, math.ceil(prompt_chars / 4) + 16, max(1, max_tokens)) or 0.0

    # -- the ledger -------------------------------------------------------------------

    def _today(self) -> str:
        return self._clock().astimezone(dt.UTC).date().isoformat()

    def message(self) -> str:
        return (
            f"Daily budget of ${self.limit_usd:g} reached; paid models are paused until 00:00 UTC; "
            "free/local models still work."
        )

    def _unavailable(self, why: str) -> BudgetUnavailable:
        self.failure = (
            f"The daily budget cannot be checked right now ({why}); paid models are paused until it can; "
            "free/local models still work."
        )
        log.warning(self.failure)
        return BudgetUnavailable(self.failure)

    def _file_ledger(self) -> FileLedger:
        if self.file is None:
            raise TypeError("this guard's ledger is shared: use reserve_async / check_async")
        return self.file

    def _shared_ledger(self) -> SharedLedger:
        if self.shared is None:
            raise TypeError("this guard's ledger is a file")
        return self.shared

    def _catch_up(self) -> None:
        """Write the costs that could not be recorded before; fail closed until they are."""
        if self._unrecorded:
            try:
                self._file_ledger().record(self._unrecorded)
            except LedgerError as exc:
                raise self._unavailable(str(exc)) from None
            self._unrecorded.clear()

    def _admit_locked(self, day: str, amount: float | None) -> None:
        """Under the lock: raise unless spent + reserved is below the cap; reserve `amount`."""
        self._catch_up()
        try:
            spent = self._file_ledger().spent(day)
        except LedgerError as exc:
            raise self._unavailable(str(exc)) from None
        self.failure = ""
        if spent + self._reserved.get(day, 0.0) >= self.limit_usd:
            raise BudgetExceeded(self.message())
        if amount is not None:
            self._reserved[day] = self._reserved.get(day, 0.0) + amount

    def spent_today(self) -> float:
        """The day's recorded spend plus what could not be recorded yet (file ledger)."""
        day = self._today()
        try:
            spent = self._file_ledger().spent(day)
        except LedgerError:
            spent = 0.0
        return spent + self._unrecorded.get(day, 0.0)

    def check(self, spec: ModelSpec) -> None:
        """Raise BudgetExceeded if a paid call for `spec` would not be admitted now."""
        if not self.is_paid(spec):
            return
        day = self._today()
        with self._lock:
            self._admit_locked(day, None)

    def reserve(self, spec: ModelSpec, prompt_chars: int = 0, max_tokens: int = 512) -> Reservation | None:
        """Admit one call (None for free models) or raise BudgetExceeded."""
        if not self.is_paid(spec):
            return None
        amount = self.worst_case(spec, prompt_chars, max_tokens)
        day = self._today()
        with self._lock:
            self._admit_locked(day, amount)
        return Reservation(self, day, amount)

    def settle(self, reservation: Reservation | None, cost_usd: float) -> None:
        """Release a reservation and add the call's real cost to its day. Never
        raises and never waits on a network: a shared ledger is written in the
        background; a cost that cannot be written is kept, and paid calls stay
        paused until it is (fail closed)."""
        if reservation is None or reservation.settled:
            return
        reservation.settled = True
        cost = max(0.0, float(cost_usd or 0.0))
        if self.shared is not None:
            self._settle_shared_later(reservation, cost)
            return
        with self._lock:
            left = self._reserved.get(reservation.day, 0.0) - reservation.amount
            if left <= 1e-12:
                self._reserved.pop(reservation.day, None)
            else:
                self._reserved[reservation.day] = left
            if cost:
                try:
                    self._catch_up()
                    self._file_ledger().record({reservation.day: cost})
                except (LedgerError, BudgetUnavailable) as exc:
                    self._unrecorded[reservation.day] = self._unrecorded.get(reservation.day, 0.0) + cost
                    self._unavailable(f"could not record spend: {exc}")

    # -- the async API: what the engine uses, for both ledgers ---------------------------

    async def check_async(self, spec: ModelSpec) -> None:
        if self.shared is None:
            return self.check(spec)
        if self.is_paid(spec):
            await self._admit_shared(self._today(), "", 0.0, 0.0)
        return None

    async def reserve_async(
        self, spec: ModelSpec, prompt_chars: int = 0, max_tokens: int = 512, ttl_s: float = 900.0
    ) -> Reservation | None:
        """`reserve`, for either ledger: one round trip to a shared one, in which the
        costs not yet recorded are written first. `ttl_s`: how long the reservation
        may outlive a process that dies holding it (the call's overall time limit)."""
        if self.shared is None:
            return self.reserve(spec, prompt_chars, max_tokens)
        if not self.is_paid(spec):
            return None
        amount = self.worst_case(spec, prompt_chars, max_tokens)
        day = self._today()
        hold_id = uuid.uuid4().hex
        await self._admit_shared(day, hold_id, amount, ttl_s)
        return Reservation(self, day, amount, hold_id=hold_id)

    async def _admit_shared(self, day: str, hold_id: str, amount: float, ttl_s: float) -> None:
        shared = self._shared_ledger()
        carry, self._unrecorded = self._unrecorded, {}
        try:
            taken = await shared.admit(day, self.limit_usd, hold_id, amount, ttl_s, carry)
        except Exception as exc:  # unreachable, refused, a script error: fail closed
            for d, cost in carry.items():
                self._unrecorded[d] = self._unrecorded.get(d, 0.0) + cost
            raise self._unavailable(_reason(exc)) from None
        self.failure = ""
        if not taken:
            raise BudgetExceeded(self.message())

    def _settle_shared_later(self, reservation: Reservation, cost: float) -> None:
        shared = self._shared_ledger()

        async def settle() -> None:
            try:
                await shared.settle(reservation.day, reservation.hold_id, cost)
            except Exception as exc:  # kept, and written by the next reservation (which waits for it)
                if cost:
                    self._unrecorded[reservation.day] = self._unrecorded.get(reservation.day, 0.0) + cost
                self._unavailable(f"could not record spend: {_reason(exc)}")

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            if cost:
                self._unrecorded[reservation.day] = self._unrecorded.get(reservation.day, 0.0) + cost
            return
        task = loop.create_task(settle())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def spent_async(self) -> float:
        day = self._today()
        if self.shared is None:
            return self.spent_today()
        return await self.shared.spent(day) + self._unrecorded.get(day, 0.0)

    async def drain(self) -> None:
        """Wait for the background writes to a shared ledger (end of a run)."""
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]


# -- the process-wide guard -------------------------------------------------------------

_default: SpendGuard | None = None
_default_key: tuple | None = None


def budget_from_env(env: Mapping[str, str] | None = None) -> float | None:
    """ORBENCH_BUDGET_USD as dollars, None when unset/empty. Nonsense is a ValueError with a one-line reason."""
    env = os.environ if env is None else env
    raw = (env.get("ORBENCH_BUDGET_USD") or "").strip().lstrip("$")
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"ORBENCH_BUDGET_USD must be a number of dollars, got {raw!r}") from None
    if not (value >= 0 and math.isfinite(value)):
        raise ValueError(f"ORBENCH_BUDGET_USD must be 0 or more, got {raw!r}")
    return value


def default_guard() -> SpendGuard | None:
    """The guard for ORBENCH_BUDGET_USD (None when no budget is set): its ledger is
    in Redis when ORBENCH_REDIS_URL is set, else beside the current cache folder."""
    global _default, _default_key  # noqa: PLW0603 -- the one process-wide guard, swapped when its settings change
    from ..cache.paths import default_cache_dir
    from ..runtime import redis_link

    try:
        limit = budget_from_env()
    except ValueError as exc:
        # Fail closed: a budget was asked for but cannot be read; pause paid calls.
        log.warning("%s; treating the budget as 0.", exc)
        limit = 0.0
    if limit is None:
        return None
    link = redis_link.link()
    key = (limit, link.url if link is not None else str(default_cache_dir()))
    if _default is None or _default_key != key:
        if link is not None:
            from .redis_ledger import RedisLedger

            _default = SpendGuard(limit, ledger=RedisLedger(link))
        else:
            _default = SpendGuard(limit, default_cache_dir() / "spend.json")
        _default_key = key
    return _default


def reserve(spec: ModelSpec, prompt_chars: int = 0, max_tokens: int = 512) -> Reservation | None:
    """Before a call, from synchronous code (file ledger): None when free or no budget; raises BudgetExceeded."""
    guard = default_guard()
    return guard.reserve(spec, prompt_chars, max_tokens) if guard else None


async def reserve_async(
    spec: ModelSpec, prompt_chars: int = 0, max_tokens: int = 512, ttl_s: float = 900.0
) -> Reservation | None:
    """The engine's hook before a call: None when free or no budget; raises BudgetExceeded
    (BudgetUnavailable when the spend cannot be checked: fail closed)."""
    guard = default_guard()
    return await guard.reserve_async(spec, prompt_chars, max_tokens, ttl_s) if guard else None


def settle(reservation: Reservation | None, cost_usd: float) -> None:
    """The engine's hook after a call (success or failure); never waits."""
    if reservation is not None:
        reservation.guard.settle(reservation, cost_usd)


def check(spec: ModelSpec) -> None:
    """For the UI/CLI before a run: raise BudgetExceeded when `spec` is paid and the day's budget is used."""
    guard = default_guard()
    if guard is not None:
        guard.check(spec)


async def check_async(spec: ModelSpec) -> None:
    """`check` for either ledger."""
    guard = default_guard()
    if guard is not None:
        await guard.check_async(spec)


async def drain() -> None:
    """Wait for spend still being written to a shared ledger (the end of a run)."""
    if _default is not None:
        await _default.drain()


def status_line() -> str:
    """Why paid calls are paused although the cap is not reached (for banners); empty
    when they are not, or when a shared ledger that was lost is reachable again (the
    next reservation writes what was kept, and fails closed again if it cannot)."""
    guard = _default
    if guard is None or not guard.failure:
        return ""
    if guard.shared is not None and guard.shared.ready():
        return ""
    return guard.failure
