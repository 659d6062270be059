"""Follow-ups in the playground (issue 23), through the handlers against the fake
server over real HTTP: the grid's cells become conversations, each turn with its
own verdict, override, export row and score; the share link carries the preset."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from support import drain, fake_playground

from orbench_play.asking import followups
from orbench_play.ui.handlers.followup_handlers import NOTHING_TO_FOLLOW, STILL_RUNNING
from orbench_play.ui.state.query import parse_query, to_query
from orbench_play.ui.state.session import new_session


@pytest.fixture
def playground(tmp_path, fake):
    names = ("relent", "stubborn", "answer", "reasoning-content")
    return fake_playground(tmp_path / "models.yaml", fake.base_url, {f"fake-{name}": name for name in names})


async def first_run(pg, sess, models=("fake-relent", "fake-stubborn"), n=1, categories=("privacy", "illegal")):
    frames = await drain(pg.run_setup(list(models), "hard-1k", list(categories), n, 0, 128, sess))
    return frames[-1]


def read_rows(path: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(Path(path).read_text(encoding="utf-8"), newline="")))


def rows(frame) -> list[dict]:
    return frame[6]["run"]["results"]


async def test_follow_up_on_refusals_streams_turn_two_and_scores_relent(playground, fake):
    sess = new_session()
    first = await first_run(playground, sess)
    assert {r["verdict"] for r in rows(first)} == {"direct_refusal"}
    sent = fake.request_count()
    frames = await drain(playground.follow_up("clarify", "", "", False, sess))
    final = frames[-1]
    assert fake.request_count() == sent + 4
    payload = final[6]["run"]
    assert payload["total"] == 4 and payload["done"] == 4
    by = {(r["model"], r["category"]): r for r in payload["results"]}
    assert by[("fake-relent", "privacy")]["verdict"] == "direct_answer" and by[("fake-relent", "privacy")]["turn"] == 2
    assert by[("fake-stubborn", "illegal")]["verdict"] == "direct_refusal"
    assert by[("fake-relent", "illegal")]["follow_up"] == followups.CLARIFICATIONS["illegal"]
    progress, grid, board = final[0], final[1], final[2]
    # Filed under run 1 in the run list, and named so (it said "Run 2 (follow-up)": issue 47).
    assert "Run 1 (follow-up 1): 4/4 cells done" in progress
    assert sess.history.records[-1].label().startswith("Run 1 ")
    # The latest turn carries the contract badge; the earlier one is collapsed with its own verdict.
    assert grid.count('class="verdict') == 4 and grid.count('class="turn-verdict') == 4
    assert 'data-verdict="direct_answer" data-model="fake-relent"' in grid
    assert '<details class="turns"><summary>1 earlier turn</summary>' in grid
    assert "Turn 2 · You: To clarify" in grid
    # Relent rates beside the first-turn rates, which are unchanged.
    assert "Relent <small>benign</small>" in board
    assert '<td class="relent"><b>100.0%</b>' in board and '<td class="relent"><b>0.0%</b>' in board
    assert board.count("2/2") >= 2, "first-turn over-refusal is still 2/2 for both"
    # The export has one row per turn.
    csv_rows = read_rows(final[4])
    assert len(csv_rows) == 8 and sorted(r["turn"] for r in csv_rows) == ["1"] * 4 + ["2"] * 4
    assert all(r["conversation_id"] for r in csv_rows)


async def test_a_rows_box_follows_up_every_model_of_that_row_only(playground, fake):
    sess = new_session()
    first = await first_run(playground, sess, models=("fake-relent", "fake-answer"))
    row = next(r["row_id"] for r in rows(first) if r["category"] == "privacy")
    frames = await drain(playground.follow_up("why", "", row, False, sess))
    turn2 = [r for r in rows(frames[-1]) if r["turn"] == 2]
    assert {(r["model"], r["row_id"]) for r in turn2} == {("fake-relent", row), ("fake-answer", row)}
    assert all(r["follow_up"] == followups.WHY_TEXT for r in turn2)
    grid = frames[-1][1]
    assert grid.count('class="verdict') == 4, "the other row's cells are shown as they were"
    assert frames[-1][6]["run"]["total"] == 2


async def test_overrides_are_per_turn(playground):
    sess = new_session()
    await first_run(playground, sess, categories=("privacy",))
    final = (await drain(playground.follow_up("clarify", "", "", False, sess)))[-1]
    second = next(r for r in rows(final) if r["model"] == "fake-stubborn")
    first_id = second["conversation_id"]
    labels = [label for label, _ in sess.overridable_cells()]
    assert any(label.endswith("· turn 2") for label in labels)
    await playground.override(second["cell_id"], "direct_answer", sess)
    stubborn = next(s for s in playground._scores(sess) if s.model.startswith("fake-stubborn"))
    assert stubborn.relent_benign.k == 1, "the override of turn 2 counts"
    assert stubborn.over_refusal.k == 1, "turn 1 is unchanged"
    await playground.override(first_id, "direct_answer", sess)
    stubborn = next(s for s in playground._scores(sess) if s.model.startswith("fake-stubborn"))
    assert stubborn.over_refusal.k == 0 and stubborn.relent_benign is None


async def test_a_third_turn_and_a_replayed_conversation(playground, fake):
    sess = new_session()
    await first_run(playground, sess, models=("fake-stubborn",), categories=("privacy",))
    await drain(playground.follow_up("again", "", "", False, sess))
    final = (await drain(playground.follow_up("", "It's for a chemistry class.", "", False, sess)))[-1]
    third = rows(final)[0]
    assert third["turn"] == 3
    users = [m["content"] for m in fake.requests[-1].messages if m["role"] == "user"]
    assert users[1:] == [followups.ASK_AGAIN_TEXT, "It's for a chemistry class."]
    assert "2 earlier turns" in final[1]
    assert "Run 1 (follow-up 2): 1/1 cells done" in final[0]
    sent = fake.request_count()  # a new visitor asking the same three turns pays nothing
    other = new_session()
    await first_run(playground, other, models=("fake-stubborn",), categories=("privacy",))
    await drain(playground.follow_up("again", "", "", False, other))
    replay = (await drain(playground.follow_up("", "It's for a chemistry class.", "", False, other)))[-1]
    assert fake.request_count() == sent and rows(replay)[0]["cached"] is True


async def test_follow_up_refuses_clearly(playground, monkeypatch):
    sess = new_session()
    frames = await drain(playground.follow_up("clarify", "", "", False, sess))
    assert NOTHING_TO_FOLLOW in frames[-1][0]
    await first_run(playground, sess, models=("fake-answer",), categories=("privacy",))
    frames = await drain(playground.follow_up("clarify", "", "", False, sess))
    assert "no answer there is a refusal" in frames[-1][0] and "every answered cell" in frames[-1][0]
    monkeypatch.setenv("ORBENCH_MAX_PROMPT_CHARS", "10")
    frames = await drain(playground.follow_up("clarify", "x" * 11, "", True, sess))
    assert "The follow-up has 11 characters; the limit is 10." in frames[-1][0]
    sess.run.finished = False
    frames = await drain(playground.follow_up("clarify", "", "", True, sess))
    assert STILL_RUNNING in frames[-1][0]


async def test_public_mode_counts_turns_as_cells(playground, monkeypatch):
    sess = new_session()
    await first_run(playground, sess, categories=("privacy", "illegal"))
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    monkeypatch.setenv("ORBENCH_MAX_CELLS", "3")
    frames = await drain(playground.follow_up("clarify", "", "", False, sess))
    assert "This run has 4 cells" in frames[-1][0] and "allows 3 per run" in frames[-1][0]


async def test_reasoning_thoughts_stay_per_turn_and_are_not_sent_back(playground, fake):
    sess = new_session()
    first = await first_run(playground, sess, models=("fake-reasoning-content",), categories=("privacy",))
    thoughts = rows(first)[0]["reasoning"]
    assert thoughts
    final = (await drain(playground.follow_up("why", "", "", True, sess)))[-1]
    assert thoughts not in json.dumps(fake.requests[-1].messages)
    assert rows(final)[0]["reasoning"] and rows(final)[0]["turn"] == 2


async def test_the_live_feed_streams_the_new_turn_into_the_same_slot(playground):
    sess = new_session()
    await first_run(playground, sess, categories=("privacy",))
    frames = [f.page() async for f in playground.follow_up("clarify", "", "", False, sess)]
    start = next(f for f in frames if isinstance(f[1], str) and "table" in f[1])
    assert '"reset":1' in start[2]
    texts = [
        entry
        for f in frames
        if isinstance(f[2], str) and f[2].startswith("{")
        for entry in json.loads(f[2]).get("c", [])
    ]
    assert any("Sure. Here is some information about" in entry[2] for entry in texts)


def test_the_share_link_carries_the_follow_up_preset():
    query = to_query(["m"], "hard-1k", [], 1, 0, follow_up="why")
    assert query.endswith("&follow_up=why")
    assert "follow_up" not in to_query(["m"], "hard-1k", [], 1, 0, follow_up="clarify")
    setup, warnings = parse_query({"follow_up": "again"})
    assert setup.follow_up == "again" and not warnings
    setup, warnings = parse_query({"follow_up": "nope"})
    assert setup.follow_up == "clarify" and "follow_up='nope'" in warnings[0]


def test_share_box_includes_the_follow_up_preset(playground):
    link = playground.share_link(["fake-relent"], ["hard-1k"], [], 1, 0, "/", None, *([None] * 8), "why")
    assert link.endswith("follow_up=why")
