"""The run list in headless Chromium: run twice (two seeds), switch to run 1 and
see run 1's grid and scoreboard again, then back to "All runs"."""

from __future__ import annotations

import pytest
from support import (
    ALL_FINAL,
    browser_page,
    choose,
    chromium,
    errors_of,
    fake_models_yaml,
    open_share_link,
    serve_playground,
)

pytestmark = pytest.mark.browser

ROWS = "() => [...document.querySelectorAll('#grid .verdict')].map(e => e.dataset.row).sort().join(',')"
SCORED = "() => document.querySelector('#scoreboard td.scored')?.innerText || ''"


@pytest.fixture(scope="module")
def app_url(fake_server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("ui-history")
    config = fake_models_yaml(folder / "models.yaml", fake_server.base_url, {"fake-refuse": "refuse"})
    with serve_playground(config, warm=False) as url:
        yield url


def test_switch_to_an_earlier_run_and_back(app_url):
    with chromium() as browser, browser_page(browser, viewport={"width": 1400, "height": 1000}) as page:
        open_share_link(
            page, app_url, "?models=fake-refuse&split=hard-1k&categories=privacy&n=2&seed=0", timeout_ms=90_000
        )
        page.click("#run button, button#run")
        page.wait_for_function(ALL_FINAL, arg=2, timeout=120_000)
        first = page.evaluate(ROWS)
        # ALL_FINAL waits for the run's end too: a click on Run while a run is on is
        # not a new run (a loaded full run lost the second run so)
        page.fill("#seed input", "1")
        page.press("#seed input", "Tab")
        page.click("#run button, button#run")
        page.wait_for_function(f"r => ({ROWS})() !== r && ({ALL_FINAL})(2)", arg=first, timeout=120_000)
        second = page.evaluate(ROWS)
        together = len(set(first.split(",")) | set(second.split(",")))
        page.wait_for_function(f"n => ({SCORED})() === String(n)", arg=together, timeout=30_000)

        choose(page, "run_history", "Run 1 ·", once_listed="Run 2 ·")
        page.wait_for_function("() => document.querySelector('#run_history input')?.value.startsWith('Run 1 ·')")
        page.wait_for_function(f"r => ({ROWS})() === r", arg=first, timeout=30_000)
        page.wait_for_function(f"() => ({SCORED})() === '2'", timeout=30_000)
        assert "Showing run 1" in page.inner_text("#progress")

        choose(page, "run_history", "All runs")
        page.wait_for_function(f"r => ({ROWS})() === r", arg=second, timeout=30_000)
        page.wait_for_function(f"n => ({SCORED})() === String(n)", arg=together, timeout=30_000)
        assert "Showing run" not in page.inner_text("#progress")
        assert errors_of(page) == []
