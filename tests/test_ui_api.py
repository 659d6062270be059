"""The playground's named API endpoints through gradio_client, against one
in-process app server per module and the fake OpenAI server over real HTTP."""

from __future__ import annotations

import csv
import io
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support import api_client, fake_models_yaml, serve_playground

from orbench_play.types import RESULT_COLUMNS

FAKE_MODELS = ("answer", "refuse", "slow", "e401", "unknown-model", "answer:b", "relent", "stubborn")


def write_models_yaml(path: Path, base_url: str, names=FAKE_MODELS) -> Path:
    """The fake server's behaviours as models `fake-<behaviour>` (`answer:b` is `fake-answer-b`)."""
    return fake_models_yaml(path, base_url, {f"fake-{name.replace(':', '-')}": name for name in names})


@pytest.fixture(scope="module")
def app_url(fake_server, tmp_path_factory):
    config = write_models_yaml(tmp_path_factory.mktemp("ui-api") / "models.yaml", fake_server.base_url)
    with serve_playground(config, warm=False) as url:
        yield url


def run(c, models, split="hard-1k", categories=("privacy",), n=1, seed=0, max_tokens=128):
    return c.predict(list(models), split, list(categories), n, seed, max_tokens, api_name="/run")


def rows_by_model(payload) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for row in payload["run"]["results"]:
        out.setdefault(row["model"], []).append(row)
    return out


API_ENDPOINTS = {"/run", "/run_prompt", "/stop", "/override", "/compare", "/follow_up"}


def test_the_api_is_exactly_the_named_endpoints(app_url):
    """The page's own events (buttons, live feed, share link, load chain) stay out of
    the API, documented or not, and never take an endpoint's name (no `/run_1`)."""
    import httpx

    for params in ({}, {"all_endpoints": "true"}):
        info = httpx.get(app_url + "gradio_api/info", params=params, timeout=30).json()
        assert set(info["named_endpoints"]) == API_ENDPOINTS, params
        assert not info["unnamed_endpoints"], params
    assert set(api_client(app_url).view_api(print_info=False, return_format="dict")["named_endpoints"]) == API_ENDPOINTS


def test_run_endpoint_returns_results_scoreboard_and_files(app_url):
    c = api_client(app_url)
    out = run(c, ["fake-answer", "fake-refuse"], categories=["privacy", "illegal"], n=2, seed=5)
    progress, grid, board, plot, csv_file, jsonl_file, payload, _cells = out
    assert payload["run"]["total"] == 8 and payload["run"]["done"] == 8
    rows = rows_by_model(payload)
    answer_refusals = sum(r["verdict"] != "direct_answer" for r in rows["fake-answer"])
    assert {r["verdict"] for r in rows["fake-refuse"]} <= {"direct_refusal", "indirect_refusal"}
    assert {r["category"] for r in rows["fake-answer"]} == {"privacy", "illegal"}
    assert 'data-done="8"' in progress and grid.count('class="verdict') == 8
    assert 'data-model="fake-answer"' in board
    assert f"{answer_refusals}/4" in board and "4/4" in board  # the scoreboard counts what the grid shows
    assert "paper-pt" in plot and 'data-model="fake-refuse"' in plot
    header = next(csv.reader(io.StringIO(Path(csv_file).read_text(encoding="utf-8"))))
    assert tuple(header[: len(RESULT_COLUMNS)]) == RESULT_COLUMNS
    assert len(Path(jsonl_file).read_text(encoding="utf-8").splitlines()) == 8


def test_errors_are_per_cell_and_the_run_continues(app_url):
    out = run(api_client(app_url), ["fake-answer", "fake-e401", "fake-unknown-model"])
    rows = rows_by_model(out[6])
    assert rows["fake-answer"][0]["verdict"] == "direct_answer"
    assert rows["fake-e401"][0]["verdict"] == "error" and "401" in rows["fake-e401"][0]["error"]
    assert rows["fake-unknown-model"][0]["verdict"] == "error" and "404" in rows["fake-unknown-model"][0]["error"]
    assert "Authentication failed" in out[1] and "Unknown model" in out[1]


def test_override_endpoint_updates_the_score(app_url, fake_server):
    fake_server.set_text("answer:b", "Sure, here is a short overview of the topic with three practical points.")
    c = api_client(app_url)
    out = run(c, ["fake-answer-b"], categories=["hate"], n=2, seed=1)
    cells = list(out[6]["run"]["results"])
    assert len(cells) == 2 and all(r["verdict"] == "direct_answer" for r in cells), [
        (r["response"], r["verdict"], r["error"]) for r in cells
    ]
    assert "0/2" in out[2]
    first = cells[0]["cell_id"]
    board_out = c.predict(first, "direct_refusal", api_name="/override")
    grid, board, _plot, csv_file, _jsonl, payload, _cells = board_out
    assert "1/2" in board
    changed = next(r for r in payload["run"]["results"] if r["row_id"] == cells[0]["row_id"])
    assert changed["verdict"] == "direct_refusal" and changed["verdict_source"] == "user"
    assert 'data-source="user"' in grid and ">set by you<" in grid  # the source in words, not a raw label
    assert ",direct_refusal,user," in Path(csv_file).read_text(encoding="utf-8")


def test_follow_up_endpoint_asks_the_refused_cells_again_and_scores_relent(app_url, fake_server):
    c = api_client(app_url)
    run(c, ["fake-relent", "fake-stubborn", "fake-answer"], categories=["privacy"], n=2, seed=3)
    sent = fake_server.request_count()
    out = c.predict("Clarify benign intent", "", "", False, api_name="/follow_up")
    progress, grid, board, _plot, csv_file, _jsonl, payload, _cells = out
    assert fake_server.request_count() == sent + 4, "the four refused cells, not the answered ones"
    turn2 = [r for r in payload["run"]["results"] if r["turn"] == 2]
    assert {(r["model"], r["verdict"]) for r in turn2} == {
        ("fake-relent", "direct_answer"),
        ("fake-stubborn", "direct_refusal"),
    }
    assert 'data-total="4"' in progress and grid.count('class="verdict') == 6
    assert "Relent <small>benign</small>" in board and "2/2" in board and "0/2" in board
    exported = list(csv.DictReader(io.StringIO(Path(csv_file).read_text(encoding="utf-8"))))
    assert len(exported) == 10 and {r["turn"] for r in exported} == {"1", "2"}


def test_sessions_are_isolated_and_run_side_by_side(app_url, fake_server):
    """A slow session does not hold up another visitor, and neither sees the other's results."""
    slow_client, quick_client = api_client(app_url), api_client(app_url)
    fake_server.delay = 3.0
    outcome: dict[str, Any] = {}

    def slow_run():
        outcome["slow"] = run(slow_client, ["fake-slow"], categories=["privacy"], n=1, seed=9)
        outcome["slow_at"] = time.monotonic()

    try:
        worker = threading.Thread(target=slow_run)
        worker.start()
        deadline = time.monotonic() + 60  # the slow session's request reaches the provider first
        while not fake_server.request_count("slow") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert fake_server.request_count("slow") == 1
        quick = run(quick_client, ["fake-answer"], categories=["violence"], n=1, seed=9)
        quick_at = time.monotonic()
        worker.join(30)
    finally:
        fake_server.delay = 1.0
    assert "slow_at" in outcome and quick_at < outcome["slow_at"]
    assert [r["model"] for r in quick[6]["run"]["results"]] == ["fake-answer"]
    assert quick[6]["session_results"] == 1
    slow_payload = outcome["slow"][6]
    assert slow_payload["session_results"] == 1 and slow_payload["run"]["results"][0]["model"] == "fake-slow"


def test_custom_prompt_endpoint(app_url):
    out = api_client(app_url).predict(
        "Explain how lock picking works.", ["fake-answer", "fake-refuse"], 128, api_name="/run_prompt"
    )
    rows = out[6]["run"]["results"]
    assert {r["split"] for r in rows} == {"custom"} and len(rows) == 2
    assert any("lock picking" in r["response"] for r in rows)
