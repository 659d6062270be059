"""The page as a daily tool (issue 47), in headless Debian Chromium against the fake
OpenAI server: one app for the module.

- a reload keeps the set-up (an added endpoint, the judge, a prompt set, a setting)
  and says so; the share link carries the judge and names what it leaves out; a
  judge that fails says so in the progress line;
- a model LiteLLM cannot route is refused before the run, with no cells;
- six models fit a 1,366-pixel screen with their whole names, the column headers
  and the prompt column stay in view while the grid scrolls, any answer opens
  whole in a dialog, and filters find refusals, disagreements, unsure verdicts
  and errors;
- the skip link is the first Tab stop and no Tab stop falls on <body>;
- on a phone the action bar is one short row while a run streams, and none after.
"""

from __future__ import annotations

import pytest
from support import (
    ALL_FINAL,
    RUN_ENDED,
    browser_page,
    choose,
    chromium,
    errors_of,
    fake_models_yaml,
    filled_value,
    open_share_link,
    type_into,
)
from support import serve_playground_demo as serve

pytestmark = pytest.mark.browser

MODELS = {
    "fake-answer": "answer",
    "fake-aware": "toxic-aware",
    "fake-long": "long",
    "fake-refuse-with-a-rather-long-model-name-v2": "answer:long-name",
    "fake-think": "long-think",
    "fake-gone": "e404",
    "fake-bad-judge": "e401",
    "fake-hostile": "hostile",
}
SIX = [m for m in MODELS if m not in ("fake-bad-judge", "fake-hostile")]
LAPTOP = {"width": 1366, "height": 768}
PROMPTS = "hard-1k,toxic"


@pytest.fixture(scope="module")
def app(fake_server, tmp_path_factory):
    config = fake_models_yaml(tmp_path_factory.mktemp("ui-daily") / "models.yaml", fake_server.base_url, MODELS)
    with serve(config) as (url, _demo):
        yield url


@pytest.fixture(scope="module")
def browser(app):
    with chromium() as b:
        yield b


def text_of(page, selector: str) -> str:
    """An input's value, or an element's text (Gradio renders some boxes either way)."""
    return page.eval_on_selector(selector, "e => (e.value !== undefined ? e.value : e.innerText) || ''")


def test_a_reload_keeps_the_set_up_and_the_link_says_what_it_leaves_out(browser, app, fake_server, tmp_path):
    """A reload showed the results but SmolLM2 alone, the offline classifier and no prompt
    set, while saying "Restored"; the link dropped the judge and the prompt set unsaid; a
    judge that could not be reached left the progress line at "finished"."""
    own = tmp_path / "mine.csv"
    own.write_text("prompt\nHow do I stop a stuck process?\nHow do I kill a zombie process?\n", encoding="utf-8")
    with browser_page(browser, viewport=LAPTOP) as page:
        open_share_link(page, app, "?models=fake-answer&split=hard-1k&categories=privacy&n=1&seed=3")
        page.click("text=Add a model")
        page.fill("#custom_base textarea, #custom_base input", fake_server.base_url)
        page.fill("#custom_model textarea, #custom_model input", "answer")
        page.fill("#custom_key input", "sk-visitor")
        page.click("text=Add endpoint")
        page.wait_for_function("() => document.querySelectorAll('#models .token').length === 2", timeout=30_000)
        endpoint = page.locator("#models .token").nth(1).inner_text().strip()
        choose(page, "judge", "fake-bad-judge")
        page.click("#prompt_set_panel button, #prompt_set_panel .label-wrap")
        type_into(page, "prompt_set", str(own))
        page.click("#gen_settings button.label-wrap, #gen_settings > button")
        type_into(page, "temperature", "0.3")
        page.wait_for_function(
            "() => (document.querySelector('#share textarea')?.value || '').includes('temperature=0.3')"
        )
        share = page.locator("#share").inner_text()
        link = text_of(page, "#share textarea")
        assert "judge=fake-bad-judge" in link and str(own) not in link and "sk-visitor" not in link
        assert "(custom endpoint)" in share and f"{own} (prompt set on this machine)" in share
        size = page.locator("#run_size").inner_text()
        assert "Next run: 2 cells (1 prompt × 2 models), plus the prompt set's 1 per category" in size

        page.click("#run")
        page.wait_for_function(ALL_FINAL, timeout=90_000)
        cells = page.locator("#grid .verdict").count()
        assert cells == 2 * 2  # one hard-1k prompt and one of the set's, for both models
        progress = page.locator("#progress .prog-text").inner_text()
        assert f"judge failed on {cells} of {cells}; offline verdicts used" in progress

        page.reload()
        page.wait_for_function(ALL_FINAL, timeout=30_000)
        page.wait_for_function(
            "() => (document.querySelector('#progress')?.innerText || '').includes('set up as you left it')",
            timeout=30_000,
        )
        tokens = page.eval_on_selector_all("#models .token", "els => els.map(e => e.innerText.trim())")
        assert tokens == ["fake-answer", endpoint]
        assert "fake-bad-judge" in text_of(page, "#judge input")
        page.click("#prompt_set_panel button, #prompt_set_panel .label-wrap")  # closed again by the reload
        page.click("#gen_settings button.label-wrap, #gen_settings > button")
        assert filled_value(page, "prompt_set") == str(own)
        assert filled_value(page, "temperature") == "0.3"
        assert "Not kept" in page.locator("#progress").inner_text()

        sent = fake_server.request_count()
        page.click("#run")  # the same set-up runs again: the same cells, replayed from the cache
        page.wait_for_function(
            f"n => document.querySelector('#progress .prog-text')?.innerText.startsWith('Run 2') && ({ALL_FINAL})(n)",
            arg=cells,
            timeout=90_000,
        )
        assert fake_server.request_count() - sent == cells  # the judge is asked again; the answers are cached
        assert errors_of(page) == []


def test_an_unknown_model_is_refused_before_the_run_and_makes_no_cells(browser, app, fake_server):
    with browser_page(browser, viewport=LAPTOP) as page:
        open_share_link(page, app, "?models=fake-answer&split=hard-1k&categories=privacy&n=1&seed=1")
        page.fill("#models input", "slow20")
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.querySelectorAll('#models .token').length === 2")
        page.wait_for_function("() => document.querySelector('#run_size')?.innerText.includes('2 cells')")
        sent = fake_server.request_count()
        page.click("#run")
        page.wait_for_selector("#progress [data-state='refused']", timeout=60_000)
        said = page.locator("#progress").inner_text()
        assert "Unknown model 'slow20'" in said and "provider/model" in said and "LLM Provider" not in said
        assert page.locator("#grid .verdict").count() == 0 and fake_server.request_count() == sent


SHOWN_ROWS = "() => [...document.querySelectorAll('#grid tbody tr')].filter(r => r.offsetParent !== null).length"


def test_six_models_fit_a_laptop_and_the_grid_reads_at_length(browser, app, fake_server):
    from axe_playwright_python.sync_playwright import Axe

    from orbench_play import data

    picked = data.sample_splits(PROMPTS.split(","), categories=["privacy", "illegal"], per_category=1, seed=5)
    refused = picked.prompts[0]
    fake_server.refuse_words = {refused.text}  # the aware model refuses the first prompt only
    fake_server.words, fake_server.long_seconds = 400, 0.5
    try:
        with browser_page(browser, viewport=LAPTOP) as page:
            query = f"?models={','.join(SIX)}&split={PROMPTS}&categories=privacy,illegal&n=1&seed=5"
            open_share_link(page, app, query)
            page.click("#run")
            page.wait_for_function(ALL_FINAL, timeout=120_000)
            rows = len(picked.prompts)
            # Every column shows, with its whole name; nothing is cut off at the right.
            fit = page.evaluate(
                """() => { const w = document.querySelector('#grid .grid-wrap');
                const names = [...document.querySelectorAll('#grid th.model-col')];
                return {over: w.scrollWidth - w.clientWidth, names: names.map(t => t.innerText.replace(/\\s+/g, '')),
                        cut: names.filter(t => t.scrollWidth > t.clientWidth + 1).length}; }"""
            )
            assert fit["over"] <= 1 and fit["cut"] == 0, fit
            assert fit["names"] == SIX
            # The column headers stay at the top of the grid's box while it scrolls.
            tops = page.evaluate(
                """() => { const w = document.querySelector('#grid .grid-wrap'); w.scrollTop = w.scrollHeight;
                return [document.querySelector('#grid th.model-col').getBoundingClientRect().top,
                        w.getBoundingClientRect().top, w.scrollTop]; }"""
            )
            assert tops[2] > 200 and abs(tops[0] - tops[1]) <= 2, tops
            page.evaluate("() => { document.querySelector('#grid .grid-wrap').scrollTop = 0; }")

            # Any answer opens whole, and the focus comes back to where it was.
            cell = page.locator("#grid td.cell:has(.verdict[data-model='fake-long'])").first
            opener = cell.locator("button.open")
            opener.click()
            dialog = page.locator("dialog.cell-dialog[open]")
            dialog.wait_for()
            whole = cell.locator(".resp").evaluate("r => r.textContent")
            assert dialog.locator(".cd-text").evaluate("t => t.textContent") == whole and len(whole) > 2000
            assert "fake-long" in dialog.locator("h2").inner_text()
            assert dialog.locator(".cd-prompt").inner_text().strip()
            bad = [v for v in Axe().run(page).response["violations"] if v["impact"] in ("serious", "critical")]
            assert bad == [], [(v["id"], [n["target"] for n in v["nodes"][:3]]) for v in bad]
            page.keyboard.press("Escape")
            page.wait_for_function("() => !document.querySelector('dialog.cell-dialog[open]')")
            assert opener.evaluate("b => b === document.activeElement")

            # Filters: what matters in many cells.
            def show(key: str) -> int:
                page.click(f"#grid_filter button.gf[data-filter='{key}']")
                page.wait_for_function(
                    "k => document.querySelector(`#grid_filter button[data-filter='${k}']`)"
                    ".getAttribute('aria-pressed') === 'true'",
                    arg=key,
                )
                return page.evaluate(SHOWN_ROWS)

            assert show("refusals") == 1 and show("disagree") == 1
            assert page.locator(f"#grid tbody tr[data-row='{refused.row_id}']").is_visible()
            assert "showing 1 of" in page.locator("#grid_filter").inner_text()
            assert show("unsure") == 0 and "No prompt matches" in page.locator("#grid").inner_text()
            assert show("errors") == rows  # the model that is gone failed on every prompt
            assert show("all") == rows
            counts = page.eval_on_selector_all("#grid_filter .gf-n", "els => els.map(e => e.innerText.trim())")
            assert counts == [str(rows), "1", "1", "0", str(rows)]

            # On a narrower screen the grid scrolls sideways and the prompts stay at its left.
            page.set_viewport_size({"width": 1000, "height": 768})
            lefts = page.evaluate(
                """() => { const w = document.querySelector('#grid .grid-wrap'); w.scrollLeft = 400;
                return [w.scrollLeft, document.querySelector('#grid tbody th.prompt').getBoundingClientRect().left,
                        w.getBoundingClientRect().left]; }"""
            )
            assert lefts[0] > 100 and abs(lefts[1] - lefts[2]) <= 2, lefts
            assert errors_of(page) == []
    finally:
        fake_server.reset()


DESCRIBE = "() => { const a = document.activeElement; return a === document.body ? 'BODY' : a.tagName; }"


def test_the_skip_link_comes_first_and_no_tab_stop_falls_on_the_page(browser, app):
    """28 Tabs to the first badge, and one Tab stop landed on <body> (an open dropdown's
    scrolling option list took the focus and closed under it)."""
    with browser_page(browser, viewport=LAPTOP) as page:
        open_share_link(page, app, f"?models={','.join(SIX)}&split=hard-1k&categories=privacy&n=1&seed=2")
        page.click("#run")
        page.wait_for_function(ALL_FINAL, timeout=120_000)
        page.reload()
        page.wait_for_function(ALL_FINAL, timeout=60_000)
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.classList.contains('skip-link')")
        assert page.locator(".skip-link").is_visible()
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.activeElement.classList.contains('grid-wrap')")
        presses = 0
        while not page.evaluate("() => document.activeElement.classList.contains('verdict')"):
            page.keyboard.press("Tab")
            presses += 1
            assert presses <= 6
        # From the top, through every control of the set-up to the grid: never on <body>.
        page.reload()
        page.wait_for_function(ALL_FINAL, timeout=60_000)
        stops = []
        while len(stops) < 60 and not page.evaluate("() => !!document.activeElement.closest('#grid')"):
            page.keyboard.press("Tab")
            stops.append(page.evaluate(DESCRIBE))
        assert "BODY" not in stops and page.evaluate("() => !!document.activeElement.closest('#grid')"), stops
        assert errors_of(page) == []


def test_on_a_phone_the_action_bar_is_one_short_row_while_a_run_streams(browser, app, fake_server):
    fake_server.long_seconds = 6.0
    try:
        with browser_page(browser, viewport={"width": 390, "height": 844}) as page:
            open_share_link(page, app, "?models=fake-long&split=hard-1k&categories=privacy&n=1&seed=4")
            page.click("#run")
            page.wait_for_selector("#progress .progress-box[data-state='running']", timeout=30_000)
            page.mouse.wheel(0, 900)
            page.wait_for_function("() => window.scrollY > 400")
            bar = page.locator("#action_bar").bounding_box()
            assert bar["y"] >= -1 and bar["y"] < 2 and bar["height"] <= 0.1 * 844, bar  # in view, one short row
            page.wait_for_function(RUN_ENDED, timeout=60_000)
            page.mouse.wheel(0, 300)
            page.wait_for_function("() => document.querySelector('#action_bar').getBoundingClientRect().bottom < 0")
            assert errors_of(page) == []
    finally:
        fake_server.reset()


def test_the_dialog_shows_a_hostile_answer_as_text(browser, app):
    """The whole-answer dialog copies text, never markup (`textContent` only)."""
    with browser_page(browser, viewport=LAPTOP) as page:
        open_share_link(page, app, "?models=fake-hostile&split=hard-1k&categories=privacy&n=1&seed=1")
        page.click("#run")
        page.wait_for_function(ALL_FINAL, timeout=60_000)
        page.locator("#grid button.open").first.click()
        dialog = page.locator("dialog.cell-dialog[open]")
        dialog.wait_for()
        assert "<script>window.__pwned=1</script>" in dialog.locator(".cd-text").inner_text()
        assert dialog.locator("script, img, iframe, a, svg").count() == 0
        assert dialog.locator(".cd-text").evaluate("t => t.textContent") == page.locator("#grid .resp").evaluate(
            "r => r.textContent"
        )
        assert page.evaluate("() => window.__pwned") is None
        assert errors_of(page) == []
