"""The fan-out: every (prompt, model, repeat) cell streamed concurrently
through LiteLLM, judged, cached, and reported as `CellEvent`s.

Every consumer (UI, CLI, benchmarks, tests) drives `run(config)` (or
`run_batches(config)`, the same events in lists) and renders the events.

Modules: `fanout` (one task per cell, semaphores, cancellation, cache replay,
coalesced deltas), `calls` (one cell's attempts: LiteLLM's arguments, the
retry loop, what the provider will bill), `streams` (one streamed answer: the
fast SSE reader or LiteLLM's wrapper), `timeouts` (the three limits of an
attempt and their watchdog), `failures` (every exception as a sentence for the
cell), `llm` (LiteLLM imported once, lazily; the cost book), `judging` (one
LLM-judge call per finished answer).

May import: `types`, `text`, `verdicts`, `asking`, `guards`, `cache`,
`budget`, `models` (the catalog and the embedded servers). Never the UI, the CLI, the
evaluation or compare. Importing this package does not import LiteLLM.
"""

from .fanout import FLUSH_INTERVAL_S, Engine, cell_ids, collect, run, run_batches

__all__ = ["FLUSH_INTERVAL_S", "Engine", "cell_ids", "collect", "run", "run_batches"]
