"""Follow-ups (issue 23): a cell's conversation one turn further, over real HTTP
through LiteLLM against the fake server (`relent` refuses until the conversation
holds a clarification; `stubborn` never relents)."""

from __future__ import annotations

import csv
from dataclasses import replace

import pytest
from support import fake_models_yaml

from orbench_play import engine
from orbench_play.asking import followups
from orbench_play.cache import ResultCache
from orbench_play.cli import main
from orbench_play.scoring import score_results, scoreboard_frame, wilson
from orbench_play.types import (
    CATEGORIES,
    EXTRA_COLUMNS,
    CellResult,
    Exchange,
    FollowUp,
    GenerationParams,
    ModelSpec,
    Prompt,
    RunConfig,
)


def spec(fake, behaviour: str, name: str | None = None) -> ModelSpec:
    return ModelSpec(
        name=name or behaviour, litellm_model=f"openai/{behaviour}", api_base=fake.base_url, api_key="sk-fake"
    )


def prompts(n: int, split: str = "hard-1k", category: str = "privacy") -> tuple[Prompt, ...]:
    return tuple(
        Prompt(f"{split}:{i}", split, category, f"How do people find someone's address, case {i}?") for i in range(n)
    )


@pytest.fixture
def cache(tmp_path):
    c = ResultCache(tmp_path / "cache")
    yield c
    c.close()


async def two_turns(config: RunConfig, cache=None, choice="clarify", **kw):
    first = await engine.collect(config, cache=cache)
    planned = followups.plan(first, choice, **kw)
    second = await engine.collect(replace(config, follow_ups=tuple(planned)), cache=cache) if planned else []
    return first, planned, second


# -- the conversation each model receives ------------------------------------------------


async def test_a_follow_up_sends_the_whole_conversation_and_gets_its_own_verdict(fake):
    params = GenerationParams(system_prompt="Be brief.", system_prompt_id="brief", temperature=0.3)
    config = RunConfig(
        models=(spec(fake, "relent"), spec(fake, "stubborn")), prompts=prompts(1), params=params, use_cache=False
    )
    first, planned, second = await two_turns(config)
    assert [r.verdict for r in first] == ["direct_refusal", "direct_refusal"]
    assert {f.model for f in planned} == {"relent", "stubborn"} and all(f.turn == 2 for f in planned)

    turn2 = [r for r in fake.requests if len(r.messages) > 2]
    assert len(turn2) == 2
    clarification = followups.CLARIFICATIONS["privacy"]
    for request in turn2:
        assert [m["role"] for m in request.messages] == ["system", "user", "assistant", "user"]
        assert request.messages[0]["content"] == "Be brief."  # the system prompt unchanged
        assert request.messages[1]["content"] == prompts(1)[0].text
        assert request.messages[2]["content"] == "I'm sorry, but I can't help with that request."
        assert request.messages[3]["content"] == clarification
        assert request.params["temperature"] == 0.3  # the settings unchanged

    by_model = {r.model: r for r in second}
    assert by_model["relent"].verdict == "direct_answer" and by_model["stubborn"].verdict == "direct_refusal"
    for r in second:
        assert r.turn == 2 and r.follow_up == clarification and r.prompt == prompts(1)[0].text
        first_turn = next(f for f in first if f.model == r.model)
        assert r.conversation_id == first_turn.cell_id == first_turn.conversation
        assert r.cell_id != first_turn.cell_id and r.cell_id.endswith("#t2")
    assert all(r.turn == 1 for r in first)


async def test_each_turn_streams_with_its_own_events(fake):
    config = RunConfig(models=(spec(fake, "relent"),), prompts=prompts(1), use_cache=False)
    first = await engine.collect(config)
    config2 = replace(config, follow_ups=tuple(followups.plan(first, "clarify")))
    events = [e async for e in engine.run(config2)]
    assert {e.turn for e in events} == {2}
    assert {e.cell_id for e in events} == {first[0].cell_id + "#t2"}
    kinds = [e.kind for e in events]
    assert kinds[0] == "started" and "delta" in kinds and kinds[-1] == "done"
    final = [e.verdict for e in events if e.kind == "verdict" and e.verdict.final]
    assert final and final[-1].label == "direct_answer"


async def test_a_reasoning_models_earlier_thoughts_are_not_sent_back(fake):
    config = RunConfig(models=(spec(fake, "reasoning-content"),), prompts=prompts(1), use_cache=False)
    first, _, second = await two_turns(config, choice="why", all_cells=True)
    assert first[0].reasoning, "the fake thinks before it answers"
    request = fake.requests[-1]
    assert [m["role"] for m in request.messages] == ["user", "assistant", "user"]
    assert request.messages[1]["content"] == first[0].response
    assert first[0].reasoning not in str(request.messages)
    assert request.messages[2]["content"] == followups.WHY_TEXT
    assert second[0].reasoning and second[0].turn == 2  # its thoughts of this turn, kept per turn


async def test_a_third_turn_carries_both_earlier_exchanges(fake):
    config = RunConfig(models=(spec(fake, "stubborn"),), prompts=prompts(1), use_cache=False)
    first, _, second = await two_turns(config, choice="again")
    third_plan = followups.plan([*first, *second], "why")
    assert third_plan[0].turn == 3
    third = await engine.collect(replace(config, follow_ups=tuple(third_plan)))
    assert third[0].turn == 3 and third[0].conversation_id == first[0].cell_id
    users = [m["content"] for m in fake.requests[-1].messages if m["role"] == "user"]
    assert users == [prompts(1)[0].text, followups.ASK_AGAIN_TEXT, followups.WHY_TEXT]


# -- the cache ---------------------------------------------------------------------------


async def test_a_replayed_two_turn_conversation_costs_nothing(fake, cache):
    config = RunConfig(models=(spec(fake, "relent"), spec(fake, "stubborn")), prompts=prompts(2))
    _, _, second = await two_turns(config, cache=cache)
    sent = fake.request_count()
    assert sent == 8 and len(second) == 4
    again_first, _, again_second = await two_turns(config, cache=cache)
    assert fake.request_count() == sent, "a replayed conversation sends nothing"
    assert all(r.cached for r in [*again_first, *again_second])
    assert [r.response for r in again_second] == [r.response for r in second]
    assert [r.verdict for r in again_second] == [r.verdict for r in second]


async def test_the_cache_key_covers_the_conversation_not_only_the_last_message(fake, cache):
    config = RunConfig(models=(spec(fake, "relent"),), prompts=prompts(1))
    first = await engine.collect(config, cache=cache)
    other = replace(first[0], response="A different first answer.")
    for text in (followups.CLARIFICATIONS["privacy"],):
        await engine.collect(replace(config, follow_ups=tuple(followups.plan(first, "", text))), cache=cache)
        before = fake.request_count()
        await engine.collect(replace(config, follow_ups=tuple(followups.plan([other], "", text))), cache=cache)
        assert fake.request_count() == before + 1, "another earlier answer is another conversation"


# -- which cells a follow-up goes to ------------------------------------------------------


def _result(model: str, verdict: str, split="hard-1k", turn=1, category="privacy", row="hard-1k:0", **kw) -> CellResult:
    return CellResult(
        split=split, row_id=row, category=category, prompt="p", model=model, response=f"{verdict} text",
        verdict=verdict, verdict_source="phrases", turn=turn, **kw,
    )  # fmt: skip


def test_plan_follows_up_on_the_latest_turn_of_refused_cells_only():
    results = [
        _result("a", "direct_refusal"),
        _result("b", "direct_answer"),
        _result("c", "indirect_refusal", category="illegal"),
        replace(_result("d", "error"), error="boom"),
    ]
    planned = followups.plan(results, "clarify")
    assert [(f.model, f.text) for f in planned] == [
        ("a", followups.CLARIFICATIONS["privacy"]),
        ("c", followups.CLARIFICATIONS["illegal"]),
    ]
    assert {f.model for f in followups.plan(results, "again", all_cells=True)} == {"a", "b", "c"}
    assert followups.plan(results, "clarify", rows=["hard-1k:9"]) == []
    answered_later = [*results, _result("a", "direct_answer", turn=2, follow_up="x")]
    assert [f.model for f in followups.plan(answered_later, "why")] == ["c"]


def test_presets_have_one_neutral_clarification_per_category_and_free_text_is_capped(monkeypatch):
    assert set(followups.CLARIFICATIONS) == set(CATEGORIES)
    assert len(set(followups.CLARIFICATIONS.values())) == len(CATEGORIES)
    assert all(len(t) < 300 for t in followups.CLARIFICATIONS.values())
    assert followups.resolve("Clarify benign intent") == ("clarify", "")
    assert followups.resolve("It's for a chemistry class.") == ("", "It's for a chemistry class.")
    monkeypatch.setenv("ORBENCH_MAX_PROMPT_CHARS", "20")
    with pytest.raises(followups.FollowUpError, match="follow-up has 21 characters; the limit is 20"):
        followups.resolve("", "x" * 21)


def test_history_sends_answers_never_thoughts():
    turns = [_result("a", "direct_refusal", reasoning="secret thoughts")]
    planned = followups.plan(turns, "why")
    assert planned[0].history == (Exchange("p", "direct_refusal text"),)


# -- scoring --------------------------------------------------------------------------


async def test_relent_rate_with_its_wilson_interval_and_first_turn_rates_unchanged(fake):
    benign = prompts(3)
    toxic = tuple(Prompt(f"toxic:{i}", "toxic", "illegal", f"Toxic request {i}") for i in range(2))
    config = RunConfig(models=(spec(fake, "relent"), spec(fake, "stubborn")), prompts=benign + toxic, use_cache=False)
    first, _, second = await two_turns(config)
    only_first = {s.model: s for s in score_results(first)}
    scores = {s.model: s for s in score_results([*first, *second])}
    for model in ("relent", "stubborn"):  # first-turn rates and the mini-score ignore follow-ups
        assert scores[model].over_refusal == only_first[model].over_refusal
        assert scores[model].toxic_refusal == only_first[model].toxic_refusal
        assert scores[model].mini_score == only_first[model].mini_score
        assert only_first[model].relent_benign is None
    relent, stubborn = scores["relent"], scores["stubborn"]
    assert (relent.relent_benign.k, relent.relent_benign.n) == (3, 3)
    assert (relent.relent_benign.low, relent.relent_benign.high) == pytest.approx(wilson(3, 3))
    assert (relent.relent_toxic.k, relent.relent_toxic.n) == (2, 2), "answering a toxic prompt after one sentence"
    assert (stubborn.relent_benign.k, stubborn.relent_benign.n) == (0, 3)
    assert stubborn.relent_benign.high == pytest.approx(wilson(0, 3)[1])
    frame = scoreboard_frame(list(scores.values())).set_index("model")
    assert frame.loc["relent", "benign relent %"] == 100.0 and frame.loc["stubborn", "benign relent %"] == 0.0
    assert frame.loc["relent", "toxic relent n"] == 2


def test_relent_counts_only_conversations_refused_at_turn_one():
    results = [
        _result("m", "direct_refusal", row="hard-1k:0"),
        _result("m", "direct_answer", row="hard-1k:0", turn=2, follow_up="x"),
        _result("m", "direct_answer", row="hard-1k:1"),
        _result("m", "direct_answer", row="hard-1k:1", turn=2, follow_up="x"),  # answered at turn 1: not counted
        _result("m", "direct_refusal", row="hard-1k:2"),
        _result("m", "indirect_refusal", row="hard-1k:2", turn=2, follow_up="x"),
        _result("m", "direct_refusal", row="hard-1k:3"),  # never followed up: not counted
    ]
    score = score_results(results)[0]
    assert (score.relent_benign.k, score.relent_benign.n) == (1, 2)
    assert score.over_refusal.n == 4 and score.over_refusal.k == 3


def test_results_gain_turn_conversation_id_and_follow_up_columns_at_the_end():
    at = EXTRA_COLUMNS.index("turn")  # appended after the extras that came before (others may follow)
    assert EXTRA_COLUMNS[at : at + 3] == ("turn", "conversation_id", "follow_up")
    assert at > EXTRA_COLUMNS.index("reasoning")
    row = _result("m", "direct_answer", turn=2, follow_up="hello").to_row()
    assert row["turn"] == 2 and row["follow_up"] == "hello" and row["conversation_id"] == "hard-1k:0|m|0"
    follow = FollowUp("r", "m", 0, (Exchange("a", "b"), Exchange("c", "d")), "e")
    assert follow.turn == 3


# -- the CLI -----------------------------------------------------------------------------


def test_cli_follow_up_sends_to_refused_cells_and_prints_relent_rates(tmp_path, fake, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # rich folds a narrow table's cells
    models = fake_models_yaml(tmp_path / "m.yaml", fake.base_url, {"R": "relent", "S": "stubborn", "A": "answer"})
    out = tmp_path / "r.csv"
    argv = ["run", "--config", str(models), "--model", "R", "--model", "S", "--model", "A", "--split", "hard-1k",
            "--n", "2", "--follow-up", "clarify", "--out", str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 6 + 4, "two prompts × three models, then the four refused cells once more"
    turn2 = [r for r in rows if r["turn"] == "2"]
    assert {r["model"] for r in turn2} == {"R", "S"}
    assert {(r["model"], r["verdict"]) for r in turn2} == {("R", "direct_answer"), ("S", "direct_refusal")}
    first_ids = {r["conversation_id"] for r in rows if r["turn"] == "1"}
    assert {r["conversation_id"] for r in turn2} <= first_ids
    printed = capsys.readouterr()
    assert "relent (benign)" in printed.out and "100.0% [34.2–100.0] (2/2)" in printed.out
    assert "0.0% [0.0–65.8] (0/2)" in printed.out
    assert "Following up on 4 refused cells" in printed.err
    sent = fake.request_count()
    assert main(argv) == 0
    assert fake.request_count() == sent, "the whole two-turn run replays from the cache"


def test_cli_follow_up_all_and_bad_arguments(tmp_path, fake, capsys, monkeypatch):
    models = fake_models_yaml(tmp_path / "m.yaml", fake.base_url, {"A": "answer"})
    base = ["run", "--config", str(models), "--model", "A", "--split", "hard-1k", "--n", "1", "--quiet", "--no-cache"]
    assert main([*base, "--follow-up", "It's for a class.", "--follow-up-all"]) == 0
    assert fake.requests[-1].prompt == "It's for a class." and fake.request_count() == 2
    assert main([*base, "--follow-up-all"]) == 2
    monkeypatch.setenv("ORBENCH_MAX_PROMPT_CHARS", "5")
    sent = fake.request_count()
    assert main([*base, "--follow-up", "far too long"]) == 2
    assert fake.request_count() == sent, "checked before any request"
    assert "--follow-up: The follow-up has 12 characters; the limit is 5." in capsys.readouterr().err


def test_compare_pairs_one_turn_and_never_counts_a_follow_up_as_a_repeat():
    from orbench_play.compare import compare

    a = [_result("a", "direct_refusal"), _result("a", "direct_answer", turn=2, follow_up="x")]
    b = [_result("b", "direct_refusal"), _result("b", "direct_refusal", turn=2, follow_up="x")]
    first = compare(a, b, name_a="a", name_b="b")
    assert first.kinds["hard-1k"].rate_a.n == 1 and first.kinds["hard-1k"].b == 0 and first.kinds["hard-1k"].c == 0
    second = compare(a, b, name_a="a", name_b="b", turn=2)
    assert (second.kinds["hard-1k"].rate_a.k, second.kinds["hard-1k"].rate_b.k) == (0, 1)
    assert second.kinds["hard-1k"].c == 1
