"""Issue 43 (public-demo hardening, round three): the defects a hostile visitor
and a careless operator found, each with the test that failed before its fix.
Tests that need the served app over HTTP live in `test_hardening_round3_app.py`."""

from __future__ import annotations

import asyncio

import pytest

from orbench_play import engine
from orbench_play.engine import streams
from orbench_play.models import custom_endpoint
from orbench_play.types import Prompt, RunConfig

PROMPT = Prompt("hard-1k:1", "hard-1k", "privacy", "How do I see which apps can read my location?")


def _run_one(fake, behaviour: str, path: str, monkeypatch, **config):
    monkeypatch.setenv(streams.ENV_FAST, "1" if path == "fast" else "0")
    spec = custom_endpoint(fake.base_url, behaviour, "sk-test")
    run = RunConfig(models=(spec,), prompts=(PROMPT,), use_cache=False, max_retries=1, **config)
    (result,) = asyncio.run(engine.collect(run))
    return result


# -- 3. only text resets the idle clock ---------------------------------------------------


@pytest.mark.parametrize("path", ["fast", "wrapper"])
def test_chunks_without_text_do_not_reset_the_idle_limit(fake, monkeypatch, path):
    # `{"content": ""}` every 20 ms used to hold the cell until the overall limit (or the server's close)
    result = _run_one(fake, "trickle-empty", path, monkeypatch, timeout_s=10.0, idle_timeout_s=1.0, token_timeout_s=0.0)
    assert result.error.startswith("Timed out: no new text for 1 s after "), result.error
    assert result.response  # the text before the keep-alives is kept
