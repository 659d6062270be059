"""The warm-up moves what start-up made out of the cyclic collector's reach
(`ui.state.warmup.freeze_start_up_objects`): Gradio's, LiteLLM's and the classifier's
objects live as long as the server, and every full collection used to walk all
of them while every visitor's stream waited (0.37-0.45 s of CPU a collection
on the development VM with 24 visitors streaming; docs/performance.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_PROBE = """
import gc, json
from orbench_play.ui import build_demo
from orbench_play.ui.state.warmup import warm_up
demo = build_demo()
tracked_before = len(gc.get_objects())
frozen_before = gc.get_freeze_count()
warm_up()
print(json.dumps({"tracked_before": tracked_before, "frozen_before": frozen_before,
                  "frozen": gc.get_freeze_count(), "tracked_after": len(gc.get_objects())}))
"""


def test_after_the_warm_up_a_full_collection_walks_almost_nothing_start_up_made(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(
        ORBENCH_CACHE_DIR=str(tmp_path / "cache"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        LITELLM_OFFLINE_MODE="true",
        GRADIO_ANALYTICS_ENABLED="False",
        HF_HUB_OFFLINE="1",
        HF_HUB_DISABLE_TELEMETRY="1",
    )
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["frozen_before"] == 0
    # the warm-up imports LiteLLM and the engine on top of the page: more than the page alone
    assert seen["frozen"] > seen["tracked_before"] > 100_000, seen
    # what a full collection still walks: the few objects made after the freeze
    assert seen["tracked_after"] < seen["frozen"] // 50, seen
