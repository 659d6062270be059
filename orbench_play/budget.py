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

The day's total lives in a small JSON file next to the cache
(`<ORBENCH_CACHE_DIR>/spend.json`), updated under a file lock, so it survives
restarts and is shared by every session and every process using that cache.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import logging
import math
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .types import ModelSpec

log = logging.getLogger(__name__)


class BudgetExceeded(Exception):
    """The day's budget is used up; `str(exc)` is the message for the user."""


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


class SpendGuard:
    def __init__(
        self,
        limit_usd: float,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], dt.datetime] = _utc_now,
    ):
        if not (limit_usd >= 0 and math.isfinite(limit_usd)):
            raise ValueError(f"budget must be a non-negative number of dollars, got {limit_usd!r}")
        self.limit_usd = float(limit_usd)
        self.path = Path(path)
        self._clock = clock
        self._lock = threading.Lock()
        self._reserved: dict[str, float] = {}
        self._paid_cache: dict[str, bool] = {}

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

    @contextlib.contextmanager
    def _locked_ledger(self):
        """The ledger {day: dollars} under an exclusive file lock (cross-process)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                try:
                    ledger = json.loads(self.path.read_text(encoding="utf-8"))
                    if not isinstance(ledger, dict):
                        ledger = {}
                except (OSError, ValueError):
                    ledger = {}
                box = [ledger]
                yield box
                tmp = self.path.with_name(self.path.name + ".part")
                tmp.write_text(json.dumps(box[0], sort_keys=True), encoding="utf-8")
                tmp.replace(self.path)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def spent_today(self) -> float:
        day = self._today()
        try:
            ledger = json.loads(self.path.read_text(encoding="utf-8"))
            return float(ledger.get(day, 0.0))
        except (OSError, ValueError, AttributeError, TypeError):
            return 0.0

    def message(self) -> str:
        return (
            f"Daily budget of ${self.limit_usd:g} reached; paid models are paused until 00:00 UTC; "
            "free/local models still work."
        )

    def check(self, spec: ModelSpec) -> None:
        """Raise BudgetExceeded if a paid call for `spec` would not be admitted now."""
        if not self.is_paid(spec):
            return
        day = self._today()
        with self._lock:
            if self.spent_today() + self._reserved.get(day, 0.0) >= self.limit_usd:
                raise BudgetExceeded(self.message())

    def reserve(self, spec: ModelSpec, prompt_chars: int = 0, max_tokens: int = 512) -> Reservation | None:
        """Admit one call (None for free models) or raise BudgetExceeded."""
        if not self.is_paid(spec):
            return None
        amount = self.worst_case(spec, prompt_chars, max_tokens)
        day = self._today()
        with self._lock:
            if self.spent_today() + self._reserved.get(day, 0.0) >= self.limit_usd:
                raise BudgetExceeded(self.message())
            self._reserved[day] = self._reserved.get(day, 0.0) + amount
        return Reservation(self, day, amount)

    def settle(self, reservation: Reservation | None, cost_usd: float) -> None:
        """Release a reservation and add the call's real cost to its day."""
        if reservation is None or reservation.settled:
            return
        reservation.settled = True
        with self._lock:
            left = self._reserved.get(reservation.day, 0.0) - reservation.amount
            if left <= 1e-12:
                self._reserved.pop(reservation.day, None)
            else:
                self._reserved[reservation.day] = left
            cost = max(0.0, float(cost_usd or 0.0))
            if cost:
                try:
                    with self._locked_ledger() as box:
                        ledger = box[0]
                        ledger[reservation.day] = float(ledger.get(reservation.day, 0.0)) + cost
                        # keep a week of history, no more
                        for old in sorted(ledger)[:-7]:
                            ledger.pop(old, None)
                except OSError as exc:  # a read-only disk must not fail the run
                    log.warning("Could not record spend in %s: %s", self.path, exc)


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
    """The guard for ORBENCH_BUDGET_USD and the current cache folder (None when no budget is set)."""
    global _default, _default_key  # noqa: PLW0603 -- the one process-wide guard, swapped when its settings change
    from .cache.paths import default_cache_dir

    try:
        limit = budget_from_env()
    except ValueError as exc:
        # Fail closed: a budget was asked for but cannot be read; pause paid calls.
        log.warning("%s; treating the budget as 0.", exc)
        limit = 0.0
    if limit is None:
        return None
    key = (limit, str(default_cache_dir()))
    if _default is None or _default_key != key:
        _default = SpendGuard(limit, default_cache_dir() / "spend.json")
        _default_key = key
    return _default


def reserve(spec: ModelSpec, prompt_chars: int = 0, max_tokens: int = 512) -> Reservation | None:
    """The engine's hook before a call: None when free or no budget; raises BudgetExceeded."""
    guard = default_guard()
    return guard.reserve(spec, prompt_chars, max_tokens) if guard else None


def settle(reservation: Reservation | None, cost_usd: float) -> None:
    """The engine's hook after a call (success or failure)."""
    if reservation is not None:
        reservation.guard.settle(reservation, cost_usd)


def check(spec: ModelSpec) -> None:
    """For the UI/CLI before a run: raise BudgetExceeded when `spec` is paid and the day's budget is used."""
    guard = default_guard()
    if guard is not None:
        guard.check(spec)
