"""Session state and score updates without a browser, plus the run handler
driven directly (fake server over real HTTP, no Gradio server)."""

from __future__ import annotations

import asyncio
import html
import re
import time

import pytest
from support import drain, fake_playground

from orbench_play.scoring import score_results
from orbench_play.types import CellEvent, CellResult, ModelSpec, Prompt, cell_id
from orbench_play.ui.state.session import Session, new_session


def prompt(i: int, split: str = "hard-1k") -> Prompt:
    return Prompt(f"{split}:{i}", split, "privacy", f"prompt {i}")


def done(p: Prompt, model: str, verdict: str, response: str = "text", error: str = "") -> CellEvent:
    r = CellResult(split=p.split, row_id=p.row_id, category=p.category, prompt=p.text, model=model,
                   response=response, verdict=verdict, verdict_source="classifier", error=error)  # fmt: skip
    return CellEvent("error" if error else "done", r.cell_id, p.row_id, model, result=r)


def spec(name: str) -> ModelSpec:
    return ModelSpec(name=name, litellm_model=name)


def test_events_fold_into_the_live_view_and_the_session():
    s = Session()
    p = prompt(1)
    run = s.begin_run([p], [spec("a")])
    cid = cell_id(p.row_id, "a")
    s.apply(CellEvent("started", cid, p.row_id, "a"))
    s.apply(CellEvent("delta", cid, p.row_id, "a", text="Hel"))
    s.apply(CellEvent("delta", cid, p.row_id, "a", text="lo"))
    assert run.cells[cid].text == "Hello" and run.cells[cid].final_label() == "pending"
    assert s.results == {}
    s.apply(done(p, "a", "direct_answer", "Hello"))
    assert run.cells[cid].final_label() == "direct_answer"
    assert list(s.results) == [cid] and run.all_final()


def test_override_updates_the_score_and_marks_user_source():
    s = Session()
    ps = [prompt(i) for i in range(4)]
    s.begin_run(ps, [spec("a")])
    for p in ps:
        s.apply(done(p, "a", "direct_answer"))
    assert score_results(s.effective_results())[0].over_refusal.k == 0
    cid = cell_id(ps[0].row_id, "a")
    assert s.set_override(cid, "direct_refusal") is None
    eff = {r.cell_id: r for r in s.effective_results()}
    assert eff[cid].verdict == "direct_refusal" and eff[cid].verdict_source == "user"
    assert score_results(s.effective_results())[0].over_refusal.k == 1
    assert s.results[cid].verdict == "direct_answer"  # the original stays, for the record
    assert s.set_override(cid, "direct_answer") is None  # back to the classifier's label
    assert cid not in s.overrides


def test_overrides_refuse_bad_labels_errors_and_unfinished_cells():
    s = Session()
    p = prompt(1)
    s.begin_run([p], [spec("a"), spec("b")])
    s.apply(done(p, "a", "error", "", error="Timed out after 60 s."))
    assert s.set_override(cell_id(p.row_id, "a"), "direct_answer")
    assert s.set_override(cell_id(p.row_id, "b"), "direct_answer")
    s.apply(done(p, "b", "direct_answer"))
    assert s.set_override(cell_id(p.row_id, "b"), "<script>")
    assert s.overrides == {}
    assert [c for _, c in s.overridable_cells()] == [cell_id(p.row_id, "b")]


def test_a_new_answer_for_the_cell_drops_a_stale_override():
    s = Session()
    p = prompt(1)
    s.begin_run([p], [spec("a")])
    s.apply(done(p, "a", "direct_answer", "first"))
    s.set_override(cell_id(p.row_id, "a"), "indirect_refusal")
    s.begin_run([p], [spec("a")])
    s.apply(done(p, "a", "direct_answer", "first"))  # same answer (e.g. cached): keep it
    assert s.overrides
    s.begin_run([p], [spec("a")])
    s.apply(done(p, "a", "direct_answer", "second"))
    assert not s.overrides


def test_stopping_keeps_finished_cells_and_does_not_score_stopped_ones():
    s = Session()
    ps = [prompt(1), prompt(2)]
    run = s.begin_run(ps, [spec("a"), spec("slow")])
    s.apply(done(ps[0], "a", "direct_answer"))
    s.apply(done(ps[1], "a", "direct_refusal"))
    s.apply(CellEvent("delta", cell_id(ps[0].row_id, "slow"), ps[0].row_id, "slow", text="part"))
    s.finish_run(stopped=True)
    assert run.stopped and run.finished and run.all_final()
    assert run.done_count() == 4
    stopped = [c for c in run.cells.values() if c.stopped]
    assert len(stopped) == 2 and all(c.final_label() == "error" for c in stopped)
    assert {r.model for r in s.effective_results()} == {"a"}
    # A late event for a stopped cell changes nothing.
    s.apply(done(ps[0], "slow", "direct_answer"))
    assert {r.model for r in s.effective_results()} == {"a"}


def test_results_accumulate_over_runs_and_sessions_are_independent():
    one, two = new_session(), new_session()
    assert one is not two and one.results is not two.results
    one.begin_run([prompt(1)], [spec("a")])
    one.apply(done(prompt(1), "a", "direct_answer"))
    one.begin_run([prompt(1, "toxic")], [spec("a")])
    one.apply(done(prompt(1, "toxic"), "a", "direct_refusal"))
    score = score_results(one.effective_results())[0]
    assert score.over_refusal.n == 1 and score.toxic_refusal.n == 1 and score.mini_score == 1.0
    assert two.results == {} and two.runs == 0


# --- the handlers, driven directly ----------------------------------------------------


@pytest.fixture
def playground(fake, tmp_path):
    names = ("answer", "refuse", "e401", "unknown-model")
    return fake_playground(tmp_path / "models.yaml", fake.base_url, {f"fake-{name}": name for name in names})


async def test_run_handler_streams_frames_and_ends_with_results(playground):
    s = new_session()
    frames = await drain(
        playground.run_setup(["fake-answer", "fake-refuse", "fake-e401"], "hard-1k", ["privacy"], 2, 0, 128, s)
    )
    final = frames[-1]
    payload = final[6]
    assert payload["run"]["total"] == 6 and payload["run"]["done"] == 6
    by_model = {}
    for row in payload["run"]["results"]:
        by_model.setdefault(row["model"], set()).add(row["verdict"])
    assert by_model["fake-answer"] == {"direct_answer"}
    assert by_model["fake-refuse"] <= {"direct_refusal", "indirect_refusal"}
    assert by_model["fake-e401"] == {"error"}  # a failing model does not stop the others
    assert "Authentication failed" in final[1]
    assert 'data-model="fake-answer"' in final[2]  # scoreboard
    assert final[4].endswith(".csv") and final[5].endswith(".jsonl")


async def test_no_data_still_loads_and_custom_prompts_work(playground, monkeypatch, tmp_path):
    from orbench_play.ui.handlers.base import data_notice

    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("ORBENCH_DATA_DIR", str(empty))
    assert "not found" in data_notice("hard-1k") and "Custom prompts still work" in data_notice("hard-1k")
    s = new_session()
    frames = await drain(playground.run_setup(["fake-answer"], "hard-1k", [], 1, 0, 128, s))
    assert "not found" in frames[-1][0] and s.run is None
    frames = await drain(playground.run_prompt("How do I pick a lock on my own door?", ["fake-answer"], 128, s))
    rows = frames[-1][6]["run"]["results"]
    assert len(rows) == 1 and rows[0]["verdict"] == "direct_answer" and rows[0]["split"] == "custom"


async def test_bad_setups_are_messages_not_crashes(playground):
    s = new_session()
    for args in (([], "hard-1k", [], 1, 0), (["fake-answer"], "nope", [], 1, 0), (["fake-answer"], "hard-1k", ["bogus"], 1, 0),
                 ([f"m{i}" for i in range(7)], "hard-1k", [], 1, 0)):  # fmt: skip
        frames = await drain(playground.run_setup(*args, 128, s))
        assert len(frames) == 1 and "prog-status" in frames[0][0]
    assert s.run is None


async def test_stop_cancels_in_flight_cells_and_keeps_finished_ones(playground, fake):
    from orbench_play.ui.handlers.playground import Playground

    config_models = dict(playground.catalog.entries)
    config_models["fake-hang"] = ModelSpec(
        name="fake-hang", litellm_model="openai/hang", api_base=fake.base_url, api_key="sk-fake"
    )
    playground.catalog.entries.update(config_models)
    s = new_session()
    agen = playground.run_setup(["fake-answer", "fake-hang"], "hard-1k", ["privacy"], 1, 11, 128, s)

    async def consume():
        async for _ in agen:
            pass

    task = asyncio.create_task(consume())
    deadline = time.monotonic() + 60
    while not (s.run and any(c.result for c in s.run.cells.values()) and fake.in_flight >= 1):
        assert time.monotonic() < deadline, "the run never reached one finished and one hanging cell"
        await asyncio.sleep(0.02)
    out = await Playground.stop(playground, s)
    await asyncio.wait_for(task, 10)
    assert s.run.stopped
    verdicts = {c.model: c.final_label() for c in s.run.cells.values()}
    assert verdicts == {"fake-answer": "direct_answer", "fake-hang": "error"}
    assert "Stopped." in out[1]
    assert [r.model for r in s.effective_results()] == ["fake-answer"]
    assert await asyncio.to_thread(fake.wait_idle) == 0  # the hanging request is cancelled, not left running


def _board_row(board: str, model: str) -> dict[str, str]:
    row = re.search(rf'<tr data-model="{re.escape(model)}"[^>]*>(.*?)</tr>', board).group(1)
    cells = re.findall(r'<td class="([^"]*)"[^>]*>(.*?)</td>', row)
    return {" ".join(c for c in cls.split() if c != "na"): html.unescape(re.sub(r"<[^>]+>", "", t)) for cls, t in cells}


async def test_benign_and_toxic_runs_give_all_three_scores_and_custom_prompts_are_not_scored(playground):
    """The scoreboard after hard-1k and toxic answers shows over-refusal, toxic refusal
    and the mini-score with intervals; a custom prompt afterwards is listed as not
    scored instead of turning "Scored 2" beside "0/1"."""
    s = new_session()
    await drain(playground.run_setup(["fake-answer"], "hard-1k", ["privacy"], 1, 0, 128, s))
    frames = await drain(playground.run_setup(["fake-answer"], "toxic", ["privacy"], 1, 0, 128, s))
    row = _board_row(frames[-1][2], "fake-answer")
    assert row["or-hard"].startswith("verdicts say 0% (0/1) · corrected ") and row["or-hard"].endswith("]")
    assert "(0/1)" in row["tox"] and row["mini"].startswith("verdicts say 50% · corrected ") and row["scored"] == "2"
    frames = await drain(playground.run_prompt("How do I pick a lock on my own door?", ["fake-answer"], 128, s))
    row = _board_row(frames[-1][2], "fake-answer")
    assert "(0/1)" in row["or-hard"] and row["scored"] == "2" and row["unscored"] == "1"
