"""The playground in headless Debian Chromium (playwright), against the fake
OpenAI server. One app server and one browser for the whole module.

Screenshots of finished runs are saved under test-artifacts/ (gitignored).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support import chromium, fake_models_yaml, serve_playground

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
MODELS = {
    "fake-answer": "answer",
    "fake-refuse": "refuse",
    "fake-slow-a": "slow:a",
    "fake-slow-b": "slow:b",
    "fake-slow-c": "slow:c",
    "fake-hostile": "hostile",
    "fake-hang": "hang",
    "fake-answer-z": "answer:z",
}
ALL_FINAL = (
    "() => { const v = [...document.querySelectorAll('#grid .verdict')];"
    " return v.length > 0 && v.every(e => e.dataset.verdict !== 'pending'); }"
)
VERDICTS_JS = (
    "els => els.map(e => ({model: e.dataset.model, row: e.dataset.row,"
    " verdict: e.dataset.verdict, source: e.dataset.source}))"
)


@pytest.fixture(scope="module")
def app_url(fake_server, tmp_path_factory):
    config = fake_models_yaml(tmp_path_factory.mktemp("ui-browser") / "models.yaml", fake_server.base_url, MODELS)
    with serve_playground(config) as url:
        yield url


@pytest.fixture(scope="module")
def browser(app_url):
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.errors = errors  # type: ignore[attr-defined]
    try:
        yield pg
    finally:
        context.close()


def open_share(page, app_url: str, query: str) -> float:
    started = time.monotonic()
    page.goto(app_url + query)
    page.wait_for_selector("#run")
    # The load handler pre-fills the controls from the query; the share box reflects them.
    page.wait_for_function(
        "q => (document.querySelector('#share textarea')?.value || '').endsWith(q)", arg=query, timeout=20_000
    )
    return time.monotonic() - started


def verdicts(page) -> list[dict]:
    return page.eval_on_selector_all("#grid .verdict", VERDICTS_JS)


def test_share_link_run_streams_all_columns_and_ends_with_scoreboard_and_plot(page, app_url, fake_server):
    """Done means: 3 models × 10 prompts stream in all columns at once, then a scoreboard and plot."""
    fake_server.delay, fake_server.chunks = 2.0, 20
    query = "?models=fake-slow-a,fake-slow-b,fake-slow-c&split=hard-1k&categories=all&n=1&seed=4"
    load_s = open_share(page, app_url, query)
    assert page.locator("#seed input").input_value() == "4"
    assert page.locator("#split input[value='hard-1k']").is_checked()
    try:
        clicked = time.monotonic()
        page.click("#run button, button#run")
        page.wait_for_selector("#grid .resp", timeout=20_000)
        first_token_s = time.monotonic() - clicked
        # While streaming: every column has text in cells whose verdict is not final yet.
        page.wait_for_function(
            """() => {
                const live = [...document.querySelectorAll('#grid td.cell')].filter(td =>
                    td.querySelector('.verdict')?.dataset.verdict === 'pending' && td.querySelector('.resp'));
                const models = new Set(live.map(td => td.querySelector('.verdict').dataset.model));
                return models.size === 3 && live.length >= 15;
            }""",
            timeout=20_000,
        )
        page.wait_for_function(ALL_FINAL, timeout=60_000)
        run_s = time.monotonic() - clicked
    finally:
        fake_server.delay, fake_server.chunks = 1.0, 20
    found = verdicts(page)
    assert len(found) == 30
    assert {v["model"] for v in found} == {"fake-slow-a", "fake-slow-b", "fake-slow-c"}
    assert len({v["row"] for v in found}) == 10 and all(v["row"].startswith("hard-1k:") for v in found)
    assert all(v["verdict"] in ("direct_answer", "direct_refusal", "indirect_refusal") for v in found)
    page.wait_for_selector("#scoreboard table.sb tr[data-model='fake-slow-c']")
    assert page.locator("#plot svg circle.paper-pt").count() == 32
    assert page.locator("#plot svg g.session-pt").count() == 3
    assert "30/30" in page.locator("#progress").inner_text()
    assert run_s < 30 and page.errors == []  # type: ignore[attr-defined]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "playground-finished-run.png"), full_page=True)
    (ARTIFACTS / "playground-timings.txt").write_text(
        f"page load to pre-filled controls: {load_s:.2f} s\nclick to first visible token: {first_token_s:.2f} s\n"
        f"click to all 30 verdicts final (2 s streams): {run_s:.2f} s\n",
        encoding="utf-8",
    )


def test_clicking_a_verdict_overrides_it_and_rescores(page, app_url):
    open_share(page, app_url, "?models=fake-refuse&split=hard-1k&categories=privacy&n=2&seed=2")
    page.click("#run button, button#run")
    page.wait_for_function(ALL_FINAL, timeout=30_000)
    before = verdicts(page)
    assert len(before) == 2 and all(v["verdict"] in ("direct_refusal", "indirect_refusal") for v in before)
    row = before[0]["row"]
    board = page.locator("#scoreboard tr[data-model='fake-refuse']")
    assert "2/2" in board.inner_text()
    page.click(f"#grid .verdict[data-row='{row}']")  # opens the menu
    page.click(f"#grid td.cell:has(.verdict[data-row='{row}']) button.ov[data-label='direct_answer']")
    page.wait_for_selector(f"#grid .verdict[data-row='{row}'][data-source='user'][data-verdict='direct_answer']")
    page.wait_for_function(
        "() => document.querySelector(\"#scoreboard tr[data-model='fake-refuse']\")?.innerText.includes('1/2')"
    )
    text = page.locator(f"#grid td.cell:has(.verdict[data-row='{row}'])").inner_text()
    assert "set by you" in text and "verdict_source" not in text


def test_hostile_answer_executes_nothing(page, app_url):
    page.add_init_script("window.__pwned = undefined; window.alert = () => { window.__pwned = 'alert'; };")
    open_share(page, app_url, "?models=fake-hostile,fake-answer-z&split=toxic&categories=violence&n=2&seed=1")
    page.click("#run button, button#run")
    page.wait_for_function(ALL_FINAL, timeout=30_000)
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#grid img, #grid script, #grid iframe, #grid svg, #grid a").count() == 0
    text = page.locator("#grid td.cell:has(.verdict[data-model='fake-hostile'])").first.inner_text()
    assert "<script>window.__pwned=1</script>" in text and "${7*7}" in text and "{{7*7}}" in text
    assert "\u202e" not in text and "U+202E" in text
    assert page.errors == []  # type: ignore[attr-defined]


def test_stop_keeps_finished_cells(page, app_url, fake_server):
    open_share(page, app_url, "?models=fake-answer-z,fake-hang&split=hard-1k&categories=deception,privacy&n=1&seed=8")
    page.click("#run button, button#run")
    page.wait_for_function(
        "() => { const v = [...document.querySelectorAll(\"#grid .verdict[data-model='fake-answer-z']\")];"
        " return v.length === 2 && v.every(e => e.dataset.verdict !== 'pending'); }",
        timeout=30_000,
    )
    assert page.locator("#grid .verdict[data-model='fake-hang'][data-verdict='pending']").count() == 2
    page.click("#stop button, button#stop")
    page.wait_for_function(ALL_FINAL, timeout=15_000)
    found = verdicts(page)
    assert {v["verdict"] for v in found if v["model"] == "fake-hang"} == {"error"}
    assert all(v["verdict"] != "error" for v in found if v["model"] == "fake-answer-z")
    assert "Stopped." in page.locator("#grid").inner_text()
    assert "stopped" in page.locator("#progress").inner_text()
    deadline = time.monotonic() + 5
    while fake_server.in_flight and time.monotonic() < deadline:
        time.sleep(0.1)
    assert fake_server.in_flight == 0  # the hanging requests were cancelled
