"""The page's settle switch (issue 46), through the handlers against the fake server
over real HTTP: on, a long answer stops once its verdict settles, its cell says so
and offers to finish it; finishing asks again without settling (the whole answer,
cached apart); off, answers run to their end. On by default for the embedded demo
models only, and in the share link only when it differs from that default."""

from __future__ import annotations

import asyncio

import pytest
from fake_openai import long_answer_text
from support import drain, fake_playground

from orbench_play.ui.handlers.base import settle_default
from orbench_play.ui.state.query import parse_query, to_query
from orbench_play.ui.state.session import new_session

SMOL, QWEN = "local/smollm2-135m", "local/qwen2.5-coder-0.5b"


@pytest.fixture
def playground(tmp_path, fake):
    fake.words, fake.long_seconds = 300, 4.0
    return fake_playground(tmp_path / "models.yaml", fake.base_url, {"fake-long": "long"})


def rows(frame) -> list[dict]:
    return frame[6]["run"]["results"]


async def run(pg, sess, settle):
    frames = await drain(pg.run_setup(["fake-long"], "hard-1k", ["privacy"], 1, 0, 512, sess, settle=settle))
    return frames[-1]


def test_on_by_default_for_the_embedded_demo_models_only():
    assert settle_default([SMOL, QWEN]) and settle_default([QWEN])
    assert not settle_default([SMOL, "gpt-4o-mini"]) and not settle_default([]) and not settle_default(["fake"])


def test_the_link_carries_the_switch_only_when_it_is_not_its_default(tmp_path, fake):
    pg = fake_playground(tmp_path / "models.yaml", fake.base_url, {"fake-long": "long"})
    args = (["fake-long"], ["hard-1k", "toxic"], [], 1, 0, "/", None)
    assert "settle" not in pg.share_link(*args, settle=False)  # an API model: off is its default
    assert pg.share_link(*args, settle=True).endswith("&settle=1")
    assert "settle" not in pg.share_link([SMOL, QWEN], *args[1:], settle=True)
    assert pg.share_link([SMOL, QWEN], *args[1:], settle=False).endswith("&settle=0")
    assert parse_query({"settle": "1"})[0].settle is True and parse_query({"settle": "0"})[0].settle is False
    assert parse_query({})[0].settle is None
    setup, warnings = parse_query({"settle": "maybe"})
    assert setup.settle is None and warnings == ["Ignored settle='maybe' in the link: use settle=1 or settle=0."]
    assert "settle" not in to_query(["m"], "hard-1k", [], 1, 0)


def test_the_switch_follows_the_models_until_set():
    from orbench_play.ui.handlers.setup_handlers import SetupHandlers

    assert SetupHandlers.settle_follows([SMOL, QWEN], False) is True
    assert SetupHandlers.settle_follows([SMOL, "gpt-4o-mini"], False) is False
    kept = SetupHandlers.settle_follows([SMOL, "gpt-4o-mini"], True)  # gr.skip(): left as the visitor set it
    assert kept is not True and kept is not False


async def hung_up(request, within: float = 15.0) -> None:
    """Wait until the fake server has seen the client hang up: it notices only at its
    next write, a word's pause after the engine closed the stream."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not request.hung_up:
        assert loop.time() < deadline, "the settled stream's request was never closed"
        await asyncio.sleep(0.02)


@pytest.mark.usefixtures("engine_warmed_up")
async def test_settled_cell_says_where_it_stopped_and_finishing_asks_for_the_whole_answer(playground, fake):
    sess = new_session()
    first = await run(playground, sess, True)
    (row,) = rows(first)
    assert row["settled"] is True and row["saved_tokens"] > 0 and fake.request_count() == 1
    await hung_up(fake.requests[-1])
    grid, board = first[1], first[2]
    assert f"Stopped at {row['settled_at_tokens']:,} tokens: verdict settled." in grid
    assert 'class="finish"' in grid
    assert 'class="sb-settle" data-settled="1"' in board and "up to" in board
    cid = next(iter(sess.results))

    frames = await drain(playground.finish(cid, sess))
    final = frames[-1]
    (whole,) = rows(final)
    assert fake.request_count() == 2 and not fake.requests[-1].hung_up
    assert whole["settled"] is False and whole["response"] == long_answer_text(fake.requests[-1].prompt, 300)
    assert "Run 1 (finishing): 1/1 cells done" in final[0]
    assert "verdict settled" not in final[1] and 'class="finish"' not in final[1]
    assert "sb-settle" not in final[2], "the finished answer saved nothing after all"
    assert sess.results[cid].settled is False

    again = await drain(playground.finish(cid, sess))  # nothing left to finish
    assert "nothing to finish" in again[-1][0]
    fake.long_seconds = 0.5
    plain = await run(playground, new_session(), None)  # an API model: the default is off, the whole answer
    assert rows(plain)[0]["settled"] is False and rows(plain)[0]["cached"] is True, "served from the finish run"
    assert fake.request_count() == 2


@pytest.mark.usefixtures("engine_warmed_up")
async def test_switched_off_the_answers_run_to_their_end(playground, fake):
    fake.long_seconds = 0.5
    (row,) = rows(await run(playground, new_session(), False))
    assert row["settled"] is False and row["settled_at_tokens"] is None and not fake.requests[-1].hung_up
