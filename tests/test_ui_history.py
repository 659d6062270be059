"""Session history (issue 20, section 4): every run of a tab is kept as an entry
of the run list (bounded by ORBENCH_SESSION_RUNS, oldest dropped first with a
note), and the page can show any earlier run's grid, scoreboard, plot and
downloads, or "All runs" (the session-wide scoreboard). The model without a
browser, then through the Playground handlers against the fake server."""

from __future__ import annotations

import csv
import json
import re
import zipfile

import pytest
from support import drain, fake_playground

from orbench_play.scoring import score_results
from orbench_play.types import CellEvent, CellResult, Exchange, FollowUp, ModelSpec, Prompt, cell_id
from orbench_play.ui.handlers import dataset_handlers
from orbench_play.ui.handlers.followup_handlers import EARLIER_RUN
from orbench_play.ui.state.exports import KEPT_CHARS
from orbench_play.ui.state.history import ALL_RUNS, RunHistory, parse_choice
from orbench_play.ui.state.session import Session, new_session
from orbench_play.ui.views import grid_view


def prompt(i: int, split: str = "hard-1k") -> Prompt:
    return Prompt(f"{split}:{i}", split, "privacy", f"prompt {i}")


def spec(name: str) -> ModelSpec:
    return ModelSpec(name=name, litellm_model=name)


def done(p: Prompt, model: str, verdict: str, response: str = "text") -> CellEvent:
    r = CellResult(split=p.split, row_id=p.row_id, category=p.category, prompt=p.text, model=model,
                   response=response, verdict=verdict, verdict_source="classifier")  # fmt: skip
    return CellEvent("done", r.cell_id, p.row_id, model, result=r)


def one_run(s: Session, prompts: list[Prompt], verdict: str, response: str = "text", models=("a",)):
    run = s.begin_run(prompts, [spec(m) for m in models])
    for p in prompts:
        for m in models:
            s.apply(done(p, m, verdict, response))
    s.finish_run()
    return run


# --- the model -------------------------------------------------------------------------


def test_every_run_is_an_entry_and_selecting_one_gives_its_results_and_score():
    s = Session()
    one_run(s, [prompt(1), prompt(2)], "direct_refusal", models=("a", "b"))
    one_run(s, [prompt(1, "toxic")], "direct_answer")
    first, second = s.history.records
    assert (first.number, second.number) == (1, 2)
    assert first.splits == ["hard-1k"] and second.splits == ["toxic"] and first.models == ["a", "b"]
    assert first.cell_ids() == [cell_id(f"hard-1k:{i}", m) for i in (1, 2) for m in ("a", "b")]
    assert "Run 1 · " in first.label() and "4 cells" in first.label() and "hard-1k" in first.label()
    # The run list: "All runs" first, then the newest run first.
    assert [v for _, v in s.history.choices()] == [ALL_RUNS, "2", "1"]
    assert "combines the runs of the same variants" in s.history.choices()[0][0]
    assert len(s.shown_results()) == 5  # the whole session
    assert s.select_run(1) is None
    assert {r.row_id for r in s.shown_results()} == {"hard-1k:1", "hard-1k:2"}
    board = {sc.model: sc for sc in score_results(s.shown_results())}
    assert board["a"].over_refusal.k == 2 and board["a"].toxic_refusal is None
    # Its grid, drawn again from its results: run 1's rows and verdicts, not the latest run's.
    shown = s.shown_run
    assert shown is not s.run and shown.number == 1 and shown.finished
    html = grid_view.render_grid(shown, s.overrides)
    assert 'data-row="hard-1k:1"' in html and 'data-row="toxic:1"' not in html
    assert all(c.final_label() == "direct_refusal" for c in shown.cells.values())
    assert s.select_run(None) is None and len(s.shown_results()) == 5 and s.shown_run is s.run
    assert s.select_run(2) is None and s.shown_run is s.run  # the latest run is the live view itself
    assert "not in this session's history" in (s.select_run(7) or "")
    with pytest.raises(ValueError):
        parse_choice("nonsense")


def test_history_is_bounded_and_drops_the_oldest_runs_with_a_note(monkeypatch):
    monkeypatch.setenv("ORBENCH_SESSION_RUNS", "2")
    s = Session()
    long = "x" * (KEPT_CHARS + 500)
    one_run(s, [prompt(1)], "direct_answer", response=long)  # spooled whole on disk
    spooled = s.files.used
    assert spooled > 0
    one_run(s, [prompt(2)], "direct_answer")
    run = one_run(s, [prompt(3)], "direct_answer")
    assert [r.number for r in s.history.records] == [2, 3] and len(s.history.records) == 2
    assert cell_id("hard-1k:1", "a") not in s.results and cell_id("hard-1k:1", "a") not in s.order
    assert s.files.used == spooled - len(long)  # its spooled answer freed
    assert any("Run 1 left this session's history" in n and "ORBENCH_SESSION_RUNS" in n for n in run.notes)
    assert "Run 1 left" in grid_view.render_progress(run)
    assert "is not in this session's history" in (s.select_run(1) or "")


def test_a_cell_a_kept_run_asked_again_stays_when_the_oldest_run_goes():
    s = Session()
    s.history = RunHistory(limit=1)
    one_run(s, [prompt(1), prompt(2)], "direct_answer")
    one_run(s, [prompt(1)], "direct_refusal")
    assert list(s.results) == [cell_id("hard-1k:1", "a")]
    assert s.results[cell_id("hard-1k:1", "a")].verdict == "direct_refusal"


def test_switching_is_refused_while_a_run_is_live_and_a_new_run_shows_all_runs():
    s = Session()
    one_run(s, [prompt(1)], "direct_answer")
    assert s.select_run(1) is None and s.history.selected == 1
    s.begin_run([prompt(2)], [spec("a")])
    assert s.history.selected is None and s.shown_run is s.run
    assert "Wait for the run to finish" in (s.select_run(1) or "")
    s.finish_run(stopped=True)
    assert s.select_run(1) is None
    stopped = s.history.records[1]
    assert stopped.results == {}  # stopped before any answer: an entry with no cells
    assert s.select_run(2) is None and s.shown_run is s.run


def test_a_follow_up_round_joins_the_run_it_follows_up():
    s = Session()
    run = one_run(s, [prompt(1)], "direct_refusal")
    asked = FollowUp("hard-1k:1", "a", 0, (Exchange("prompt 1", "text"),), "please")
    follow = s.begin_follow_up(run, [asked], "please")
    first = cell_id("hard-1k:1", "a")
    turn = next(c for c in follow.cells.values() if c.turn == 2)
    r = CellResult(split="hard-1k", row_id="hard-1k:1", category="privacy", prompt="prompt 1", model="a",
                   response="fine", verdict="direct_answer", verdict_source="classifier", turn=2,
                   conversation_id=first, follow_up="please")  # fmt: skip
    assert r.cell_id == turn.cell_id
    s.apply(CellEvent("done", r.cell_id, r.row_id, "a", result=r))
    s.finish_run()
    assert len(s.history.records) == 1
    record = s.history.records[0]
    assert record.follow_ups == 1 and set(record.results) == {first, r.cell_id}
    assert "1 follow-up" in record.label()
    one_run(s, [prompt(5)], "direct_answer")
    assert s.select_run(1) is None
    cell = s.shown_run.cells[r.cell_id]  # the grid shows the latest turn, turn 1 collapsed above it
    assert cell.turn == 2 and cell.final_label() == "direct_answer" and [t.turn for t in cell.turns] == [1]


# --- through the handlers ------------------------------------------------------------------


@pytest.fixture
def playground(fake, tmp_path):
    names = ("answer", "refuse", "relent")
    return fake_playground(tmp_path / "models.yaml", fake.base_url, {f"fake-{name}": name for name in names})


def _snapshot_rows(page: tuple) -> set[str]:
    snap = json.loads(page[2])
    assert snap["snap"] == 1
    return set(re.findall(r'data-row="([^"]+)"', snap["html"]))


def _csv_rows(path: str) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


async def test_the_run_list_switches_grid_scoreboard_plot_and_downloads(playground):
    s = new_session()
    await drain(playground.run_setup(["fake-refuse"], "hard-1k", ["privacy"], 1, 0, 128, s))
    await drain(playground.run_setup(["fake-answer"], "toxic", ["privacy"], 1, 0, 128, s))
    listed = playground.run_list(s)
    assert [v for _, v in listed["choices"]] == [ALL_RUNS, "2", "1"] and listed["value"] == ALL_RUNS
    page = await playground.show_run("1", s)
    progress, board, plot, csv_path = page[0], page[3], page[4], page[5]
    assert all(row.startswith("hard-1k:") for row in _snapshot_rows(page))
    assert "Showing run 1" in progress
    assert 'data-model="fake-refuse' in board and 'data-model="fake-answer' not in board
    assert "fake-answer" not in plot
    rows = _csv_rows(csv_path)
    assert {r["split"] for r in rows} == {"hard-1k"} and {r["model"] for r in rows} == {"fake-refuse"}
    assert page[-1]["value"] == "1"
    with zipfile.ZipFile(dataset_handlers.dataset_zip(s)) as zf:  # the dataset folder takes the run too
        card = zf.read("README.md").decode("utf-8")
    assert "fake-refuse" in card and "fake-answer" not in card
    back = await playground.show_run(ALL_RUNS, s)
    assert all(row.startswith("toxic:") for row in _snapshot_rows(back))  # the latest run's grid
    assert 'data-model="fake-refuse' in back[3] and 'data-model="fake-answer' in back[3]
    rows = _csv_rows(back[5])
    assert {r["split"] for r in rows} == {"hard-1k", "toxic"}
    assert "Showing run" not in back[0] and back[-1]["value"] == ALL_RUNS


async def test_switching_during_a_live_run_is_refused_with_a_message(playground):
    s = new_session()
    await drain(playground.run_setup(["fake-answer"], "hard-1k", ["privacy"], 1, 0, 128, s))
    s.begin_run([prompt(9)], [spec("fake-answer")])  # a run still streaming
    page = await playground.show_run("1", s)
    assert "Wait for the run to finish" in page[0] and 'data-state="refused"' in page[0]
    assert page[-1]["value"] == ALL_RUNS and s.history.selected is None


async def test_a_follow_up_round_through_the_handlers_makes_no_new_entry(playground):
    s = new_session()
    await drain(playground.run_setup(["fake-relent"], "hard-1k", ["privacy"], 1, 0, 128, s))
    await drain(playground.follow_up("clarify", "", "", False, s))
    (record,) = s.history.records
    assert record.follow_ups == 1 and {r.turn for r in record.results.values()} == {1, 2}
    assert [v for _, v in playground.run_list(s)["choices"]] == [ALL_RUNS, "1"]
    await drain(playground.run_setup(["fake-answer"], "toxic", ["privacy"], 1, 0, 128, s))
    page = await playground.show_run("1", s)
    assert 'data-model="fake-relent' in page[3] and 'data-model="fake-answer' not in page[3]
    # Following up continues the latest run: not while the page shows an earlier one.
    frames = await drain(playground.follow_up("clarify", "", "", False, s))
    assert EARLIER_RUN in frames[-1][0] and len(s.history.records) == 2
