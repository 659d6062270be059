"""`python benchmarks/gc_probe.py OUT.json app.py`: app.py as `python app.py`
runs it, with the cyclic garbage collector's work recorded, so the load figure
can say what collections cost the server while visitors stream.

Per generation: collections, their CPU time in total and the longest one since
the last report. CPU time of the collecting thread (`time.thread_time`), not
wall time: on a busy 2-core machine the OS preempts a collection often, and a
wall-clock pause would count that too. Each collection holds the GIL, so its
CPU time is a pause of every stream the process serves. The figures are
written to OUT.json when the process gets SIGUSR1 (`AppProcess.gc_report`
asks before and after the phase it measures).
"""

from __future__ import annotations

import gc
import json
import os
import runpy
import signal
import sys
import time


def main() -> None:
    out, script = sys.argv[1], sys.argv[2]
    counts = [0, 0, 0]
    cpu = [0.0, 0.0, 0.0]
    longest = [0.0, 0.0, 0.0]
    started = [0.0]

    def on_collection(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.thread_time()
            return
        generation, spent = info["generation"], time.thread_time() - started[0]
        counts[generation] += 1
        cpu[generation] += spent
        longest[generation] = max(longest[generation], spent)

    def report(*_: object) -> None:
        data = {
            "generations": {
                str(g): {
                    "collections": counts[g],
                    "cpu_ms": round(1e3 * cpu[g], 2),
                    "longest_cpu_ms_since_last_report": round(1e3 * longest[g], 2),
                }
                for g in range(3)
            },
            "frozen_objects": gc.get_freeze_count(),
            "written": time.time(),
        }
        longest[:] = [0.0, 0.0, 0.0]
        with open(out + ".tmp", "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(out + ".tmp", out)

    gc.callbacks.append(on_collection)
    signal.signal(signal.SIGUSR1, report)
    sys.argv = [script]
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as `python app.py` would have it
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
