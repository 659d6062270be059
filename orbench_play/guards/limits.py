"""Door 3, volume: how much one session may ask (cells per run, runs per
minute, the length of a custom prompt), with a message that says what to change."""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Mapping

from .mode import GuardError, env_int

DEFAULT_MAX_CELLS = 80
DEFAULT_RUNS_PER_MINUTE = 6
DEFAULT_MAX_PROMPT_CHARS = 4000


def check_custom_prompt(text: str, *, max_chars: int | None = None, env: Mapping[str, str] | None = None) -> str:
    """A visitor's own prompt: stripped, non-empty, at most ORBENCH_MAX_PROMPT_CHARS characters."""
    limit = max_chars or env_int(env, "ORBENCH_MAX_PROMPT_CHARS", DEFAULT_MAX_PROMPT_CHARS)
    value = (text or "").strip()
    if not value:
        raise GuardError("The custom prompt is empty.")
    if len(value) > limit:
        raise GuardError(f"The custom prompt has {len(value):,} characters; the limit is {limit:,}.")
    return value


class SessionLimiter:
    """Caps one session's runs: cells (prompts × models × repeats) per run and
    runs per rolling minute. Keep one per browser session (e.g. in `gr.State`).

    Limits come from ORBENCH_MAX_CELLS and ORBENCH_RUNS_PER_MINUTE. A refused
    run does not count against the per-minute budget.
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
        self._clock = clock
        self._runs: collections.deque[float] = collections.deque()
        self._lock = threading.Lock()

    def check_run(self, n_cells: int) -> None:
        """Admit a run of `n_cells` or raise GuardError saying what to change.

        Every run is capped, whoever configured its models: the owner's
        entries are exempt only from the endpoint and provider checks, since
        they spend the owner's keys too."""
        if n_cells <= 0:
            raise GuardError("Nothing to run: pick at least one prompt and one model.")
        if n_cells > self.max_cells:
            raise GuardError(
                f"This run has {n_cells} cells (prompts × models); the public demo allows {self.max_cells} per run. "
                "Pick fewer prompts or models."
            )
        with self._lock:
            now = self._clock()
            while self._runs and now - self._runs[0] >= 60.0:
                self._runs.popleft()
            if len(self._runs) >= self.runs_per_minute:
                wait = max(1, int(60.0 - (now - self._runs[0]) + 0.999))
                raise GuardError(
                    f"Slow down: the public demo allows {self.runs_per_minute} runs per minute per session; "
                    f"try again in {wait} s."
                )
            self._runs.append(now)
