"""Following up in headless Chromium (issue 23): run the pair, both models refuse;
a row's box sends "Clarify benign intent" to that row, the new turn streams into
the same cells with its own verdict (the first turn collapsed above it), and the
scoreboard gains the relent rates; then the box under the grid (its preset from
the share link) follows up on every refusal left."""

from __future__ import annotations

import pytest
from support import ALL_FINAL, browser_page, chromium, errors_of, fake_models_yaml, open_share_link, serve_playground

pytestmark = pytest.mark.browser

MODELS = {"fake-relent": "relent", "fake-stubborn": "stubborn"}
CELLS_JS = """els => els.map(td => {
  const v = td.querySelector('.verdict');
  return {model: v.dataset.model, row: v.dataset.row, verdict: v.dataset.verdict,
          said: td.querySelector('.said')?.dataset.turn || '1',
          earlier: [...td.querySelectorAll('.turn-verdict')].map(e => e.dataset.verdict)};
})"""


@pytest.fixture(scope="module")
def app_url(fake_server, tmp_path_factory):
    config = fake_models_yaml(tmp_path_factory.mktemp("ui-follow") / "models.yaml", fake_server.base_url, MODELS)
    with serve_playground(config) as url:
        yield url


def cells(page) -> list[dict]:
    return page.eval_on_selector_all("#grid td.cell", CELLS_JS)


def test_refuse_follow_up_answer_and_the_scoreboard_shows_who_relents(app_url, fake_server):
    query = "?models=fake-relent,fake-stubborn&split=hard-1k&categories=privacy&n=2&seed=1&follow_up=why"
    with chromium() as browser, browser_page(browser, viewport={"width": 1500, "height": 1100}) as page:
        open_share_link(page, app_url, query)
        page.click("#follow_up .label-wrap")  # the box under the grid starts closed
        assert page.locator("#follow_up_preset input").input_value() == "Why did you refuse?"
        page.click("#run button, button#run")
        page.wait_for_function(ALL_FINAL, arg=4, timeout=30_000)
        first = cells(page)
        assert {c["verdict"] for c in first} == {"direct_refusal"}
        assert "Relent" not in page.locator("#scoreboard").inner_text()
        row = first[0]["row"]

        sent = fake_server.request_count()
        page.click(f"#grid tr[data-row='{row}'] button.fu-send")  # its preset starts on "Clarify benign intent"
        page.wait_for_function(
            """row => { const tds = [...document.querySelectorAll(`#grid tr[data-row='${row}'] td.cell`)];
                 return tds.length === 2 && tds.every(td => td.querySelector('.said')
                   && td.querySelector('.verdict').dataset.verdict !== 'pending'); }""",
            arg=row,
            timeout=30_000,
        )
        assert fake_server.request_count() == sent + 2
        after = {c["model"]: c for c in cells(page) if c["row"] == row}
        assert after["fake-relent"]["verdict"] == "direct_answer" and after["fake-relent"]["said"] == "2"
        assert after["fake-stubborn"]["verdict"] == "direct_refusal"
        assert after["fake-relent"]["earlier"] == ["direct_refusal"], "turn 1 collapsed with its own verdict"
        text = page.locator(f"#grid tr[data-row='{row}'] td.cell").first.inner_text()
        assert "Turn 2 · You: To clarify" in text and "Sure. Here is some information about" in text
        board = page.locator("#scoreboard tr[data-model='fake-relent']")
        page.wait_for_function(
            "() => document.querySelector(\"#scoreboard tr[data-model='fake-relent'] td.relent\")"
            "?.innerText.includes('1/1')"
        )
        assert "2/2" in board.inner_text(), "the first-turn over-refusal is unchanged"
        assert "0/1" in page.locator("#scoreboard tr[data-model='fake-stubborn'] td.relent").inner_text()

        # The box under the grid: every refusal left, with the link's preset ("Why did you refuse?").
        page.click("#follow_up_send")
        page.wait_for_function(
            "() => document.querySelector('#progress .prog-text')?.dataset.state === 'finished'"
            " && document.querySelector('#progress')?.innerText.includes('3/3')",
            timeout=30_000,
        )
        final = {(c["model"], c["row"]): c for c in cells(page)}
        assert final[("fake-stubborn", row)]["said"] == "3" and len(final[("fake-stubborn", row)]["earlier"]) == 2
        assert final[("fake-relent", row)]["said"] == "2", "an answer is not followed up on"
        other = next(r for _, r in final if r != row)
        assert final[("fake-relent", other)]["verdict"] == "direct_refusal", "asking why is no clarification"
        page.wait_for_function(
            "() => document.querySelector(\"#scoreboard tr[data-model='fake-relent'] td.relent\")"
            "?.innerText.includes('1/2')"
        )
        assert errors_of(page) == []
