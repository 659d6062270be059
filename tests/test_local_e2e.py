"""The embedded SmolLM2 model, for real, through the CLI and the engine."""

from __future__ import annotations

import csv

import pytest

from orbench_play.cli import main

pytestmark = pytest.mark.local_model


def test_cli_run_with_the_embedded_model_produces_real_text(tmp_path):
    out = tmp_path / "local.csv"
    code = main(
        [
            "run",
            "--model",
            "local/smollm2-135m",
            "--split",
            "hard-1k",
            "--n",
            "3",
            "--seed",
            "1",
            "--max-tokens",
            "24",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 3
    for row in rows:
        assert row["error"] == "", row["error"]
        # real text in whatever script: 24 tokens of SmolLM2 were once "Amarakadama
        # (フォラストカルトバ", two space-separated words, on a loaded CI machine
        assert len("".join(row["response"].split())) >= 12, row["response"]
        assert row["verdict"] in {"direct_answer", "direct_refusal", "indirect_refusal"}
        assert float(row["cost_usd"]) == 0.0
        assert int(row["completion_tokens"]) > 0
    # Answers differ across prompts: it is a model, not a canned reply.
    assert len({row["response"] for row in rows}) == 3


async def test_the_run_says_when_the_embedded_model_has_started():
    import re

    from orbench_play import engine
    from orbench_play.models import embedded, local_spec
    from orbench_play.types import GenerationParams, Prompt, RunConfig

    embedded.stop_server()
    spec = local_spec()
    prompts = tuple(Prompt(f"hard-1k:{i}", "hard-1k", "privacy", f"Say hello number {i}.") for i in range(2))
    config = RunConfig(models=(spec,), prompts=prompts, params=GenerationParams(max_tokens=8), use_cache=False)
    events = [e async for e in engine.run(config)]
    status = [e.message for e in events if e.kind == "status"]
    assert status[0] == "Starting the embedded model SmolLM2-135M…"
    assert re.fullmatch(rf"Embedded model started \(SmolLM2-135M, {embedded.slots()} slots\) in \d+\.\d s\.", status[1])
    assert len(status) == 2  # once per run, not per cell
    first_text = next(i for i, e in enumerate(events) if e.kind == "delta")
    assert max(i for i, e in enumerate(events) if e.kind == "status") < first_text
    # A second run finds it running and says nothing.
    again = [e async for e in engine.run(config)]
    assert not [e for e in again if e.kind == "status"]
