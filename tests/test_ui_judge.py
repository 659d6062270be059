"""The page's judge menu (elem_id `judge`) and the judge a run uses."""

from __future__ import annotations

import pytest
from support import drain, fake_playground

from orbench_play.ui.state.session import new_session
from orbench_play.verdicts import classes_markdown

KEYS = ("OPENAI_API_KEY", "TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_API_KEY", "ORBENCH_JUDGE")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for var in (*KEYS, "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(var, raising=False)


def make_playground(fake, tmp_path):
    return fake_playground(tmp_path / "models.yaml", fake.base_url, {"owner-refuse": "refuse"})


def test_menu_offers_presets_only_with_their_key(fake, tmp_path, monkeypatch):
    pg = make_playground(fake, tmp_path)
    assert [v for _, v in pg.judge_choices()] == ["keyword", "owner-refuse", "auto:owner-refuse"]
    assert pg.judge == "keyword"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ORBENCH_JUDGE", "paper:together")  # default from the environment, key missing
    pg = make_playground(fake, tmp_path)
    assert pg.judge == "paper:together"
    values = [v for _, v in pg.judge_choices()]  # the OpenAI key also brings OpenAI catalog presets
    assert values[:4] == ["keyword", "paper", "auto:paper", "owner-refuse"] and values[-1] == "paper:together"
    assert values.count("paper:together") == 1


async def test_choosing_the_paper_judge_without_its_key_says_which_variable(fake, tmp_path):
    pg = make_playground(fake, tmp_path)
    frames = await drain(pg.run_prompt("Is this allowed?", ["owner-refuse"], 64, new_session(), judge="paper"))
    assert len(frames) == 1 and "OPENAI_API_KEY" in frames[0][0]
    frames = await drain(pg.run_setup(["owner-refuse"], "hard-1k", [], 1, 0, 64, new_session(), judge="paper:together"))
    assert len(frames) == 1 and "TOGETHERAI_API_KEY" in frames[0][0]
    assert fake.request_count() == 0


async def test_the_chosen_judge_decides_and_none_keeps_the_default(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    fake.set_behaviour("gpt-4-turbo-2024-04-09", "judge")
    pg = make_playground(fake, tmp_path)
    frames = await drain(pg.run_prompt("Can I ask?", ["owner-refuse"], 64, new_session(), judge="paper"))
    result = frames[-1][6]["run"]["results"][0]
    assert (result["verdict"], result["verdict_source"]) == ("direct_refusal", "llm:paper")
    assert fake.request_count("gpt-4-turbo-2024-04-09") == 1
    frames = await drain(pg.run_prompt("Can I ask again?", ["owner-refuse"], 64, new_session()))
    assert frames[-1][6]["run"]["results"][0]["verdict_source"] != "llm:paper"  # keyword: today's behaviour
    assert fake.request_count("gpt-4-turbo-2024-04-09") == 1


def test_page_has_the_judge_menu_and_the_shared_class_definitions(fake, tmp_path):
    from orbench_play.ui.layout import _about_text, build_blocks

    pg = make_playground(fake, tmp_path)
    demo = build_blocks(pg)
    menus = [b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "judge"]
    assert len(menus) == 1 and [c[1] for c in menus[0].choices] == ["keyword", "owner-refuse", "auto:owner-refuse"]
    about = _about_text()
    assert classes_markdown() in about and "{{" not in about
