"""The live grid at real answer length, in headless Chromium against the app
and the fake server's `long` model (300 words, one word per chunk): every
column streams at once, every answer arrives whole, the page gets the grid's
HTML once per run and then only what changed, Stop keeps partial answers,
and on a phone-width page the grid scrolls instead of crushing its columns.
"""

from __future__ import annotations

import json

import pytest
from fake_openai import long_answer_text
from support import ALL_FINAL, chromium, errors_of, fake_models_yaml, open_share_link, serve_playground, watch_errors

from orbench_play.types import VERDICTS
from orbench_play.ui.views import safe_html

pytestmark = pytest.mark.browser

LONG = [f"fake-long-{i}" for i in range(1, 5)]
MODELS = {**{name: f"long:{i}" for i, name in enumerate(LONG, start=1)}, "fake-answer": "answer"}

WATCH = r"""
(() => {
  const W = window.__live = {grew: {}, firstFinalAt: null, messages: []};
  const look = () => {
    const now = Date.now();
    for (const box of document.querySelectorAll('#grid [data-i]')) {
      const v = box.querySelector('.verdict');
      if (box.querySelector('.resp')?.firstChild?.data && !(box.dataset.i in W.grew)) W.grew[box.dataset.i] = [v.dataset.model, now];
      if (v.dataset.verdict !== 'pending' && W.firstFinalAt === null) W.firstFinalAt = now;
    }
  };
  const observe = () => new MutationObserver(look).observe(document.documentElement,
    {subtree: true, childList: true, characterData: true, attributes: true});
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', observe); else observe();
  const origFetch = window.fetch;  // a copy of every server-sent message the page gets
  window.fetch = async function (...args) {
    const resp = await origFetch.apply(this, args);
    if ((resp.headers.get('content-type') || '').includes('text/event-stream') && resp.body) {
      const [a, b] = resp.body.tee();
      (async () => {
        const reader = b.getReader(); const dec = new TextDecoder(); let buf = '';
        for (;;) {
          const {done, value} = await reader.read(); if (done) break;
          buf += dec.decode(value, {stream: true});
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) { W.messages.push(buf.slice(0, i)); buf = buf.slice(i + 2); }
        }
      })();
      const out = new Response(a, {status: resp.status, statusText: resp.statusText, headers: resp.headers});
      Object.defineProperty(out, 'url', {value: resp.url});
      return out;
    }
    return resp;
  };
})();
"""
CELLS_JS = """() => [...document.querySelectorAll('#grid [data-i]')].map(box => {
  const v = box.querySelector('.verdict');
  return {text: box.querySelector('.resp').firstChild?.data || '', state: box.dataset.state,
          prompt: box.closest('tr').querySelector('.ptext').textContent, ...v.dataset};
})"""


@pytest.fixture(scope="module")
def app_url(fake_server, tmp_path_factory):
    config = fake_models_yaml(tmp_path_factory.mktemp("ui-live") / "models.yaml", fake_server.base_url, MODELS)
    with serve_playground(config) as url:
        yield url


@pytest.fixture(scope="module")
def browser(app_url):
    with chromium() as b:
        yield b


def open_page(browser, app_url: str, query: str, width: int = 1500):
    page = browser.new_context(viewport={"width": width, "height": 1000}).new_page()
    watch_errors(page)
    page.add_init_script(WATCH)
    open_share_link(page, app_url, query)
    return page


def run_outputs(messages: list[str]) -> list[list]:
    """The output lists of the page's run events (9 outputs: progress, grid, grid_feed, ...)."""
    out = []
    for message in messages:
        for line in message.split("\n"):
            if not line.startswith("data:") or not line[5:].strip().startswith("{"):
                continue  # not a message (e.g. the stream's keep-alive)
            data = (json.loads(line[5:]).get("output") or {}).get("data")
            if isinstance(data, list) and len(data) == 9:
                out.append(data)
    return out


def strings(value) -> list[str]:
    """The strings an output carries: a value, or the values in a list of diff edits."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for edit in value if isinstance(edit, list) and len(edit) == 3 for s in strings(edit[2])]
    return []


def expect(cells: list[dict]) -> None:
    """Every cell final with the contract attributes and exactly its answer."""
    for c in cells:
        assert c["verdict"] in VERDICTS and c["source"] and c["repeat"] == "0" and c["variant"] == c["model"]
        assert c["text"] == safe_html.neutralise(long_answer_text(c["prompt"])), c["row"]


def test_every_column_streams_at_once_and_every_answer_arrives_whole_once(browser, app_url, fake_server):
    fake_server.long_seconds = 3.0
    try:
        page = open_page(browser, app_url, f"?models={','.join(LONG)}&split=hard-1k&categories=privacy&n=5&seed=3")
        page.click("#run button, button#run")
        page.wait_for_function(ALL_FINAL, arg=20, timeout=90_000)
        # The run's closing messages: the progress line's last state comes with them.
        page.wait_for_function("() => (document.querySelector('#progress')?.innerText || '').includes('20/20')")
        cells = page.evaluate(CELLS_JS)
        live = page.evaluate("window.__live")
        expect(cells)
        assert {c["model"] for c in cells} == set(LONG) and len({c["row"] for c in cells}) == 5
        # Before any verdict was final, text was growing in several cells of every column.
        early = [model for model, at in live["grew"].values() if at < live["firstFinalAt"]]
        assert all(early.count(m) >= 2 for m in LONG), early
        # The grid's HTML came once (the skeleton, no answer text in it); then only changes.
        outputs = run_outputs(live["messages"])
        grids = [s for data in outputs for s in strings(data[1]) if "<table" in s]
        assert len(grids) == 1 and "Sure. Here is a careful answer" not in grids[0]
        feed = sum(len(s) for data in outputs for s in strings(data[2]))
        text = sum(len(c["text"]) for c in cells)
        assert text < feed < 1.5 * text, (feed, text)
        assert "20/20" in page.inner_text("#progress")

        # A second run in the same tab: the grid is the new run's, whole, nothing left over.
        # (Its cells can be final a frame before the first run ends; Run starts nothing until it has.)
        page.wait_for_function(
            "() => document.querySelector('#progress .prog-text')?.dataset.state === 'finished'", timeout=60_000
        )
        page.fill("#seed input", "11")
        page.locator("#seed input").press("Enter")
        page.fill("#n input[type=number]", "2")
        page.locator("#n input[type=number]").press("Enter")
        page.wait_for_function("() => (document.querySelector('#share textarea')?.value || '').endsWith('seed=11')")
        page.click("#run button, button#run")
        page.wait_for_function("() => document.querySelectorAll('#grid [data-i]').length === 8", timeout=20_000)
        page.wait_for_function(ALL_FINAL, arg=8, timeout=60_000)
        second = page.evaluate(CELLS_JS)
        expect(second)
        assert not {c["row"] for c in second} & {c["row"] for c in cells}
        # (Gradio aborts the share-link requests the typing above superseded: not our script's errors.)
        assert [e for e in errors_of(page) if "signal is aborted" not in e] == []
    finally:
        fake_server.long_seconds = 2.0


def test_stop_mid_stream_keeps_each_partial_answer_and_says_how_many_stopped(browser, app_url, fake_server):
    fake_server.long_seconds = 20.0
    try:
        page = open_page(
            browser, app_url, "?models=fake-long-1,fake-long-2&split=hard-1k&categories=illegal&n=2&seed=5"
        )
        page.click("#run button, button#run")
        page.wait_for_function("() => Object.keys(window.__live.grew).length === 4", timeout=30_000)
        page.click("#stop button, button#stop")
        page.wait_for_function(ALL_FINAL, arg=4, timeout=15_000)
        page.wait_for_function("() => (document.querySelector('#progress')?.innerText || '').includes('4 stopped')")
        cells = page.evaluate(CELLS_JS)
        for c in cells:
            assert c["verdict"] == "error" and c["state"] == "stopped"
            whole = safe_html.neutralise(long_answer_text(c["prompt"]))
            assert c["text"] and whole.startswith(c["text"]) and len(c["text"]) < len(whole)
        assert "Stopped." in page.inner_text("#grid")
        progress = page.inner_text("#progress")
        assert "0 of 4 cells finished" in progress and "4 stopped" in progress
        assert fake_server.wait_idle() == 0
    finally:
        fake_server.long_seconds = 2.0


def test_on_a_phone_the_grid_scrolls_sideways_instead_of_crushing_its_columns(browser, app_url):
    page = open_page(
        browser,
        app_url,
        "?models=fake-answer,fake-long-1,fake-long-2&split=hard-1k&categories=hate&n=1&seed=1",
        width=390,
    )
    page.click("#run button, button#run")
    page.wait_for_function(ALL_FINAL, arg=3, timeout=60_000)
    widths = page.eval_on_selector_all("#grid th.model-col", "els => els.map(e => e.getBoundingClientRect().width)")
    assert len(widths) == 3 and min(widths) >= 140, widths
    wrap = page.evaluate(
        "() => { const w = document.querySelector('#grid .grid-wrap'); return [w.scrollWidth, w.clientWidth]; }"
    )
    assert wrap[0] > wrap[1]  # the grid scrolls inside its box
    assert page.evaluate("document.documentElement.scrollWidth") <= 390 + 1  # the page itself does not
