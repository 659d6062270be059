"""DNS look-ups for the endpoint checks, with a time limit no one can use to starve the others.

`getaddrinfo` has no time limit, so a look-up runs in a thread and the check
waits for it at most `DNS_TIMEOUT_S`. A look-up that hangs past that keeps
its thread until the resolver gives up, however long. So that such threads
cannot take the slots everyone else needs:

- **Per key** (a visitor's session when they add an endpoint; the host when
  a run re-checks it), at most `PER_KEY` look-ups may be unfinished at once,
  hung ones included. A visitor whose names hang is refused at once, with a
  sentence, instead of queueing behind them.
- **The pool grows** past a hung thread: a look-up takes an idle thread or
  starts a new one, up to `MAX_THREADS` in all, so a thread stuck past its
  time limit holds no place in a queue. Past that bound a look-up is refused
  at once ("busy"), never queued.
- **Runs have their own pool** (`RUN_LOOKUPS`), so the look-ups of visitors
  adding endpoints never delay the re-check a run makes before it connects.
- **Per visitor** (`share`: the visitor's address, by `visitors`' trust rule),
  at most `PER_SHARE` look-ups may be unfinished in a pool, whatever sessions
  or hosts they come from, so one visitor with many free sessions (or many
  hosts) cannot take every thread: at least `MAX_THREADS // PER_SHARE`
  visitors always find one.

Idle threads end after `IDLE_EXIT_S`. Standard library only.
"""

from __future__ import annotations

import collections
import concurrent.futures
import queue
import threading
from collections.abc import Callable
from typing import Any

from .mode import GuardError

PER_KEY = 2
PER_SHARE = 4
MAX_THREADS = 32
IDLE_EXIT_S = 30.0


class LookupBusy(GuardError):
    """A look-up refused at once: its key has too many unfinished, or every thread is taken."""


class LookupPool:
    """Threads for look-ups: grows past hung ones up to `max_threads`, at most `per_key` unfinished per key."""

    def __init__(
        self, name: str, *, max_threads: int = MAX_THREADS, per_key: int = PER_KEY, per_share: int = PER_SHARE
    ):
        self.name = name
        self.max_threads = max_threads
        self.per_key = per_key
        self.per_share = per_share
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[
            tuple[concurrent.futures.Future, tuple[str, str | None], Callable[..., Any], tuple]
        ] = queue.SimpleQueue()
        self._threads = 0
        self._idle = 0
        """Idle threads no queued job is promised to."""
        self._unfinished: collections.Counter[str] = collections.Counter()

    def submit(
        self, key: str, fn: Callable[..., Any], *args: Any, share: str | None = None
    ) -> concurrent.futures.Future:
        """Run `fn(*args)` on a thread of the pool; GuardError at once when `key` has
        `per_key` look-ups unfinished, the visitor `share` has `per_share`, or every
        thread is taken."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        shared = f"share:{share}" if share else None
        with self._lock:
            if self._unfinished[key] >= self.per_key or (shared and self._unfinished[shared] >= self.per_share):
                held = self._unfinished[shared] if shared and self._unfinished[shared] >= self.per_share else None
                raise LookupBusy(
                    f"{held if held is not None else self._unfinished[key]} endpoint checks of yours are still "
                    "waiting for DNS; try again when they are done."
                )
            if self._idle > 0:
                self._idle -= 1
            elif self._threads < self.max_threads:
                self._threads += 1
                threading.Thread(target=self._work, name=f"{self.name}-{self._threads}", daemon=True).start()
            else:
                raise LookupBusy("The server is busy checking other endpoints; try again in a few seconds.")
            self._unfinished[key] += 1
            if shared:
                self._unfinished[shared] += 1
            self._jobs.put((future, (key, shared), fn, args))
        return future

    def _work(self) -> None:
        while True:
            try:
                future, key, fn, args = self._jobs.get(timeout=IDLE_EXIT_S)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # no job is promised to this thread: it may go
                        self._idle -= 1
                        self._threads -= 1
                        return
                continue
            running = future.set_running_or_notify_cancel()
            result: Any = None
            error: BaseException | None = None
            if running:
                try:
                    result = fn(*args)
                except BaseException as exc:
                    error = exc
            # The look-up is finished *before* its caller hears of it: a caller that
            # checks again at once must not find its own finished look-up still counted.
            with self._lock:
                for name in key:
                    if name is None:
                        continue
                    self._unfinished[name] -= 1
                    if self._unfinished[name] <= 0:
                        del self._unfinished[name]
                self._idle += 1
            if running:
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(result)

    def stats(self) -> dict[str, int]:
        """Threads, idle threads and unfinished look-ups now (for tests and logs)."""
        with self._lock:
            unfinished = sum(n for name, n in self._unfinished.items() if not name.startswith("share:"))
            return {"threads": self._threads, "idle": self._idle, "unfinished": unfinished}


ADD_LOOKUPS = LookupPool("orbench-dns")
"""Checks of an endpoint a visitor adds, keyed by the visitor's session."""
RUN_LOOKUPS = LookupPool("orbench-dns-run")
"""The re-check a run makes before it connects (and before it starts), keyed by host."""
