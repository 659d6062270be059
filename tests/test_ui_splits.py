"""Several splits in one run, through the `/run` API endpoint (gradio_client)
against the fake OpenAI server."""

from __future__ import annotations

import pytest
from support import api_client, serve_playground
from test_ui_api import run, write_models_yaml


@pytest.fixture(scope="module")
def app_url(fake_server, tmp_path_factory):
    config = write_models_yaml(tmp_path_factory.mktemp("ui-splits") / "models.yaml", fake_server.base_url)
    with serve_playground(config, warm=False) as url:
        yield url


def test_run_endpoint_takes_a_split_list_and_samples_each_split(app_url):
    """N per category of each split; a single split name (the old form) still works."""
    c = api_client(app_url)
    out = run(c, ["fake-answer"], split=["toxic", "hard-1k"], categories=["privacy", "hate"], n=1, seed=3)
    rows = out[6]["run"]["results"]
    assert sorted((r["split"], r["category"]) for r in rows) == [
        ("hard-1k", "hate"), ("hard-1k", "privacy"), ("toxic", "hate"), ("toxic", "privacy"),
    ]  # fmt: skip
    one = run(c, ["fake-answer"], split="toxic", categories=["privacy", "hate"], n=1, seed=3)[6]["run"]["results"]
    assert [r["row_id"] for r in one] == [r["row_id"] for r in rows if r["split"] == "toxic"]


def test_no_split_chosen_says_so(app_url):
    out = run(api_client(app_url), ["fake-answer"], split=[], categories=["privacy"], n=1, seed=3)
    assert "Choose at least one split." in out[0]


def test_the_loading_line_shows_how_far_a_hub_stream_has_got(monkeypatch):
    from orbench_play.data import sources as data_sources
    from orbench_play.ui.handlers.playground import _loading_message

    assert _loading_message(["hard-1k", "toxic"]) == "Loading the hard-1k and toxic splits…"
    monkeypatch.setitem(data_sources._hub_rows, "80k", 12_345)
    assert _loading_message(["hard-1k", "80k"]) == (
        "Streaming OR-Bench from the Hugging Face Hub (80k: 12,345 prompts read)…"
    )
