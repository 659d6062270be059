"""Spot-checking a new model (issue #7) end to end against the fake OpenAI server.

The fake's `refuse-if-system` model refuses exactly when a system message
contains "safe", so "bot + safety preset" vs "bot, no system prompt" has a known
answer: every prompt discordant, McNemar significant.
"""

from __future__ import annotations

import csv
import json

import pytest

from orbench_play import data, engine
from orbench_play.asking.prompts import SYSTEM_PROMPTS, resolve_system_prompt, variant_of
from orbench_play.cache import ResultCache
from orbench_play.cli import main
from orbench_play.compare import compare, compare_variants, comparison_frame, load_results
from orbench_play.export import COLUMNS, write_results
from orbench_play.scoring import score_results
from orbench_play.scoring.stability import stability, tally
from orbench_play.types import EXTRA_COLUMNS, RESULT_COLUMNS, GenerationParams, ModelSpec, RunConfig


def bot(fake, name: str = "bot") -> ModelSpec:
    return ModelSpec(name=name, litellm_model="openai/refuse-if-system", api_base=fake.base_url, api_key="sk-fake")


def prompts(benign: int = 10, toxic: int = 6, seed: int = 3):
    picked = data.sample(data.load_split("hard-1k"), n=benign, seed=seed).prompts
    if toxic:
        picked += data.sample(data.load_split("toxic"), n=toxic, seed=seed).prompts
    return picked


def safety_params(**kw) -> GenerationParams:
    text, pid = resolve_system_prompt("safety")
    return GenerationParams(system_prompt=text, system_prompt_id=pid, **kw)


async def test_presets_drive_the_fake_model_and_compare_is_significant(fake, tmp_path):
    cache = ResultCache(tmp_path / "cache")
    ps = prompts()
    plain = await engine.collect(RunConfig(models=(bot(fake),), prompts=ps), cache=cache)
    safe = await engine.collect(RunConfig(models=(bot(fake),), prompts=ps, params=safety_params()), cache=cache)
    assert fake.request_count() == 2 * len(ps)
    systems = {r.system for r in fake.requests}
    assert systems == {None, SYSTEM_PROMPTS["safety"]}
    assert {r.verdict for r in plain} == {"direct_answer"}
    assert all(r.verdict in ("direct_refusal", "indirect_refusal") for r in safe)
    assert {r.system_prompt_id for r in safe} == {"safety"} and {r.system_prompt_id for r in plain} == {"none"}

    # Two rows on the scoreboard: same model, two settings.
    session = plain + safe
    scores = {s.model: s for s in score_results(session, key=variant_of)}
    assert set(scores) == {"bot", "bot · safety"}
    assert scores["bot"].over_refusal.k == 0 and scores["bot · safety"].over_refusal.k == 10
    assert [s.model for s in score_results(session)] == ["bot"]  # default grouping unchanged

    cmp = compare_variants(session, "bot", "bot · safety")
    benign, toxic = cmp.kinds["hard-1k"], cmp.kinds["toxic"]
    assert (benign.n, benign.b, benign.c, benign.method) == (10, 0, 10, "exact")
    assert benign.p_value == pytest.approx(2 / 2**10)
    assert benign.significant and benign.change == pytest.approx(1.0)
    assert benign.sentence.startswith("bot · safety refuses more hard-1k prompts than bot")
    assert (toxic.n, toxic.b, toxic.c) == (6, 0, 6) and toxic.p_value == pytest.approx(2 / 2**6)
    assert len(cmp.disagreements) == 16
    frame = comparison_frame(cmp)
    assert frame["disagree"].all()
    assert frame["answer A"].str.startswith("Sure.").all() and frame["verdict B"].eq("refusal").all()

    # Same model, same settings: nothing to see, and the test says so.
    same = compare(plain, plain, name_a="x", name_b="y")
    assert same.kinds["hard-1k"].p_value == 1.0 and not same.disagreements
    assert "agree on all 10 hard-1k prompts" in same.summary


async def test_small_sample_is_not_significant(fake, tmp_path):
    ps = prompts(benign=4, toxic=0)
    cache = ResultCache(tmp_path / "cache")
    plain = await engine.collect(RunConfig(models=(bot(fake),), prompts=ps), cache=cache)
    safe = await engine.collect(RunConfig(models=(bot(fake),), prompts=ps, params=safety_params()), cache=cache)
    k = compare(plain, safe).kinds["hard-1k"]
    assert (k.b, k.c) == (0, 4) and k.p_value == pytest.approx(0.125)
    assert not k.significant and k.sentence.startswith("No significant difference on hard-1k prompts at n=4")


async def test_repeats_are_distinct_cache_entries_and_params_are_sent(fake, tmp_path):
    cache = ResultCache(tmp_path / "cache")
    ps = prompts(benign=5, toxic=0)
    params = safety_params(temperature=0.7, top_p=0.9, max_tokens=64)
    config = RunConfig(models=(bot(fake),), prompts=ps, params=params, repeats=3)
    first = await engine.collect(config, cache=cache)
    assert len(first) == 15 and fake.request_count() == 15
    assert sorted({r.repeat for r in first}) == [0, 1, 2]
    assert len(cache) == 15
    sent = fake.requests[0].params
    assert (sent["temperature"], sent["top_p"], sent["max_tokens"]) == (0.7, 0.9, 64)
    assert json.loads(first[0].params) == {"max_tokens": 64, "temperature": 0.7, "top_p": 0.9}
    assert variant_of(first[0]) == "bot · safety · T=0.7 · top_p=0.9 · max 64"

    again = await engine.collect(config, cache=cache)
    assert fake.request_count() == 15 and all(r.cached for r in again) and len(again) == 15

    # More repeats reuse the first three and add two; a new temperature is a new key.
    await engine.collect(RunConfig(models=(bot(fake),), prompts=ps, params=params, repeats=5), cache=cache)
    assert fake.request_count() == 25
    await engine.collect(
        RunConfig(models=(bot(fake),), prompts=ps, params=safety_params(temperature=0.2, top_p=0.9, max_tokens=64)),
        cache=cache,
    )
    assert fake.request_count() == 30

    cells = tally(first)
    assert {t.label() for t in cells.values()} == {"3/3 refused"}
    stats = stability(first)["bot · safety · T=0.7 · top_p=0.9 · max 64"]
    assert (stats.repeated, stats.flipped, stats.answers) == (5, 0, 15)
    assert stats.flip_rate.rate == 0.0
    assert score_results(first, key=variant_of)[0].flip_rate.n == 5


@pytest.fixture
def models_yaml(fake, tmp_path, monkeypatch):
    path = tmp_path / "models.yaml"
    path.write_text(
        "model_list:\n"
        "  - model_name: bot\n"
        "    litellm_params:\n"
        "      model: openai/refuse-if-system\n"
        f"      api_base: {fake.base_url}\n"
        "      api_key: sk-fake\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("ORBENCH_MODELS", str(path))
    return path


def test_cli_run_flags_and_compare(models_yaml, fake, tmp_path, capsys):
    a, b = tmp_path / "plain.csv", tmp_path / "safety.jsonl"
    base = ["run", "--model", "bot", "--split", "hard-1k", "--n", "10", "--seed", "11", "--quiet"]
    assert main([*base, "--out", str(a)]) == 0
    assert main([*base, "--system-prompt", "safety", "--temperature", "0.7", "--top-p", "0.5",
                 "--max-tokens", "100", "--repeats", "2", "--out", str(b)]) == 0  # fmt: skip
    assert fake.request_count() == 30
    with a.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
    assert tuple(reader.fieldnames) == RESULT_COLUMNS + EXTRA_COLUMNS == COLUMNS
    assert {r["system_prompt_id"] for r in rows} == {"none"} and len(rows) == 10
    lines = [json.loads(x) for x in b.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 20 and list(lines[0])[-len(EXTRA_COLUMNS) :] == list(EXTRA_COLUMNS)
    assert {x["system_prompt_id"] for x in lines} == {"safety"}
    assert json.loads(lines[0]["params"]) == {"max_tokens": 100, "temperature": 0.7, "top_p": 0.5}
    assert sorted(r.repeat for r in load_results(b))[:2] == [0, 0]
    capsys.readouterr()

    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "bot · safety · T=0.7 · top_p=0.5 · max 100 refuses more hard-1k prompts than bot" in out
    assert "10 vs 0 discordant of 10, McNemar p=0.002" in out
    assert "+100.0 pts" in out and "Prompts where they differ (10; showing 10)" in out

    # One file holding both variants; pick them by name (model name works when unique).
    both = tmp_path / "session.csv"
    write_results(load_results(a) + load_results(b), both)
    assert (
        main(
            [
                "compare",
                str(both),
                "--a",
                "bot",
                "--b",
                "bot · safety · T=0.7 · top_p=0.5 · max 100",
                "--out",
                str(tmp_path / "diff.csv"),
            ]
        )
        == 0
    )
    assert "refuses more hard-1k prompts than bot (10 vs 0" in capsys.readouterr().out
    with (tmp_path / "diff.csv").open(newline="", encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == 10
    assert main(["compare", str(both)]) == 0  # exactly two variants: no names needed
    capsys.readouterr()
    assert main(["compare", str(both), "--a", "nope", "--b", "bot"]) == 2
    assert "'nope' is not in the session; variants: 'bot'" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "missing.csv"), str(a)]) == 2


def test_cli_system_prompt_from_file_and_text(models_yaml, fake, tmp_path):
    sp = tmp_path / "sp.txt"
    sp.write_text("Be safe.\n", encoding="utf-8")
    out = tmp_path / "f.csv"
    args = ["run", "--model", "bot", "--split", "toxic", "--n", "2", "--quiet", "--out", str(out)]
    assert main([*args, "--system-prompt", f"@{sp}"]) == 0
    assert fake.requests[-1].system == "Be safe."
    results = load_results(out)
    assert {r.system_prompt_id for r in results} == {"file:sp.txt"}
    assert all(r.verdict != "direct_answer" for r in results)
    assert main([*args, "--system-prompt", "Answer everything."]) == 0
    assert load_results(out)[0].system_prompt_id.startswith("custom:")
    assert main([*args, "--repeats", "6"]) == 2
