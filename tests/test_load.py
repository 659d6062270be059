"""Issue #6, load: many visitors at once through the app's API.

- `test_concurrent_sessions`: SESSIONS gradio_client sessions run at once,
  each 8 prompts × 2 models against the fake server, through the `/run`
  endpoint. Reports completion count, lost results (target 0), cross-session
  leakage (target 0: each session sees only its own prompts and answers) and
  p50/p95 session time against one session alone (target p95 ≤ 3×).

The long soak of memory in one process (200 sequential engine runs, RSS flat)
is `make bench`'s `soak_memory` figure (benchmarks/soak.py): a soak is a
measurement over time, and beside the suite its first call once took 11 s.

Each session uses its own `max_tokens`, which is part of the cache key, so
sessions never get each other's cached answers and every cell is really sent.
Figures are printed (run with `-s`) and written to `load-report.json` in the
test's temp folder.
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from pathlib import Path

import pytest
from support import api_client, app_py, fake_models_yaml, free_port

SESSIONS = int(os.environ.get("ORBENCH_LOAD_SESSIONS", "24"))
CATEGORIES = ["privacy", "illegal", "harmful", "deception"]
PER_CATEGORY = 2  # 4 categories × 2 = 8 prompts
MODELS = ["fake-slow", "fake-answer"]


@pytest.fixture(scope="module")
def app_url(fake_server, tmp_path_factory):
    """The app as it is deployed: `python app.py` in its own process (the
    gradio clients and the fake server stay in this one, as visitors and a
    provider would be elsewhere)."""
    folder = tmp_path_factory.mktemp("load")
    config = fake_models_yaml(
        folder / "models.yaml", fake_server.base_url, {f"fake-{b}": b for b in ("slow", "answer")}
    )
    env = dict(
        os.environ,
        ORBENCH_MODELS=str(config),
        GRADIO_SERVER_PORT=str(free_port()),
        ORBENCH_CACHE_DIR=str(folder / "cache"),
    )
    with app_py(Path(__file__).resolve().parent.parent, env, folder / "app.log", within=120) as (url, _page):
        yield url


def _expected_rows(seed: int) -> dict[str, str]:
    """row_id -> prompt text of what a session with this seed must get back."""
    from orbench_play import data

    picked = data.sample(data.load_split("hard-1k"), categories=CATEGORIES, per_category=PER_CATEGORY, seed=seed)
    return {p.row_id: p.text for p in picked.prompts}


class SessionOutcome:
    def __init__(self, seed: int):
        self.seed = seed
        self.seconds: float | None = None
        self.rows: list[dict] = []
        self.error: str | None = None


def _one_session(client, seed: int, max_tokens: int, outcome: SessionOutcome) -> None:
    start = time.perf_counter()
    try:
        out = client.predict(MODELS, "hard-1k", CATEGORIES, PER_CATEGORY, seed, max_tokens, api_name="/run")
        outcome.rows = list(out[6]["run"]["results"])
    except Exception as exc:  # counted as lost results below
        outcome.error = f"{type(exc).__name__}: {exc}"
    outcome.seconds = time.perf_counter() - start


def _score(outcome: SessionOutcome) -> tuple[int, int, int]:
    """(complete rows, lost rows, leaked rows) of one session."""
    from fake_openai import answer_text

    expected = _expected_rows(outcome.seed)
    want = len(expected) * len(MODELS)
    complete = leaked = 0
    seen = set()
    for row in outcome.rows:
        mine = row.get("row_id") in expected and row.get("prompt") == expected[row.get("row_id")]
        answer_ok = row.get("response") == answer_text(row.get("prompt") or "")
        if not mine or not answer_ok:
            leaked += 1
            continue
        key = (row["row_id"], row["model"])
        if key in seen:
            leaked += 1  # a duplicate is somebody's row too many
            continue
        seen.add(key)
        if row.get("verdict") in ("direct_answer", "direct_refusal", "indirect_refusal") and not row.get("error"):
            complete += 1
    return complete, want - complete, leaked


@pytest.fixture(scope="module")
def load_report(app_url, fake_server, tmp_path_factory):
    """Run the load once (inside the no-egress fence); the tests below read its figures."""
    from egress import fenced

    with fenced():
        return _measure(app_url, fake_server, tmp_path_factory.mktemp("load-report"))


CLIENT_TIMEOUT_S = 60.0
"""gradio_client's HTTP time limit. Its default is httpx's 5 s for the queue's
join request, and with 24 sessions arriving at once on a busy 2-core machine
the app can take longer than that to answer one (a quiet full run lost a
session so): a visitor's browser would wait."""


def _client(url: str):
    import httpx

    return api_client(url, httpx_kwargs={"timeout": httpx.Timeout(CLIENT_TIMEOUT_S)})


def _measure(app_url, fake_server, tmp_path) -> dict:
    fake_server.reset()
    fake_server.delay = 1.0  # the slow model streams for ~1 s, like a real one
    fake_server.chunks = 10

    # One session alone, three times (the first also warms the process up).
    solo_times = []
    for i in range(3):
        outcome = SessionOutcome(seed=9000 + i)
        _one_session(_client(app_url), outcome.seed, 300 + i, outcome)
        assert outcome.error is None and _score(outcome)[1:] == (0, 0), (outcome.error, _score(outcome))
        solo_times.append(outcome.seconds)
    solo = statistics.median(solo_times[1:])

    clients = [_client(app_url) for _ in range(SESSIONS)]
    outcomes = [SessionOutcome(seed=100 + i) for i in range(SESSIONS)]
    barrier = threading.Barrier(SESSIONS)

    def go(i: int) -> None:
        barrier.wait()
        _one_session(clients[i], outcomes[i].seed, 400 + i, outcomes[i])

    threads = [threading.Thread(target=go, args=(i,)) for i in range(SESSIONS)]
    wall = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(200)
    wall = time.perf_counter() - wall

    scores = [_score(o) for o in outcomes]
    times = sorted(o.seconds for o in outcomes if o.seconds is not None)
    p50 = statistics.median(times)
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    report = {
        "sessions": SESSIONS,
        "cells_per_session": len(CATEGORIES) * PER_CATEGORY * len(MODELS),
        "completed_cells": sum(s[0] for s in scores),
        "expected_cells": SESSIONS * len(CATEGORIES) * PER_CATEGORY * len(MODELS),
        "lost_cells": sum(s[1] for s in scores),
        "leaked_cells": sum(s[2] for s in scores),
        "session_errors": [o.error for o in outcomes if o.error],
        "solo_s": round(solo, 3),
        "p50_s": round(p50, 3),
        "p95_s": round(p95, 3),
        "p95_over_solo": round(p95 / solo, 2),
        "wall_s": round(wall, 2),
        "fake_server_peak_in_flight": fake_server.max_in_flight,
    }
    (tmp_path / "load-report.json").write_text(json.dumps(report, indent=2))
    print("\nLOAD REPORT " + json.dumps(report))
    return report


@pytest.mark.timeout(240)
def test_concurrent_sessions_lose_and_leak_nothing(load_report):
    assert not load_report["session_errors"]
    assert load_report["lost_cells"] == 0
    assert load_report["leaked_cells"] == 0
    assert load_report["completed_cells"] == load_report["expected_cells"]
    # p50/p95 against one session alone is a measured figure, printed in the
    # LOAD REPORT line and quoted in SECURITY.md; timing targets are not asserted.
    assert load_report["p95_s"] >= load_report["p50_s"] > 0
