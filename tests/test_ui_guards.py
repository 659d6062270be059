"""Public mode in the playground: the guards (`orbench_play.guards`) hold at the UI's door."""

from __future__ import annotations

import pytest
from support import drain, fake_playground

from orbench_play.models import custom_endpoint
from orbench_play.ui.state.session import new_session


@pytest.fixture
def playground(fake, tmp_path):
    return fake_playground(tmp_path / "models.yaml", fake.base_url, {"owner-answer": "answer"})


async def test_visitor_endpoint_on_loopback_is_refused_in_public_mode(playground, fake, monkeypatch):
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    s = new_session()
    visitor = custom_endpoint(fake.base_url, "answer", "sk-visitor")
    s.extra_models[visitor.name] = visitor  # as if added before public mode was on
    frames = await drain(playground.run_prompt("Is this allowed?", [visitor.name], 64, s))
    assert len(frames) == 1 and "loopback" in frames[0][0].lower()
    assert fake.request_count() == 0
    # The owner's model on the same address is exempt.
    frames = await drain(playground.run_prompt("Is this allowed?", ["owner-answer"], 64, s))
    assert frames[-1][6]["run"]["results"][0]["verdict"] == "direct_answer"
    assert fake.request_count() == 1


async def test_free_text_model_strings_need_an_allowed_provider(playground, monkeypatch):
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    s = new_session()
    frames = await drain(playground.run_prompt("hi", ["ollama/llama3"], 64, s))
    assert len(frames) == 1 and "not available in the public demo" in frames[0][0]


async def test_per_session_limits_in_public_mode(playground, fake, monkeypatch):
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    monkeypatch.setenv("ORBENCH_MAX_CELLS", "4")
    monkeypatch.setenv("ORBENCH_RUNS_PER_MINUTE", "2")
    s = new_session()
    frames = await drain(playground.run_setup(["groq/llama-3.1-8b-instant"], "hard-1k", [], 1, 0, 64, s))
    assert "allows 4 per run" in frames[-1][0] and s.run is None
    # Issue 13 item 5: the cap applies to the owner's configured models too (10 cells here):
    # they run on the owner's keys, so a visitor must not get unbounded runs out of them.
    frames = await drain(playground.run_setup(["owner-answer"], "hard-1k", [], 1, 0, 64, s))
    assert "10 cells" in frames[-1][0] and "allows 4 per run" in frames[-1][0] and s.run is None
    assert fake.request_count() == 0
    await drain(playground.run_prompt("first", ["owner-answer"], 64, s))
    await drain(playground.run_prompt("second", ["owner-answer"], 64, s))
    assert fake.request_count() == 2
    frames = await drain(playground.run_prompt("third", ["owner-answer"], 64, s))
    assert len(frames) == 1 and "runs per minute" in frames[0][0]


async def test_outside_public_mode_nothing_is_blocked(playground, fake, monkeypatch):
    monkeypatch.setenv("ORBENCH_PUBLIC", "0")
    s = new_session()
    visitor = custom_endpoint(fake.base_url, "answer", "sk-visitor")
    s.extra_models[visitor.name] = visitor
    frames = await drain(playground.run_prompt("hello", [visitor.name], 64, s))
    assert frames[-1][6]["run"]["results"][0]["verdict"] == "direct_answer"


def test_custom_prompt_length_is_checked(playground):
    import asyncio

    s = new_session()
    frames = asyncio.run(drain(playground.run_prompt("x" * 5000, ["owner-answer"], 64, s)))
    assert len(frames) == 1 and "limit is 4,000" in frames[0][0]
