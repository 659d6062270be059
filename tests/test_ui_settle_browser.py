"""The settle switch in headless Chromium (issue 46): a link turns it on for an API
model (off by default for it); a long answer stops once its verdict settles, its
cell says where, the scoreboard says what that saved, and "Finish this answer"
asks again without settling, the whole answer streaming into the same cell."""

from __future__ import annotations

import pytest
from support import ALL_FINAL, browser_page, chromium, errors_of, fake_models_yaml, open_share_link, serve_playground

pytestmark = pytest.mark.browser

QUERY = "?models=fake-long&split=hard-1k&categories=privacy&n=1&seed=0"
CELL_JS = """() => { const td = document.querySelector('#grid td.cell');
  return {verdict: td.querySelector('.verdict').dataset.verdict, msg: td.querySelector('.msg').innerText,
          finish: !!td.querySelector('.msg button.finish'), text: td.querySelector('.resp').innerText}; }"""


@pytest.fixture(scope="module")
def app_url(fake_server, tmp_path_factory):
    config = fake_models_yaml(tmp_path_factory.mktemp("ui-settle") / "models.yaml", fake_server.base_url, {
        "fake-long": "long"
    })  # fmt: skip
    with serve_playground(config) as url:
        yield url


def test_the_switch_stops_an_answer_and_finish_asks_for_the_rest(app_url, fake):
    fake.words, fake.long_seconds = 300, 5.0
    with chromium() as browser, browser_page(browser, viewport={"width": 1400, "height": 1000}) as page:
        open_share_link(page, app_url, QUERY)
        assert not page.locator("#settle input").is_checked(), "off by default for an API model"
        open_share_link(page, app_url, QUERY + "&settle=1")
        assert page.locator("#settle input").is_checked()

        page.click("#run button, button#run")
        page.wait_for_function(ALL_FINAL, arg=1, timeout=60_000)
        cell = page.evaluate(CELL_JS)
        assert cell["verdict"] == "direct_answer" and "verdict settled" in cell["msg"] and cell["finish"], cell
        assert fake.wait_idle(10) == 0 and fake.requests[-1].hung_up  # noticed at the server's next write
        page.wait_for_selector("#scoreboard .sb-settle")
        assert "Settling stopped 1 of 1 answers" in page.locator("#scoreboard .sb-settle").inner_text()

        fake.long_seconds = 1.0
        page.click("#grid button.finish")
        page.wait_for_function(
            "() => document.querySelector('#progress .prog-text')?.innerText.includes('(finishing): 1/1 cells done')"
            f" && ({ALL_FINAL})(1)",
            timeout=60_000,
        )
        finished = page.evaluate(CELL_JS)
        assert finished["verdict"] == "direct_answer" and not finished["finish"] and "settled" not in finished["msg"]
        assert len(finished["text"]) > len(cell["text"]) and finished["text"].startswith(cell["text"][:200])
        assert fake.request_count() == 2 and not fake.requests[-1].hung_up
        page.wait_for_function("() => !document.querySelector('#scoreboard .sb-settle')", timeout=15_000)
        assert errors_of(page) == []
