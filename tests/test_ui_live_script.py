"""The page's live-grid script (`live_grid.js`) in Chromium, without Gradio:
batches from a real `LiveFeed` are delivered the way the browser may deliver
them (repeated, out of order, one lost), and the script must end with every
answer intact, ask for a resync when it cannot, and never turn text into markup.

The harness calls the script exactly as Gradio's `js_on_load` does: a
function of `element, trigger, props, server, upload, watch`.
"""

from __future__ import annotations

import json
from importlib import resources

import pytest
from fake_openai import HOSTILE_TEXT
from support import browser_page, chromium, errors_of

from orbench_play.types import CellEvent, CellResult, ModelSpec, Prompt
from orbench_play.ui.state.session import Session
from orbench_play.ui.views import safe_html

pytestmark = pytest.mark.browser

HARNESS = """
([src, skeleton]) => {
  document.body.innerHTML = '<div class="gradio-container"><div id="grid"><div class="prose"></div></div>'
    + '<div id="grid_feed"></div></div>';
  document.querySelector('#grid .prose').innerHTML = skeleton;   // what Gradio does with the grid's value
  const watchers = [];
  const props = {value: ''};
  window.__triggers = [];
  const trigger = (name, data) => window.__triggers.push([name, data]);
  const watch = (name, fn) => watchers.push(fn);
  new Function('element', 'trigger', 'props', 'server', 'upload', 'watch', src)(
    document.getElementById('grid_feed'), trigger, props, {}, null, watch);
  window.__send = (value) => { props.value = value; for (const fn of watchers) fn(); };
}
"""
START = 1_780_000_000_000  # a page clock in ms, for the tests that stop it
TEXTS_JS = "() => [...document.querySelectorAll('#grid [data-i]')].map(e => [+e.dataset.i, e.querySelector('.resp').firstChild?.data || ''])"


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser):
    with browser_page(browser) as pg:
        yield pg


def script() -> str:
    return resources.files("orbench_play.ui").joinpath("assets", "live_grid.js").read_text(encoding="utf-8")


class Run:
    """A 2 x 2 run whose answers arrive in pieces; `step()` returns a batch."""

    def __init__(self) -> None:
        self.sess = Session()
        self.prompts = [Prompt(f"hard-1k:{i}", "hard-1k", "privacy", f"Question {i}?") for i in range(2)]
        self.models = ["m0", "m1"]
        self.sess.begin_run(self.prompts, [ModelSpec(name=m, litellm_model="x") for m in self.models])
        self.answers = {
            cid: ("😀 Sure: " + HOSTILE_TEXT if c.model == "m1" and c.row_id == "hard-1k:0" else f"Answer for {cid}. ")
            * 3
            for cid, c in self.sess.run.cells.items()
        }
        self.sent = dict.fromkeys(self.answers, 0)

    def skeleton_and_reset(self) -> tuple[str, str]:
        return self.sess.feed.start(self.sess.run, self.sess.overrides)

    def step(self, chars: int = 25) -> str:
        for cid, text in self.answers.items():
            c = self.sess.run.cells[cid]
            piece = text[self.sent[cid] : self.sent[cid] + chars]
            self.sent[cid] += len(piece)
            if piece:
                self.sess.apply(CellEvent("delta", cid, c.row_id, c.model, text=piece))
        return self.sess.feed.batch(self.sess.run, self.sess.overrides)

    def finish(self) -> str:
        for cid, text in self.answers.items():
            c = self.sess.run.cells[cid]
            result = CellResult("hard-1k", c.row_id, "privacy", "q", c.model, response=text, verdict="direct_answer",
                                verdict_source="classifier", latency_s=1.0)  # fmt: skip
            self.sess.apply(CellEvent("done", cid, c.row_id, c.model, result=result))
        self.sess.finish_run()
        return self.sess.feed.batch(self.sess.run, self.sess.overrides)

    def shown(self, upto: dict[str, int] | None = None) -> list[list]:
        """What the grid must show: per cell index, the neutralised text so far."""
        out = []
        for cid in self.sess.run.order:
            text = self.answers[cid][: (upto or self.sent)[cid]]
            out.append([self.sess.run.cells[cid].index, safe_html.neutralise(text)])
        return out


def test_repeated_reordered_and_lost_batches_end_with_every_answer_intact(page):
    # The page's clock moves only when the test moves it: on a loaded machine the gap
    # between two deliveries below can pass the script's hold time, and a batch that
    # arrives late would then be mistaken for a lost one (CI saw exactly that).
    page.clock.install(time=START)
    page.add_init_script("window.__pwned = undefined; window.alert = () => { window.__pwned = 'alert'; };")
    page.goto("about:blank")
    page.clock.pause_at(START + 60_000)
    run = Run()
    skeleton, reset = run.skeleton_and_reset()
    page.evaluate(HARNESS, [script(), skeleton])
    b1, b2, b3 = run.step(), run.step(), run.step()
    upto3 = dict(run.sent)
    for value in (reset, b1, b1, b3, b2, b3):  # a repeat, and 3 before 2
        page.evaluate("v => window.__send(v)", value)
    want = run.shown(upto3)
    page.wait_for_function(f"want => JSON.stringify(({TEXTS_JS})()) === JSON.stringify(want)", arg=want, timeout=5000)
    assert page.evaluate(TEXTS_JS) == want
    assert page.evaluate("window.__triggers") == []  # nothing was missing for good

    run.step()  # batch 4 is lost
    b5 = run.step()
    page.evaluate("v => window.__send(v)", b5)
    assert page.evaluate("window.__triggers") == []  # a missing batch gets its hold time first
    page.clock.run_for(1_000)  # past the hold time, and batch 4 never came
    page.wait_for_function("() => window.__triggers.some(t => t[0] === 'resync')", timeout=3000)
    assert page.evaluate(TEXTS_JS) == run.shown(upto3)  # held, not applied out of order
    (_, asked), *_ = page.evaluate("window.__triggers")
    assert asked == {"run": run.sess.run.number, "seq": json.loads(b3)["q"]}

    page.evaluate("v => window.__send(v)", run.sess.feed.snapshot(run.sess.run, run.sess.overrides))
    assert page.evaluate(TEXTS_JS) == run.shown()
    page.evaluate("v => window.__send(v)", b5)  # a late copy of a batch the snapshot covered
    final = run.finish()
    page.evaluate("v => window.__send(v)", final)
    assert page.evaluate(TEXTS_JS) == run.shown({cid: len(t) for cid, t in run.answers.items()})
    badges = page.eval_on_selector_all(
        "#grid .verdict", "els => els.map(e => [e.dataset.verdict, e.dataset.source, e.dataset.model, e.dataset.row])"
    )
    assert {b[0] for b in badges} == {"direct_answer"} and {b[1] for b in badges} == {"classifier"}
    assert sorted((b[2], b[3]) for b in badges) == sorted((m, p.row_id) for m in run.models for p in run.prompts)
    # Hostile text stays text: no element came from it, nothing ran.
    assert page.locator("#grid img, #grid script, #grid svg, #grid a, #grid iframe").count() == 0
    assert page.evaluate("window.__pwned") is None and errors_of(page) == []
    assert "\u202e" not in page.inner_text("#grid") and "U+202E" in page.inner_text("#grid")


def test_a_new_run_replaces_the_old_one_and_a_final_badge_opens_the_verdict_menu(page):
    page.goto("about:blank")
    run = Run()
    skeleton, reset = run.skeleton_and_reset()
    page.evaluate(HARNESS, [script(), skeleton])
    page.evaluate("v => window.__send(v)", reset)
    page.evaluate("v => window.__send(v)", run.step(500))
    page.evaluate("v => window.__send(v)", run.finish())
    target = run.sess.run.order[1]
    box = f"#grid [data-cell='{target}']"
    page.click(f"{box} .verdict")
    page.click(f"{box} button.ov[data-label='indirect_refusal']")
    assert page.evaluate("window.__triggers") == [["override", {"cell": target, "label": "indirect_refusal"}]]
    assert page.locator("#grid .ov-menu").count() == 0
    run.sess.set_override(target, "indirect_refusal")
    page.evaluate("v => window.__send(v)", run.sess.feed.batch(run.sess.run, run.sess.overrides))
    badge = page.locator(f"{box} .verdict")
    assert badge.get_attribute("data-verdict") == "indirect_refusal" and badge.get_attribute("data-source") == "user"
    assert "set by you" in page.inner_text(box)

    # A second run in the same tab: its batches wait for its skeleton, then fill it.
    second = Run()
    second.sess = run.sess
    second.sess.begin_run(second.prompts[:1], [ModelSpec(name="m0", litellm_model="x")])
    second.answers = dict.fromkeys(second.sess.run.cells, "Second run answer.")
    second.sent = dict.fromkeys(second.answers, 0)
    skeleton2, reset2 = second.skeleton_and_reset()
    page.evaluate("v => window.__send(v)", reset2)
    page.evaluate("v => window.__send(v)", second.step(500))  # before the skeleton is on the page
    page.evaluate("html => { document.querySelector('#grid .prose').innerHTML = html; }", skeleton2)
    page.wait_for_function("() => document.querySelector('#grid .resp')?.textContent === 'Second run answer.'")
    assert page.locator("#grid [data-i]").count() == 1
    assert errors_of(page) == []


def test_a_live_run_that_goes_silent_is_resynced_and_an_ended_one_is_not(page):
    """A dropped connection: batches stop coming while the run is live."""
    page.clock.install()
    page.goto("about:blank")
    run = Run()
    skeleton, reset = run.skeleton_and_reset()
    page.evaluate(HARNESS, [script(), skeleton])
    page.evaluate("v => window.__send(v)", reset)
    page.evaluate("v => window.__send(v)", run.step())
    page.clock.fast_forward(31_000)  # 30 s of silence
    page.wait_for_function("() => window.__triggers.some(t => t[0] === 'resync')", timeout=5000)
    page.evaluate("v => window.__send(v)", run.sess.feed.snapshot(run.sess.run, run.sess.overrides))
    page.evaluate("v => window.__send(v)", run.finish())  # carries "end"
    page.evaluate("window.__triggers.length = 0")
    page.clock.fast_forward(61_000)
    assert page.evaluate("window.__triggers") == []
    assert page.evaluate(TEXTS_JS) == run.shown({cid: len(t) for cid, t in run.answers.items()})
