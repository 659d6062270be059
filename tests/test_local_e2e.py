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
        assert len(row["response"].split()) >= 3
        assert row["verdict"] in {"direct_answer", "direct_refusal", "indirect_refusal"}
        assert float(row["cost_usd"]) == 0.0
        assert int(row["completion_tokens"]) > 0
    # Answers differ across prompts: it is a model, not a canned reply.
    assert len({row["response"] for row in rows}) == 3
