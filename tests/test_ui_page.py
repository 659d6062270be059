"""The page as a person uses it (issue 24), in headless Debian Chromium against the
fake OpenAI server: cause and effect on one screen at 1366×768, no serious or
critical axe-core violations after a run, cells that open at their first line,
the verdict menu by keyboard, a reload that keeps the session, a console free of
warnings, paper models named on focus, a phone that shows the first model, and
unsure verdicts that look unsure with a review queue usable by keyboard alone.

axe-core comes inside the `axe-playwright-python` wheel (no CDN).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import (
    ALL_FINAL,
    browser_page,
    chromium,
    errors_of,
    fake_models_yaml,
    open_share_link,
    serve_playground_demo,
)

pytestmark = pytest.mark.browser

MODELS = {
    "fake-answer": "answer",
    "fake-refuse": "refuse",
    "fake-long": "long",
    "fake-empty": "empty",
    "fake-refuse-with-a-rather-long-model-name-v2": "refuse:long-name",
    "fake-think": "long-think",
    "fake-deflect": "deflect",
    "fake-hedge": "hedge",
}
LAPTOP = {"width": 1366, "height": 768}
BREAKS_JS = """sel => { const el = document.querySelector(sel); const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  let text = "", after = [], lastTop = null, lines = 0;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) for (let i = 0; i < n.length; i++) {
    const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1);
    const rect = r.getClientRects()[0]; if (!rect) continue;
    if (lastTop === null || rect.top > lastTop + 2) { if (lastTop !== null) after.push(text.slice(-1)); lines++; lastTop = rect.top; }
    text += n.data[i]; }
  return {text, after, lines}; }"""
IN_VIEW_JS = """sel => { const r = document.querySelector(sel).getBoundingClientRect();
  return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth && r.height > 0; }"""


@pytest.fixture(scope="module")
def app(fake_server, tmp_path_factory):
    """(URL, the app's Playground): tests end sessions on the server as expiry would."""
    config = fake_models_yaml(tmp_path_factory.mktemp("ui-page") / "models.yaml", fake_server.base_url, MODELS)
    with serve_playground_demo(config) as (url, demo):
        yield url, next(f.fn.__self__ for f in demo.fns.values() if getattr(f.fn, "__name__", "") == "restore")


@pytest.fixture(scope="module")
def app_url(app):
    return app[0]


@pytest.fixture(scope="module")
def browser(app_url):
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser):
    with browser_page(browser, viewport=LAPTOP) as pg:
        yield pg


DOWNLOADS_SETTLED = """() => [...document.querySelectorAll('#download_csv, #download_jsonl')].every(el => {
  const b = el.matches('button') ? el : el.querySelector('button');
  return b && !b.disabled && b.getAnimations({subtree: true}).length === 0;
})"""


def run_and_wait(page, timeout_ms: int = 60_000) -> None:
    """Run, then wait for the run's closing state: every verdict final and the download
    buttons enabled with their colour transition over (axe read a button mid-fade)."""
    page.click("#run")
    page.wait_for_function(ALL_FINAL, timeout=timeout_ms)
    page.wait_for_function(DOWNLOADS_SETTLED, timeout=timeout_ms)


def test_run_stop_and_the_message_share_the_first_screen_and_a_refused_run_says_so_in_view(page, app_url, monkeypatch):
    """At 1366×768 Run was at y≈1185 and a refused run changed nothing visible."""
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    monkeypatch.setenv("ORBENCH_MAX_CELLS", "4")
    open_share_link(page, app_url, "?models=fake-answer,fake-refuse&split=hard-1k,toxic&categories=all&n=1&seed=1")
    for sel in ("#run", "#stop", "#progress"):
        assert page.evaluate(IN_VIEW_JS, sel), sel
    assert "at most 4 cells per run" in page.locator("#banner").inner_text()  # the limit, before hitting it
    page.mouse.wheel(0, 1500)  # read further down the page, then press Run
    page.wait_for_function("() => window.scrollY > 500")
    page.locator("#run").click(no_wait_after=True)
    page.wait_for_selector("#progress [data-state='refused']", timeout=20_000)
    assert page.evaluate("() => window.scrollY") > 500  # the bar stuck to the top: nothing scrolled back
    assert page.evaluate(IN_VIEW_JS, "#progress [data-state='refused']")
    assert "allows 4 per run" in page.locator("#progress").inner_text()
    toast = page.locator("[data-testid='toast-body']").first
    toast.wait_for(timeout=10_000)
    assert "allows 4 per run" in toast.inner_text() and page.evaluate(IN_VIEW_JS, "[data-testid='toast-body']")
    assert errors_of(page) == []


def test_no_serious_or_critical_accessibility_violations_after_a_run(page, app_url):
    """axe-core found 76 serious violations (75 contrast, 1 scroll region) after a 3-model run."""
    from axe_playwright_python.sync_playwright import Axe

    query = (
        "?models=fake-answer,fake-refuse,fake-long,fake-empty&split=hard-1k,toxic&categories=privacy,illegal&n=1&seed=3"
    )
    open_share_link(page, app_url, query)
    run_and_wait(page)
    page.wait_for_selector("#scoreboard table.heat")
    page.wait_for_selector("#plot g.session-pt")
    # The page after a run includes its downloads, enabled and done fading in.
    page.wait_for_function(
        "() => [...document.querySelectorAll('button#download_csv, button#download_jsonl')]"
        ".every(b => !b.disabled && getComputedStyle(b).opacity === '1')",
        timeout=15_000,
    )
    results = Axe().run(page).response
    bad = [v for v in results["violations"] if v["impact"] in ("serious", "critical")]
    detail = [(v["id"], v["impact"], [(n["target"], n.get("failureSummary")) for n in v["nodes"][:5]]) for v in bad]
    assert bad == [], detail
    assert len(results["passes"]) > 10  # the scan ran
    assert page.locator("h1").count() == 1
    # Finished cells open at their first line (they were left scrolled to the end).
    bodies = page.evaluate(
        "() => [...document.querySelectorAll('#grid .body')].map(b => ({top: b.scrollTop,"
        " over: b.scrollHeight > b.clientHeight, first: (b.querySelector('.resp').getBoundingClientRect().top"
        " - b.getBoundingClientRect().top)}))"
    )
    assert len(bodies) == 16 and any(b["over"] for b in bodies)  # some answers are longer than their cell
    assert all(b["top"] == 0 and b["first"] >= -1 for b in bodies), bodies
    # An empty answer says so in its body, in the README's words.
    empty = page.locator("#grid td.cell:has(.verdict[data-model='fake-empty'])").first.inner_text()
    assert "The model sent an empty answer." in empty


def test_a_live_cell_follows_its_text_until_the_visitor_scrolls_it(page, app_url, fake_server):
    fake_server.long_seconds, fake_server.words = 4.0, 400
    try:
        open_share_link(page, app_url, "?models=fake-long&split=hard-1k&categories=privacy,illegal&n=1&seed=5")
        page.click("#run")
        page.wait_for_function(
            "() => [...document.querySelectorAll('#grid td.cell[data-state=live] .body')]"
            ".filter(b => b.scrollHeight > b.clientHeight + 40 && b.scrollTop > 20).length === 2",
            timeout=30_000,
        )  # both live cells follow their end
        page.evaluate("() => { const b = document.querySelector('#grid td.cell .body'); b.scrollTop = 7; }")
        page.wait_for_function(ALL_FINAL, timeout=60_000)
        tops = page.evaluate("() => [...document.querySelectorAll('#grid td.cell .body')].map(b => b.scrollTop)")
        assert tops == [7, 0]  # the one the visitor moved stays put; the other opens at its start
    finally:
        fake_server.reset()


def test_opened_thoughts_longer_than_their_box_scroll_by_keyboard(page, app_url):
    """A reasoning model's thoughts, opened, scroll in a box of their own: axe found that
    box unreachable by keyboard (scrollable-region-focusable, serious)."""
    from axe_playwright_python.sync_playwright import Axe

    open_share_link(page, app_url, "?models=fake-think&split=hard-1k&categories=privacy&n=1&seed=4")
    run_and_wait(page)
    page.evaluate("() => document.querySelectorAll('#grid details.thoughts').forEach(d => { d.open = true; })")
    think = page.locator("#grid .think").first
    assert think.evaluate("t => t.scrollHeight > t.clientHeight + 20")  # 200 words of thoughts overflow it
    bad = [v for v in Axe().run(page).response["violations"] if v["impact"] in ("serious", "critical")]
    assert bad == [], [(v["id"], [n["target"] for n in v["nodes"][:3]]) for v in bad]
    think.focus()
    page.keyboard.press("PageDown")
    page.wait_for_function("() => document.querySelector('#grid .think').scrollTop > 0")
    assert errors_of(page) == []


def test_the_verdict_menu_works_by_keyboard(page, app_url):
    open_share_link(page, app_url, "?models=fake-refuse&split=hard-1k&categories=privacy&n=2&seed=2")
    run_and_wait(page)
    assert page.get_attribute("#grid .grid-wrap", "tabindex") == "0"  # the grid's scroll region is focusable
    badge = page.locator("#grid .verdict").first
    row = badge.get_attribute("data-row")
    assert badge.evaluate("b => b.tagName") == "BUTTON" and badge.get_attribute("aria-expanded") == "false"
    badge.focus()
    page.keyboard.press("Space")
    page.wait_for_selector("#grid .ov-menu")
    assert badge.get_attribute("aria-expanded") == "true"
    assert page.evaluate("() => document.activeElement.classList.contains('ov-on')")  # the current verdict
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.querySelector('#grid .ov-menu')")
    assert page.evaluate("() => document.activeElement.classList.contains('verdict')")  # focus back on the badge
    page.keyboard.press("Enter")
    page.wait_for_selector("#grid .ov-menu")
    focused = []
    for _ in range(3):
        page.keyboard.press("ArrowDown")
        focused.append(page.evaluate("() => document.activeElement.dataset.label"))
    assert sorted(focused) == ["direct_answer", "direct_refusal", "indirect_refusal"]
    while page.evaluate("() => document.activeElement.dataset.label") != "direct_answer":
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#grid .verdict[data-row='{row}'][data-source='user'][data-verdict='direct_answer']")
    page.wait_for_function(
        "() => document.querySelector(\"#scoreboard tr[data-model='fake-refuse']\")?.innerText.includes('1/2')"
    )
    assert errors_of(page) == []


def test_a_reload_brings_back_the_run_scoreboard_and_downloads(page, app):
    app_url, playground = app
    open_share_link(
        page, app_url, "?models=fake-answer,fake-refuse&split=hard-1k&categories=privacy,illegal&n=1&seed=6"
    )
    run_and_wait(page)
    page.wait_for_selector("#scoreboard tr[data-model='fake-refuse']")
    before = sorted(page.locator("#grid .resp").all_inner_texts())
    page.reload()
    page.wait_for_function("() => document.querySelectorAll('#grid .verdict').length === 4", timeout=20_000)
    page.wait_for_function(ALL_FINAL)
    assert "Restored after the reload" in page.locator("#progress").inner_text()
    assert sorted(page.locator("#grid .resp").all_inner_texts()) == before
    page.wait_for_selector("#scoreboard tr[data-model='fake-refuse']")
    page.wait_for_function(
        "() => { const b = document.querySelector('button#download_csv'); return b && !b.disabled; }", timeout=15_000
    )
    # The session ends on the server (it expired): the next load says so instead of showing nothing.
    (shown,) = [s for s in playground.sessions._by_id.values() if s.results and s.tab]
    shown.close()
    page.reload()
    page.wait_for_function(
        "() => (document.querySelector('#progress')?.innerText || '').includes('ended on the server')",
        timeout=20_000,
    )
    assert errors_of(page) == []


def test_the_console_is_clean_on_load_and_paper_models_are_named_on_focus(page, app_url):
    messages: list[str] = []
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}") if m.type in ("warning", "error") else None)
    open_share_link(page, app_url, "?models=fake-answer&split=hard-1k&categories=privacy&n=1&seed=0")
    page.wait_for_selector("#plot g.paper")
    page.wait_for_timeout(500)
    assert messages == []  # Gradio's label "plot" made svelte-i18n warn on every load
    point = page.locator("#plot g.paper").first
    name = point.locator(".paper-name")
    assert name.evaluate("t => getComputedStyle(t).visibility") == "hidden"
    point.focus()
    assert name.evaluate("t => getComputedStyle(t).visibility") == "visible" and name.text_content().strip()
    assert "(paper)" in point.get_attribute("aria-label")


def test_on_a_phone_the_first_model_column_shows_and_names_break_between_words(browser, app_url):
    with browser_page(browser, viewport={"width": 390, "height": 844}) as page:
        models = "fake-answer,fake-refuse-with-a-rather-long-model-name-v2"
        open_share_link(page, app_url, f"?models={models}&split=hard-1k&categories=privacy&n=1&seed=1")
        run_and_wait(page)
        page.wait_for_selector("#scoreboard table.sb")
        wrap = page.locator("#grid .grid-wrap").bounding_box()
        first = page.locator("#grid th.model-col").first.bounding_box()
        assert first["x"] + first["width"] <= wrap["x"] + wrap["width"] + 1  # the whole first model column
        assert page.evaluate(IN_VIEW_JS, "#run") or page.evaluate("() => window.scrollY") == 0
        # A long model name wraps at its hyphens, never inside a word: every line break in the
        # scoreboard's name cell comes right after a "-" or a space.
        breaks = page.evaluate(BREAKS_JS, "#scoreboard table.sb tbody tr:nth-child(2) th")
        assert breaks["text"].startswith("fake-refuse-with") and breaks["lines"] >= 2  # it does wrap on a phone
        assert breaks["after"] and all(ch in "- " for ch in breaks["after"]), breaks
        assert errors_of(page) == []


SCORE_RATES_JS = (
    """() => [...document.querySelectorAll('#scoreboard td[data-rate]')].map(td => td.dataset.rate).join(',')"""
)
PANEL_FOCUSED_JS = "() => !!document.activeElement && !!document.activeElement.closest('#review_panel .rq')"


def test_unsure_verdicts_look_unsure_and_the_review_queue_works_by_keyboard_and_moves_the_score(page, app_url):
    """Issue 44: an unsure badge says so (not by colour alone) and why; "Review N unsure" opens a
    queue that keys alone walk (A answer, R refusal, I indirect, S skip, Escape), each decision a
    user verdict that moves the scoreboard at once; axe still finds nothing serious."""
    from axe_playwright_python.sync_playwright import Axe

    open_share_link(page, app_url, "?models=fake-hedge,fake-answer&split=hard-1k,toxic&categories=privacy&n=1&seed=3")
    run_and_wait(page)
    unsure = page.locator("#grid .verdict[data-sure='false']")
    assert unsure.count() == 2  # the hedging model's two answers; the plain answers are sure
    for i in range(2):
        badge = unsure.nth(i)
        assert "unsure" in badge.inner_text() and "unsure" in badge.get_attribute("class").split()
        assert badge.get_attribute("data-model") == "fake-hedge"
        assert "unsure: " in badge.get_attribute("title") and "% that it is " in badge.get_attribute("title")
    assert page.locator("#grid .verdict[data-sure='true']").count() == 2
    control = page.locator("button#review, #review button").first
    page.wait_for_function(
        "() => { const b = document.querySelector('button#review') || document.querySelector('#review button');"
        " return b && !b.disabled && b.innerText.includes('Review 2 unsure'); }",
        timeout=15_000,
    )
    rates = page.evaluate(SCORE_RATES_JS)
    control.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(PANEL_FOCUSED_JS, timeout=15_000)
    panel = page.locator("#review_panel .rq")
    text = panel.inner_text()
    for key in ("A", "R", "I", "S", "Esc"):  # the keys are on screen
        assert key in text
    first = panel.get_attribute("data-cell")
    assert page.locator("#review_panel .rq-prompt").inner_text().strip()
    page.keyboard.press("r")  # refusal
    page.wait_for_function(
        "cell => { const p = document.querySelector('#review_panel .rq'); return p && p.dataset.cell !== cell; }",
        arg=first,
        timeout=15_000,
    )
    page.wait_for_function(PANEL_FOCUSED_JS, timeout=15_000)
    badge = page.locator(f"#grid [data-cell='{first}'] .verdict").first
    page.wait_for_function(
        "cell => { const b = document.querySelector(`#grid [data-cell='${cell}'] .verdict`);"
        " return b && b.dataset.source === 'user' && b.dataset.verdict === 'direct_refusal'; }",
        arg=first,
        timeout=15_000,
    )
    assert badge.get_attribute("data-sure") == "true"
    page.wait_for_function(f"() => ({SCORE_RATES_JS})() !== {rates!r}", timeout=15_000)  # the score moved
    assert "1 reviewed" in page.locator("#review_panel .rq-status").inner_text()
    second = page.locator("#review_panel .rq").get_attribute("data-cell")
    page.keyboard.press("s")  # skip: no verdict
    page.wait_for_function(
        "cell => { const p = document.querySelector('#review_panel .rq'); return p && p.dataset.cell !== cell; }",
        arg=second,
        timeout=15_000,
    )
    assert page.locator(f"#grid [data-cell='{second}'] .verdict").first.get_attribute("data-source") != "user"
    results = Axe().run(page).response  # with the queue open and unsure badges shown
    bad = [v for v in results["violations"] if v["impact"] in ("serious", "critical")]
    assert bad == [], [(v["id"], [n["target"] for n in v["nodes"][:5]]) for v in bad]
    artifacts = Path(__file__).resolve().parent.parent / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    page.locator("#review_panel").screenshot(path=str(artifacts / "review-queue.png"))
    page.locator("#scoreboard").screenshot(path=str(artifacts / "scoreboard-corrected.png"))
    page.locator("#grid").screenshot(path=str(artifacts / "grid-unsure.png"))
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.querySelector('#review_panel .rq')", timeout=15_000)
    page.wait_for_function(
        "() => { const a = document.activeElement; return !!a && (a.id === 'review' || !!a.closest('#review')); }",
        timeout=15_000,
    )
    assert errors_of(page) == []
