"""Figure: a large prompt set sampled while it streams (`data.sample_prompt_set`).

A Parquet set of 200,000 rows (20,000 with --quick) in 20 categories, sampled
10 per category: the wall time beside the floor of reading the same file's
prompt and category columns whole with pyarrow (what a reader that loads the
set into memory needs at least), and the peak Python memory of each
(tracemalloc, in a run of its own): the streamed sample keeps 10 rows per category, the floor holds
every row.
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from pathlib import Path

from . import common
from .report import Figure, ratio


def _write(path: Path, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "text": [f"Prompt number {i}: how would someone do task {i % 997} safely?" for i in range(rows)],
            "topic": [f"c{i % 20}" for i in range(rows)],
            "label": ["safe" if i % 3 else "unsafe" for i in range(rows)],
        }
    )
    pq.write_table(table, path)


def _measure(fn) -> tuple[float, int]:
    """Wall time of one run, then the peak traced memory of another (tracemalloc slows
    Python many times over, so the two are never measured in the same run)."""
    started = time.perf_counter()
    fn()
    wall = time.perf_counter() - started
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return wall, peak


def figures(quick: bool, command: str) -> list[Figure]:
    import pyarrow.parquet as pq

    from orbench_play import data

    rows = 20_000 if quick else 200_000
    with tempfile.TemporaryDirectory(prefix="orbench-bench-sets-") as tmp:
        path = Path(tmp) / "set.parquet"
        _write(path, rows)
        mapping = data.ColumnMap(prompt="text", category="topic", label="label")
        data.preview(data.parse_source(str(path)), mapping)  # imports and first open, not timed

        def stream() -> None:
            picked = data.sample_prompt_set(str(path), mapping, per_category=10, seed=1)
            assert len(picked.prompts) == 200

        def floor() -> None:
            table = pq.read_table(path, columns=["text", "topic"])
            assert table.num_rows == rows
            table.to_pylist()

        value, value_peak = _measure(stream)
        fl, floor_peak = _measure(floor)
    return [
        Figure(
            "prompt_set_sample_wall",
            value,
            "s",
            fl,
            ratio(value, fl),
            {
                "floor_name": "pyarrow read of the prompt and category columns, as Python rows",
                "rows": rows,
                "categories": 20,
                "per_category": 10,
                "stream_peak_mib": common.rnd(value_peak / 2**20, 2),
                "floor_peak_mib": common.rnd(floor_peak / 2**20, 2),
                "command": command,
            },
        )
    ]
