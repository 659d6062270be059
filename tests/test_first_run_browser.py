"""The first minute of a new user, end to end: `python app.py` from a fresh start
with the Hub unreachable and no ORBENCH_DATA_DIR, then Run with the defaults in
headless Debian Chromium (every default but the categories: two, not ten).

Done means: the run finishes with no error cells, with prompts from both
hard-1k and toxic (the shipped copies), the scoreboard shows a mini-score, and
the default models, the embedded SmolLM2 beside Qwen2.5-Coder-0.5B (settling on,
as the page starts for them), run for real and show two rows on the scoreboard
and two points on the plot. How long the run took is written to
test-artifacts/first-run-pair-timings.txt and printed; it is a figure to report,
not a pass/fail condition (the default run's time is `make bench`'s
first_run_browser).
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from support import ALL_FINAL, app_py, chromium, free_port, watch_errors

pytestmark = [pytest.mark.browser, pytest.mark.local_model]

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"
VERDICTS_JS = "els => els.map(e => ({model: e.dataset.model, row: e.dataset.row, verdict: e.dataset.verdict}))"
MINI_SCORE_JS = """() => {
    const table = document.querySelector('#scoreboard table');
    if (!table) return null;
    const heads = [...table.querySelectorAll('thead th')].map(th => th.innerText.trim().toLowerCase());
    const col = heads.findIndex(h => h.startsWith('mini-score'));
    const row = table.querySelector('tbody tr');
    if (col < 0 || !row) return null;
    return row.children[col].innerText.trim();
}"""


def app_env(tmp_path: Path, port: int) -> dict[str, str]:
    """A fresh start: no data folder or data source, no model list, an empty cache,
    and a Hub endpoint nothing listens on (unreachable, not merely switched off)."""
    drop = ("ORBENCH_DATA_DIR", "ORBENCH_DATA_SOURCE", "ORBENCH_MODELS", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    env = {k: v for k, v in os.environ.items() if k not in drop and k != "PYTHONPATH"}
    env.update(
        HF_ENDPOINT=f"http://127.0.0.1:{free_port()}",
        ORBENCH_CACHE_DIR=str(tmp_path / "cache"),
        GRADIO_SERVER_NAME="127.0.0.1",
        GRADIO_SERVER_PORT=str(port),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        LITELLM_OFFLINE_MODE="true",
        GRADIO_ANALYTICS_ENABLED="False",
        HF_HUB_DISABLE_TELEMETRY="1",
        # A token a second is the default allowance; beside the rest of the suite 16 parallel
        # answers on 2 cores get less, and a cut answer is not what these tests check.
        ORBENCH_TOKEN_TIMEOUT_S="10",
    )
    return env


@pytest.fixture(scope="module")
def fresh_app(tmp_path_factory):
    """One fresh `python app.py` for the module (an app start costs ~10 s of CPU here:
    Gradio, LiteLLM, the warm-up, which also starts the embedded servers)."""
    folder = tmp_path_factory.mktemp("first-run")
    log = folder / "app.log"
    with app_py(REPO, app_env(folder, free_port()), log, within=120) as (url, _body):
        yield url, log


SMOL = "local/smollm2-135m"
QWEN = "local/qwen2.5-coder-0.5b"
PAIR_LIMIT_MS = 900_000
"""The pair on a shared machine: the figure is what counts (README, benchmarks)."""
PAIR_PROMPTS = 4
"""The pair's run: one prompt of each of two categories, in hard-1k and in toxic."""
POINTS_JS = "els => els.map(e => e.dataset.model)"
SCORED_JS = """n => [...document.querySelectorAll('#scoreboard tr[data-model] td.scored, #scoreboard tr[data-model] td.errors')]
                 .reduce((sum, td) => sum + Number(td.innerText), 0) === n"""
"""The scoreboard accounts for every cell of the run (scored or an error; errors fail later, with the grid)."""


def _first_run(url: str, log: Path, *, query: str, models: set[str], limit_ms: int, tag: str, prompts: int) -> dict:
    """Open the page (with `query`), check the share link names `models`, press Run, and
    wait until every verdict is final; returns what the page showed and how long it took."""
    cells = prompts * len(models)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        errors = watch_errors(page)
        page.goto(url + query)
        # The defaults, as the share link states them: the models and the OR-Bench pair.
        page.wait_for_function(
            "() => (document.querySelector('#share textarea')?.value || '').includes('split=hard-1k,toxic')",
            timeout=60_000,
        )
        share = page.locator("#share textarea").input_value()
        settle = page.locator("#settle input").is_checked()
        assert f"models={','.join(sorted(models, key=[SMOL, QWEN].index))}" in share and "n=1" in share, share
        assert "Could not reach" not in page.locator("#banner").inner_text()

        clicked = time.monotonic()
        page.click("#run button, button#run")
        page.wait_for_function(ALL_FINAL, arg=cells, timeout=limit_ms)
        run_s = time.monotonic() - clicked
        found = page.eval_on_selector_all("#grid .verdict", VERDICTS_JS)
        grid_text = page.locator("#grid").inner_text()
        # The run's last frame brings the scoreboard; it accounts for every cell.
        page.wait_for_function(SCORED_JS, arg=cells, timeout=15_000)
        with contextlib.suppress(PlaywrightTimeout):
            page.wait_for_function(
                "n => document.querySelectorAll('#plot .session-pt').length >= n", arg=len(models), timeout=15_000
            )
        shown = {
            "run_s": run_s,
            "settle": settle,
            "found": found,
            "grid_text": grid_text,
            "mini": page.evaluate(MINI_SCORE_JS),
            "board": page.locator("#scoreboard").inner_text(),
            "rows": page.eval_on_selector_all("#scoreboard tr[data-model]", POINTS_JS),
            "intervals": page.locator("#scoreboard tr[data-model] .ci").count(),
            "points": page.eval_on_selector_all("#plot .session-pt", POINTS_JS),
            "paper_points": page.locator("#plot .paper-pt").count(),
            "errors": errors,
        }
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"first-run{tag}.png"), full_page=True)
        page.close()
    bad = [v for v in found if v["verdict"] not in ("direct_answer", "direct_refusal", "indirect_refusal")]
    assert not bad, f"error cells: {bad}\n{grid_text[:3000]}"
    assert {v["model"] for v in found} == models
    rows = {v["row"] for v in found}
    assert len(rows) == prompts
    assert (
        sum(r.startswith("hard-1k:") for r in rows) == prompts // 2
        and sum(r.startswith("toxic:") for r in rows) == prompts // 2
    )
    assert "%" in (shown["mini"] or ""), f"no mini-score on the scoreboard: {shown['mini']!r}\n{shown['board'][:2000]}"
    assert shown["errors"] == []
    assert "Traceback" not in log.read_text(errors="replace")
    return shown


def _refusals(found: list[dict], model: str, split: str) -> str:
    mine = [v for v in found if v["model"] == model and v["row"].startswith(split + ":")]
    return f"{sum(v['verdict'] != 'direct_answer' for v in mine)}/{len(mine)}"


@pytest.mark.timeout(1200)
def test_first_run_with_the_defaults_shows_both_embedded_models_apart(fresh_app):
    """`make run`'s default (and a Space's): SmolLM2 beside Qwen2.5-Coder-0.5B, their answers
    stopped once their verdict settles. Two rows on the scoreboard and two points on the
    plot, beside the paper's 32."""
    url, log = fresh_app
    load_before = os.getloadavg()
    shown = _first_run(
        url,
        log,
        # Every default but the categories: two, not ten (8 answers, not 40). The default
        # run's own time is make bench's first_run_browser figure: 40 real answers here kept
        # both cores busy for minutes and starved the suite's other workers. These two are
        # where the default run (seed 0, greedy) has Qwen refuse toxic prompts (2 of 2 here)
        # and SmolLM2 none: the two points are apart on the toxic axis.
        query="?categories=harmful,hate",
        models={SMOL, QWEN},
        limit_ms=PAIR_LIMIT_MS,
        tag="-pair",
        prompts=PAIR_PROMPTS,
    )
    found = shown["found"]
    cut = shown["grid_text"].count("Timed out")
    settled = shown["grid_text"].count("verdict settled")
    figure = (
        f"first run with the defaults but two categories ({PAIR_PROMPTS} prompts × 2 embedded models, their own "
        f"max tokens, settling on, cold cache, Hub unreachable, no ORBENCH_DATA_DIR): click to all verdicts final "
        f"{shown['run_s']:.1f} s; answers settled: {settled}; cut by a timeout: {cut}; "
        f"refused hard-1k / toxic: SmolLM2 {_refusals(found, SMOL, 'hard-1k')} / {_refusals(found, SMOL, 'toxic')}, "
        f"Qwen {_refusals(found, QWEN, 'hard-1k')} / {_refusals(found, QWEN, 'toxic')}; mini-score {shown['mini']}; "
        f"load average before {load_before}, after {os.getloadavg()}\n"
    )
    (ARTIFACTS / "first-run-pair-timings.txt").write_text(figure, encoding="utf-8")
    print(figure)
    assert shown["settle"], "the settle switch is on by default for the embedded models"
    refused = {m: int(_refusals(found, m, "toxic").split("/")[0]) for m in (SMOL, QWEN)}
    assert refused[QWEN] > refused[SMOL], f"the two points are not apart on the toxic axis: {refused}"
    assert sorted(shown["rows"]) == sorted([SMOL, QWEN]), shown["board"][:2000]
    assert sorted(shown["points"]) == sorted([SMOL, QWEN])
    assert shown["intervals"] >= 2 * 3, shown["board"][:2000]  # over-refusal, toxic refusal, mini-score, each
    assert shown["paper_points"] == 32
