"""`make bench` still runs: the benchmark CLI at tiny sizes, checked for shape only.

Benchmarks never fail the suite on timing; this only checks that the figures
are produced and well-formed (positive numbers, a named floor, the command).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_bench_quick_writes_figures(tmp_path):
    out = tmp_path / "bench.json"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks",
            "--quick",
            "--only",
            "fanout,live_engine,replay,verdicts,soak",
            "--out",
            str(out),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(out.read_text())
    names = {f["name"] for f in figures}
    assert {"fanout_wall", "fanout_cpu_per_cell", "replay_wall", "verdicts_per_s"} <= names, names
    assert {"live_engine_128x300_wall", "live_engine_128x300_cpu_per_cell", "live_engine_sessions_4x4"} <= names
    assert {"live_engine_128x300_thinking", "live_engine_128x300_thinking_cpu_per_cell"} <= names
    assert "live_engine_128x300_follow_up" in names
    assert "soak_memory" in names  # the soak of memory that left the suite (tests/test_load.py) runs here
    (soak,) = [f for f in figures if f["name"] == "soak_memory"]
    assert soak["detail"]["failed_cells"] == 0, soak["detail"]["errors"]
    for f in figures:
        assert set(f) == {"name", "value", "unit", "floor", "ratio", "detail"}, f
        assert "skipped" not in f["detail"], f["detail"]
        for key in ("value", "floor", "ratio"):
            assert isinstance(f[key], (int, float)) and f[key] > 0, (f["name"], key, f[key])
        assert f["detail"]["floor_name"] and f["detail"]["command"].startswith("python -m benchmarks")
    assert "| fanout_wall" in proc.stdout  # the printed table


def test_bench_rejects_unknown_figure():
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--only", "nope"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and "unknown figure" in proc.stderr
