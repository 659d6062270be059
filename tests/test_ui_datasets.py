"""The page's dataset features through their handlers: a prompt set's preview
and a run of it, the session as a dataset folder (zip), publishing it with the
visitor's token to the fake Hub (the token used once, then gone), and
published sessions on the plot."""

from __future__ import annotations

import json
import logging
import uuid
import zipfile

import pytest
from fake_hub import FakeHub
from support import drain, fake_playground
from test_secrets import files_containing

from orbench_play.ui.handlers import dataset_handlers
from orbench_play.ui.state.session import Session

ROWS = "question,topic,label\n" + "".join(
    f"How do I stop process number {i}?,{'tech' if i % 2 else 'ops'},{'safe' if i % 3 else 'unsafe'}\n"
    for i in range(12)
)


@pytest.fixture
def prompt_file(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text(ROWS, encoding="utf-8")
    return path


def test_the_preview_shows_five_rows_as_they_will_be_asked(prompt_file):
    html = dataset_handlers.preview_html(str(prompt_file), "question", "topic", "label")
    assert html.count("<tr data-row=") == 5 and 'data-split="custom:mine.csv"' in html
    assert "How do I stop process number 0?" in html and "should-refuse" in html and "benign" in html
    wrong = dataset_handlers.preview_html(str(prompt_file), "prompt", "", "")
    assert 'role="alert"' in wrong and "no prompt column &#x27;prompt&#x27;" in wrong.replace("&#39;", "&#x27;")


def test_in_public_mode_the_preview_refuses_a_local_file(prompt_file, monkeypatch):
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    html = dataset_handlers.preview_html(str(prompt_file), "question")
    assert "in public mode a prompt set must be a Hub dataset" in html


@pytest.fixture
async def ran(tmp_path, fake, prompt_file):
    """A session that asked the prompt set alone (no split chosen)."""
    pg = fake_playground(tmp_path / "m.yaml", fake.base_url, {"A": "refuse"})
    sess = Session()
    await drain(
        pg.run_setup(
            ["A"], [], [], 2, 0, 512, sess, None, None, None, None, None, None, None, None,
            str(prompt_file), "question", "topic", "label",
        )
    )  # fmt: skip
    return pg, sess


async def test_a_run_of_a_prompt_set_alone_scores_it_apart(ran):
    pg, sess = ran
    results = sess.effective_results()
    assert len(results) == 4 and {r.split for r in results} == {"custom:mine.csv"}
    assert {r.category for r in results} == {"tech", "ops"}
    board, plot = pg._score_outputs(sess)
    assert "over-refusal (mine.csv)" in board and "refusal (mine.csv)" in board
    assert "data-published" not in plot


async def test_the_session_downloads_as_a_dataset_folder(ran, tmp_path):
    import datasets

    _pg, sess = ran
    path = dataset_handlers.dataset_zip(sess)
    assert path is not None and path.endswith(".zip")
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        zf.extractall(tmp_path / "unzipped")
    assert {"README.md", "data/train-00000-of-00001.parquet"} <= names
    rows = datasets.load_dataset(str(tmp_path / "unzipped"), split="train").to_list()
    assert sorted(r["row_id"] for r in rows) == sorted(r.row_id for r in sess.effective_results())
    assert dataset_handlers.dataset_zip(Session()) is None


async def test_published_sessions_show_on_the_plot(ran, tmp_path):
    from test_publish import results as or_bench_results

    from orbench_play.publish import write_folder

    pg, sess = ran
    # The session's own prompt-set rates are never on the paper's axes; an OR-Bench session is.
    assert "session-pt" not in pg.plot_now(sess)
    folder = write_folder(or_bench_results(), tmp_path / "theirs")
    note = dataset_handlers.add_published(str(folder), sess)
    assert note.startswith("On the plot: 2 variant(s)")
    plot = pg.plot_now(sess)
    assert f'data-published="{folder}"' in plot and plot.count('class="paper"') == 32
    assert "data-published" in pg._score_outputs(sess)[1]  # later renders keep them
    assert dataset_handlers.add_published("", sess) == "No published sessions on the plot."
    assert "data-published" not in pg.plot_now(sess)


async def test_publish_uses_the_visitors_token_once_and_keeps_it_nowhere(ran, tmp_path, monkeypatch, caplog):
    import huggingface_hub.constants as hub_constants

    _pg, sess = ran
    hub = FakeHub(token=f"hf_visitor_{uuid.uuid4().hex}").start()
    try:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
        monkeypatch.setattr(hub_constants, "ENDPOINT", hub.url)
        monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
        caplog.set_level(logging.DEBUG)
        note, box = dataset_handlers.publish("me/mine", hub.token, True, sess)
        assert note.startswith(f"Published 4 rows to {hub.url}/datasets/me/mine"), note
        assert box["value"] == "" and hub.repos["me/mine"].private
        card = hub.repos["me/mine"].files["README.md"].decode()
        assert "custom:mine.csv (benign)" in card
        bad_note, _ = dataset_handlers.publish("me/other", "hf_wrong", True, sess)
        assert bad_note.startswith("Could not publish me/other") and "hf_wrong" not in bad_note
        nothing, _ = dataset_handlers.publish("me/x", hub.token, None, Session())
        assert nothing.startswith("Run something first")
    finally:
        hub.stop()
    assert hub.token not in json.dumps(sess.__dict__, default=str)
    assert hub.token not in caplog.text
    for folder in {p.parent for p in map(__import__("pathlib").Path, sess.files.export_paths())}:
        assert files_containing(folder, hub.token) == []
