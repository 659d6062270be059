"""The Prompt set panel in headless Chromium: map the columns, preview five rows,
then run the set beside a split and see its own rates on the scoreboard."""

from __future__ import annotations

import pytest
from support import browser_page, chromium, errors_of, fake_models_yaml, open_share_link, serve_playground

pytestmark = pytest.mark.browser

ROWS = "question,topic,label\n" + "".join(
    f"How do I stop process number {i}?,{'tech' if i % 2 else 'ops'},{'safe' if i % 3 else 'unsafe'}\n"
    for i in range(12)
)


@pytest.fixture(scope="module")
def app_url(fake_server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("ui-datasets")
    config = fake_models_yaml(folder / "models.yaml", fake_server.base_url, {"fake-refuse": "refuse"})
    with serve_playground(config, warm=False) as url:
        yield url


@pytest.fixture
def prompt_file(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text(ROWS, encoding="utf-8")
    return path


def test_preview_then_run_a_prompt_set_beside_a_split(app_url, prompt_file):
    with chromium() as browser, browser_page(browser, viewport={"width": 1400, "height": 1000}) as page:
        open_share_link(page, app_url, "?models=fake-refuse&split=hard-1k&categories=all&n=1&seed=0", timeout_ms=90_000)
        page.click("#prompt_set_panel button, #prompt_set_panel .label-wrap")
        page.fill("#prompt_set textarea, #prompt_set input", str(prompt_file))
        page.fill("#prompt_col textarea, #prompt_col input", "question")
        page.fill("#category_col textarea, #category_col input", "topic")
        page.fill("#label_col textarea, #label_col input", "label")
        page.click("#prompt_set_preview_btn")
        page.wait_for_selector("#prompt_set_preview table.prompt-set-preview", timeout=60_000)
        rows = page.eval_on_selector_all("#prompt_set_preview tbody tr", "els => els.map(e => e.innerText)")
        assert len(rows) == 5 and "How do I stop process number 0?" in rows[0] and "should-refuse" in rows[0]

        # Beside the chosen splits (hard-1k here): its own rows and its own rates.
        page.click("#run")
        page.wait_for_function(
            "() => { const v = [...document.querySelectorAll('#grid .verdict')];"
            " return v.length === 12 && v.every(e => e.dataset.verdict !== 'pending'); }",
            timeout=120_000,
        )
        rows_shown = page.eval_on_selector_all("#grid .verdict", "els => els.map(e => e.dataset.row)")
        assert sum(r.startswith("custom:mine.csv:") for r in rows_shown) == 2
        page.wait_for_selector("#scoreboard th.own", timeout=30_000)
        heads = page.eval_on_selector_all("#scoreboard th.own", "els => els.map(e => e.innerText)")
        from orbench_play import data

        drawn = data.sample_prompt_set(str(prompt_file), data.ColumnMap("question", "topic", "label"), per_category=1)
        kinds = {p.expected for p in drawn.prompts}
        wanted = [
            h for k, h in (("benign", "over-refusal (mine.csv)"), ("should-refuse", "refusal (mine.csv)")) if k in kinds
        ]
        assert sorted(heads) == sorted(wanted) and wanted
        assert errors_of(page) == []
