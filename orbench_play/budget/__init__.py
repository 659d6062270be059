"""The daily spend cap (`ORBENCH_BUDGET_USD`) and the ledgers it keeps its numbers in.

Modules: `guard` (the guard's rules: reserve a paid call's worst case, settle at
what was streamed, fail closed; the file ledger `spend.json` beside the cache; the
process's guard and the engine's hooks `reserve`, `settle`, `check`, `drain`),
`redis_ledger` (the same numbers in Redis, one cap for every replica). `from
orbench_play import budget` then `budget.reserve_async(...)` is how the engine
uses it.

May import: `types`, `runtime` (the Redis link), `cache` (the cache folder the
ledger lives in). Never the engine, the UI or the CLI.
"""

from .guard import (
    BudgetExceeded,
    BudgetUnavailable,
    FileLedger,
    LedgerError,
    Reservation,
    SharedLedger,
    SpendGuard,
    budget_from_env,
    check,
    check_async,
    default_guard,
    drain,
    reserve,
    reserve_async,
    settle,
    status_line,
)

__all__ = [
    "BudgetExceeded",
    "BudgetUnavailable",
    "FileLedger",
    "LedgerError",
    "Reservation",
    "SharedLedger",
    "SpendGuard",
    "budget_from_env",
    "check",
    "check_async",
    "default_guard",
    "drain",
    "reserve",
    "reserve_async",
    "settle",
    "status_line",
]
