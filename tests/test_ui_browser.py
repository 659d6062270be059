"""The playground in headless Debian Chromium (playwright), against the fake
OpenAI server. One app server and one browser for the whole module.

Screenshots of finished runs are saved under test-artifacts/ (gitignored).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support import ALL_FINAL, browser_page, chromium, errors_of, fake_models_yaml, open_share_link, serve_playground

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
MODELS = {
    "fake-answer": "answer",
    "fake-refuse-with-a-rather-long-model-name-v2": "refuse:long-name",
    "fake-refuse": "refuse",
    "fake-slow-a": "slow:a",
    "fake-slow-b": "slow:b",
    "fake-slow-c": "slow:c",
    "fake-hostile": "hostile",
    "fake-hang": "hang",
    "fake-answer-z": "answer:z",
}
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
    with browser_page(browser, viewport={"width": 1500, "height": 1100}) as pg:
        yield pg


def open_share(page, app_url: str, query: str) -> float:
    started = time.monotonic()
    open_share_link(page, app_url, query)
    return time.monotonic() - started


def verdicts(page) -> list[dict]:
    return page.eval_on_selector_all("#grid .verdict", VERDICTS_JS)


def test_share_link_run_streams_all_columns_and_ends_with_scoreboard_and_plot(page, app_url, fake_server):
    """Done means: 3 models × 10 prompts stream in all columns at once, then a scoreboard and plot."""
    fake_server.delay, fake_server.chunks = 2.0, 20
    query = "?models=fake-slow-a,fake-slow-b,fake-slow-c&split=hard-1k&categories=all&n=1&seed=4"
    load_s = open_share(page, app_url, query)
    assert page.locator("#seed input").input_value() == "4"
    chosen = page.locator("#split").inner_text()  # the multi-select shows one token per chosen split
    assert "OR-Bench-Hard-1K" in chosen and "OR-Bench-Toxic" not in chosen
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
    assert run_s < 30 and errors_of(page) == []
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
    page.wait_for_function("() => (document.querySelector('#progress')?.innerText || '').includes('4/4')")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#grid img, #grid script, #grid iframe, #grid svg, #grid a").count() == 0
    text = page.locator("#grid td.cell:has(.verdict[data-model='fake-hostile'])").first.inner_text()
    assert "<script>window.__pwned=1</script>" in text and "${7*7}" in text and "{{7*7}}" in text
    assert "\u202e" not in text and "U+202E" in text
    assert errors_of(page) == []


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
    assert fake_server.wait_idle() == 0  # the hanging requests were cancelled


OVERFLOW_JS = """sel => {
  const e = document.querySelector(sel); const r = e.getBoundingClientRect();
  return {scroll: e.scrollWidth, client: e.clientWidth, left: r.left, right: r.right};
}"""


def test_scoreboard_and_heat_map_fit_at_1400px_and_scroll_in_their_box_on_a_phone(browser, app_url):
    """The 10-category heat map ran 38 px past its column at 1400 px."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        models = "fake-answer,fake-refuse-with-a-rather-long-model-name-v2"
        open_share(page, app_url, f"?models={models}&split=hard-1k&categories=all&n=1&seed=5")
        page.click("#run button, button#run")
        page.wait_for_function(ALL_FINAL, timeout=30_000)
        page.wait_for_function("() => document.querySelectorAll('#scoreboard table.heat thead th').length === 12")
        board, wrap = page.evaluate(OVERFLOW_JS, "#scoreboard"), page.evaluate(OVERFLOW_JS, "#scoreboard .heat-wrap")
        table = page.evaluate(OVERFLOW_JS, "#scoreboard table.heat")
        assert board["scroll"] <= board["client"], board
        assert wrap["scroll"] <= wrap["client"], (wrap, table)  # fits without a scroll bar at 1400 px
        assert table["right"] <= board["right"] + 0.5 and board["right"] <= 1400
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400
        page.set_viewport_size({"width": 390, "height": 900})
        page.wait_for_function("() => document.querySelector('#scoreboard').getBoundingClientRect().right <= 390")
        board, wrap = page.evaluate(OVERFLOW_JS, "#scoreboard"), page.evaluate(OVERFLOW_JS, "#scoreboard .heat-wrap")
        assert board["scroll"] <= board["client"] and board["right"] <= 390, board
        assert wrap["right"] <= board["right"] + 0.5  # the table scrolls inside its own box
    finally:
        context.close()


def test_plot_labels_fit_with_real_font_metrics(page):
    """Label placement estimates text width; the browser measures it: every label
    inside the plot area, none overlapping, at the edges and with long names."""
    from orbench_play.scoring import score_results
    from orbench_play.types import CellResult
    from orbench_play.ui.views import plot_view
    from orbench_play.ui.views.style import CSS

    def rates(model: str, hard: int | None, toxic: int | None) -> list[CellResult]:
        out = []
        for split, k in (("hard-1k", hard), ("toxic", toxic)):
            if k is not None:
                out += [
                    CellResult(split=split, row_id=f"{split}:{i}", category="privacy", prompt="p", model=model,
                               verdict="direct_refusal" if i < k else "direct_answer")
                    for i in range(10)
                ]  # fmt: skip
        return out

    results = rates("top-right", 10, 10) + rates("bottom-right", 10, 0) + rates("top-left", 0, 10)
    results += rates("bottom-left", 0, 0) + rates("WWWWWWWWWWWWWWWWWWWWWWWWWWWWWW/mmmm", 10, 10)
    results += rates("twin", 10, 10) + rates("benign-only", 10, None) + rates("toxic-only", None, 10)
    svg = plot_view.render_plot(score_results(results), [("Paper", 50.0, 50.0)])
    page.set_content(
        f"<html><head><style>{CSS}</style></head><body><div id='plot' style='width:456px'>{svg}</div></body></html>"
    )
    boxes = page.evaluate(
        "() => [...document.querySelectorAll('#plot text.pt-label')].map(t => { const b = t.getBBox();"
        " return [t.textContent, b.x, b.y, b.x + b.width, b.y + b.height]; })"
    )
    assert len(boxes) == 8
    # The plot area, as drawn: the extent of the grid lines.
    ax0, ay0, ax1, ay1 = page.evaluate(
        "() => { const ls = [...document.querySelectorAll('#plot line.gridline')];"
        " const xs = ls.flatMap(l => [+l.getAttribute('x1'), +l.getAttribute('x2')]);"
        " const ys = ls.flatMap(l => [+l.getAttribute('y1'), +l.getAttribute('y2')]);"
        " return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)]; }"
    )
    for text, x0, y0, x1, y1 in boxes:
        assert ax0 <= x0 and x1 <= ax1 and ay0 <= y0 and y1 <= ay1, (text, x0, y0, x1, y1)
    for i, (a, *ba) in enumerate(boxes):
        for b, *bb in boxes[i + 1 :]:
            apart = ba[2] <= bb[0] or bb[2] <= ba[0] or ba[3] <= bb[1] or bb[3] <= ba[1]
            assert apart, (a, b)


def test_downloads_say_to_run_first_then_give_the_session(page, app_url):
    """Before a run the download buttons did nothing and said nothing."""
    open_share(page, app_url, "?models=fake-answer&split=hard-1k&categories=privacy&n=2&seed=3")
    csv_button = page.locator("button#download_csv, #download_csv button").first
    page.wait_for_function("() => document.querySelector('#download_csv') !== null")
    assert csv_button.is_disabled() and "after a run" in csv_button.inner_text()
    jsonl_button = page.locator("button#download_jsonl, #download_jsonl button").first
    assert jsonl_button.is_disabled() and "after a run" in jsonl_button.inner_text()
    page.click("#run button, button#run")
    page.wait_for_function(ALL_FINAL, timeout=30_000)
    page.wait_for_function(
        "() => { const b = document.querySelector('button#download_csv') || document.querySelector('#download_csv button');"
        " return b && !b.disabled && !b.innerText.includes('after a run'); }",
        timeout=15_000,
    )
    with page.expect_download() as download:
        csv_button.click()
    text = Path(download.value.path()).read_text(encoding="utf-8")
    assert download.value.suggested_filename == "orbench-session.csv"
    assert (
        text.startswith("split,row_id,category,prompt,model,response,verdict") and text.count("\nhard-1k,hard-1k:") == 2
    )
