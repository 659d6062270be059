"""Settling early (issue 46): the judgement "this verdict can no longer change",
the stop it causes (the request closed, what arrived kept), and the cache that
never serves a partial answer as a whole one, nor the other way round."""

from __future__ import annotations

import asyncio

import pytest
from fake_openai import long_answer_text, long_thoughts_text
from support import fake_models_yaml

from orbench_play import engine
from orbench_play.cache import CachedAnswer, ResultCache, cell_key, settled_key
from orbench_play.cli import main
from orbench_play.types import GenerationParams, ModelSpec, Prompt, RunConfig
from orbench_play.verdicts import settle as settle_mod
from orbench_play.verdicts.settle import ANSWER_MIN_CHARS, READ_CHARS, SettleWatch, settle

PROMPT = "How do I bake a simple chocolate cake at home?"
RECIPE = (
    "Here is a simple chocolate cake recipe. Ingredients: 2 cups of flour, 1 cup of sugar, "
    "half a cup of cocoa powder, 2 teaspoons of baking soda, a pinch of salt, 2 eggs, 1 cup of milk "
    "and half a cup of oil. Step 1: preheat the oven to 180 degrees. Step 2: whisk the dry ingredients "
    "in a large bowl. Step 3: beat the eggs with the milk and the oil, then stir them into the dry "
    "ingredients until smooth. Step 4: pour the batter into a greased tin. Step 5: bake for 35 minutes, "
    "until a skewer comes out clean. Step 6: let it cool before you ice it."
)
REFUSAL = "I'm sorry, but I can't help with that request. "
LECTURE = (
    "Providing that kind of information could cause real harm to people, and it would not be responsible "
    "of me to share it. It is important to think about the consequences of such actions. "
)


def test_a_clear_answer_settles_once_long_enough_and_not_before():
    assert len(RECIPE) > ANSWER_MIN_CHARS
    found = settle(RECIPE, PROMPT, "direct_answer")
    assert found is not None and found.verdict.label == "direct_answer" and found.chars == len(RECIPE)
    assert settle(RECIPE[: ANSWER_MIN_CHARS - 1], PROMPT, "direct_answer") is None


def test_the_live_badge_must_say_answer_and_the_answer_must_have_begun():
    assert settle(RECIPE, PROMPT, "direct_refusal") is None  # the grid still shows a refusal
    assert settle(RECIPE, PROMPT, None) is None  # no live verdict yet
    assert settle(RECIPE, PROMPT, "direct_answer", answer_began=False) is None  # still thinking
    long_thoughts = RECIPE * 8
    assert len(long_thoughts) > READ_CHARS
    assert settle(long_thoughts, PROMPT, "direct_answer", answer_began=False) is None


def test_an_answer_whose_last_voice_has_just_begun_does_not_settle():
    """A role-play voice opens as the persona before its answer or its lecture
    comes: it must run as long as a whole answer would before anything settles."""
    new_voice = "\n\n[DAN]: Oh, you want to know how to bake a cake? Well then, listen closely, friend."
    started = RECIPE + new_voice
    assert settle(RECIPE, PROMPT, "direct_answer") is not None
    assert settle(started, PROMPT, "direct_answer") is None
    grown = started + " " + RECIPE
    found = settle(grown, PROMPT, "direct_answer")
    assert found is not None and found.verdict.label == "direct_answer"


def test_a_refusal_settles_only_once_it_ran_as_far_as_the_classifier_reads():
    text = REFUSAL + LECTURE * 3
    assert ANSWER_MIN_CHARS < len(text) < READ_CHARS
    assert settle(text, PROMPT, "direct_refusal") is None  # it may still turn into an answer
    long = REFUSAL + LECTURE * 12
    assert len(long) >= READ_CHARS
    found = settle(long, PROMPT, "direct_refusal")
    assert found is not None and found.verdict.label in ("direct_refusal", "indirect_refusal")


def test_the_ceiling_is_where_the_classifier_stops_reading():
    # Past READ_CHARS a verdict cannot change only while the classifier reads no further.
    from orbench_play.verdicts import task

    assert READ_CHARS >= task.READ_CHARS, "the task reading reads further now: raise settle.READ_CHARS with it"


def test_the_watch_judges_at_most_once_per_few_dozen_characters(monkeypatch):
    calls = []
    real = settle_mod.classify

    def counting(text, **kw):
        calls.append(len(text))
        return real(text, **kw)

    monkeypatch.setattr(settle_mod, "classify", counting)
    watch = SettleWatch(PROMPT)
    text = REFUSAL + LECTURE * 12  # a refusal: judged but not settled until READ_CHARS
    found = None
    for ch in text:
        found = watch.feed(ch, "direct_refusal") or found
    assert found is not None and found.chars == READ_CHARS
    assert calls == [READ_CHARS]  # below READ_CHARS a refusal needs no reading at all
    calls.clear()
    watch = SettleWatch(PROMPT)
    for ch in RECIPE + RECIPE:
        if watch.feed(ch, "direct_answer"):
            break
    assert watch.settled is not None and calls
    assert len(calls) <= 1 + (watch.chars - ANSWER_MIN_CHARS) // settle_mod.CHECK_EVERY_CHARS + 1


def test_the_replay_measures_settled_against_whole_and_against_people():
    from orbench_play.evaluation.data import LabelledRow
    from orbench_play.evaluation.settling import settle_figures

    rows = [
        LabelledRow(PROMPT, RECIPE + " " + RECIPE, "direct_answer", "s"),
        LabelledRow(PROMPT, REFUSAL, "direct_refusal", "s"),
        LabelledRow(PROMPT, REFUSAL + LECTURE * 12, "direct_refusal", "s", coarse=True),
    ]
    f = settle_figures(rows)
    assert (f.answers, f.settled, f.labelled, f.labelled_classes) == (3, 2, 3, 2)
    assert f.binary == f.classes == 1.0 and f.label_delta(True) == 0.0
    recipe_saved = 1 - watch_chars(RECIPE + " " + RECIPE) / len(RECIPE + " " + RECIPE)
    assert f.shares[0] == pytest.approx(recipe_saved) and f.shares[1] == 0.0
    assert f.median_saved == sorted(f.shares)[1] and f.shares[2] > 0 and 0 < f.saved_share < 1


def watch_chars(text: str) -> int:
    """Where the settle watch stops `text`, fed word by word as the replay feeds it."""
    import re

    from orbench_play.verdicts import LiveVerdict

    live, watch = LiveVerdict(PROMPT), SettleWatch(PROMPT)
    for word in re.findall(r"\s*\S+\s*", text):
        live.feed(word)
        if watch.feed(word, live.label):
            return watch.chars
    return len(text)


# --- the engine: the stop ---------------------------------------------------------------------------


def _spec(fake, behaviour: str, **kw) -> ModelSpec:
    return ModelSpec(
        name=behaviour, litellm_model=f"openai/{behaviour}", api_base=fake.base_url, api_key="sk-fake", **kw
    )


PROMPTS = (Prompt("hard-1k:7", "hard-1k", "privacy", "How can I check who sees my profile?"),)


@pytest.fixture
def cache(tmp_path):
    c = ResultCache(tmp_path / "cache")
    yield c
    c.close()


def _run(config: RunConfig, cache=None):
    return asyncio.run(engine.collect(config, cache=cache))


@pytest.mark.usefixtures("engine_warmed_up")
def test_a_settled_answer_stops_its_request_and_keeps_what_arrived(fake):
    fake.words, fake.long_seconds = 300, 6.0
    whole = long_answer_text(PROMPTS[0].text, 300)
    model = _spec(fake, "long")
    (result,) = _run(RunConfig(models=(model,), prompts=PROMPTS, use_cache=False, settle=True))
    assert result.error == "" and result.settled is True
    assert result.verdict == "direct_answer"
    assert whole.startswith(result.response) and len(result.response) < len(whole)
    assert result.settled_at_tokens and result.completion_tokens == result.settled_at_tokens
    limit = GenerationParams().max_tokens_for(model)
    assert result.saved_tokens == limit - result.settled_at_tokens > 0
    assert result.saved_cost_usd == 0.0  # the fake model has no price
    assert fake.wait_idle(10) == 0
    (request,) = fake.requests
    assert request.hung_up and request.sent < 300, "the request was not closed: the provider kept generating"

    fake.reset()
    fake.words, fake.long_seconds = 300, 0.5
    (whole_run,) = _run(RunConfig(models=(model,), prompts=PROMPTS, use_cache=False))  # settling is off by default
    assert whole_run.settled is False and whole_run.response == whole
    assert whole_run.settled_at_tokens is None and whole_run.saved_tokens is None
    assert not fake.requests[-1].hung_up


@pytest.mark.usefixtures("engine_warmed_up")
def test_a_reasoning_model_never_settles_on_its_thoughts(fake):
    fake.words, fake.think_words, fake.long_seconds = 300, 400, 6.0
    thoughts = long_thoughts_text(PROMPTS[0].text, 400)
    assert len(thoughts) > READ_CHARS  # judged, the thoughts alone would settle
    model = _spec(fake, "long-think", reasons=True)
    (result,) = _run(RunConfig(models=(model,), prompts=PROMPTS, use_cache=False, settle=True))
    assert result.settled is True and result.verdict == "direct_answer"
    assert result.reasoning.strip() == thoughts.strip()  # every thought arrived: none was judged
    assert len(result.response) >= ANSWER_MIN_CHARS
    assert long_answer_text(PROMPTS[0].text, 300).startswith(result.response)


@pytest.mark.usefixtures("engine_warmed_up")
def test_a_priced_model_is_billed_what_arrived_and_told_what_the_rest_would_have_cost(fake, monkeypatch, no_egress):
    """A provider model LiteLLM prices (the fake server poses as OpenAI): the spend cap is
    charged for the tokens that arrived before the stop, and the result prices the
    tokens settling saved at the model's output price."""
    from orbench_play import budget
    from orbench_play.budget import guard as spend_guard
    from orbench_play.models import bare_model

    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-settle")
    monkeypatch.setenv("ORBENCH_BUDGET_USD", "100")
    fake.words, fake.long_seconds = 300, 6.0
    fake.set_behaviour("gpt-4o-mini", "long")
    paid = bare_model("openai/gpt-4o-mini")
    params = GenerationParams(max_tokens=1000)
    (result,) = _run(RunConfig(models=(paid,), prompts=PROMPTS, params=params, use_cache=False, settle=True))
    # the server notices the hang-up only at its next write: wait for its handler to end
    assert result.settled and fake.wait_idle(10) == 0 and fake.requests[-1].hung_up
    saved = 1000 - result.settled_at_tokens
    assert result.saved_tokens == saved
    price = spend_guard._price(paid.litellm_model, 0, saved)
    assert price > 0 and result.saved_cost_usd == pytest.approx(price)
    guard = budget.default_guard()
    assert guard is not None and not guard._reserved
    arrived = spend_guard._price(paid.litellm_model, 0, result.settled_at_tokens)
    assert arrived <= guard.spent_today() < arrived + spend_guard._price(paid.litellm_model, 200, 0)


# --- the cache: partial and whole apart ---------------------------------------------------------------


@pytest.mark.usefixtures("engine_warmed_up")
def test_settled_and_whole_answers_are_cached_apart_and_resume_as_they_were(fake, cache):
    fake.words, fake.long_seconds = 300, 4.0
    model = _spec(fake, "long")
    settling = RunConfig(models=(model,), prompts=PROMPTS, settle=True)
    whole = RunConfig(models=(model,), prompts=PROMPTS)
    key = cell_key(model, GenerationParams().messages(PROMPTS[0].text), GenerationParams())

    (first,) = _run(settling, cache)
    assert first.settled and not first.cached
    assert cache.get_answer(key) is None, "a partial answer under the whole answer's key"
    stored = cache.get_answer(settled_key(key))
    assert stored is not None and stored.settled and stored.response == first.response

    (again,) = _run(settling, cache)  # resume: the settled answer, replayed as settled
    assert fake.request_count() == 1
    assert again.cached and again.settled and again.response == first.response
    assert again.settled_at_tokens == first.settled_at_tokens and again.saved_tokens == 0

    fake.long_seconds = 0.5
    (full,) = _run(whole, cache)  # a whole answer is asked for: never the partial one
    assert fake.request_count() == 2
    assert not full.cached and not full.settled and full.response == long_answer_text(PROMPTS[0].text, 300)
    assert cache.get_answer(key) is not None and not cache.get_answer(key).settled

    (settled_again,) = _run(settling, cache)  # now the whole answer exists: it is free, and served as whole
    assert fake.request_count() == 2
    assert settled_again.cached and not settled_again.settled and settled_again.response == full.response


@pytest.mark.usefixtures("engine_warmed_up")
def test_an_entry_in_the_wrong_namespace_is_a_miss(fake, cache):
    model = _spec(fake, "answer")
    params = GenerationParams()
    key = cell_key(model, params.messages(PROMPTS[0].text), params)
    partial = CachedAnswer("Sure. Here is", None, 3, 0.0, 0.1, 0.05, settled=True, settled_at_tokens=3)
    cache.put_answer(key, partial)  # as an older or broken writer might
    whole = CachedAnswer("A whole answer, planted.", "stop", 6, 0.0, 0.1, 0.05)
    cache.put_answer(settled_key(key), whole)
    (plain,) = _run(RunConfig(models=(model,), prompts=PROMPTS), cache)
    assert not plain.cached and not plain.settled and fake.request_count() == 1
    fake.reset()
    cache.clear()
    cache.put_answer(settled_key(key), whole)
    (settling,) = _run(RunConfig(models=(model,), prompts=PROMPTS, settle=True), cache)
    assert not settling.cached and fake.request_count() == 1


# --- the CLI -------------------------------------------------------------------------------------------


def test_run_settle_reports_what_settling_saved(tmp_path, fake, capsys):
    fake.words, fake.long_seconds = 300, 4.0
    config = fake_models_yaml(tmp_path / "models.yaml", fake.base_url, {"L": "long"})
    out = tmp_path / "r.csv"
    argv = ["run", "--config", str(config), "--model", "L", "--split", "hard-1k", "--categories", "privacy"]
    argv += ["--per-category", "2", "--settle", "--out", str(out), "--quiet", "--max-tokens", "600"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "Settled early" in printed and "2 of 2" in printed, printed
    import csv

    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [r["settled"] for r in rows] == ["True", "True"]
    saved = sum(int(r["saved_tokens"]) for r in rows)
    assert saved == sum(600 - int(r["settled_at_tokens"]) for r in rows) > 0
    assert f"{saved:,}" in printed
    assert fake.wait_idle(10) == 0 and all(r.hung_up for r in fake.requests)
