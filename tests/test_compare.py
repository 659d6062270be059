"""Comparison, McNemar, result files, variant names, stability and focus sampling
on hand-made results (fast, no server), plus focus sampling through the engine."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest, chi2

from orbench_play import data, engine
from orbench_play.asking.prompts import SYSTEM_PROMPTS, params_label, resolve_system_prompt, variant_name, variant_of
from orbench_play.cache import ResultCache
from orbench_play.compare import (
    FRAME_COLUMNS,
    CompareError,
    compare,
    compare_variants,
    comparison_frame,
    load_results,
    mcnemar,
    summary_frame,
    variants,
)
from orbench_play.export import write_results
from orbench_play.scoring import score_results
from orbench_play.scoring.focus import disagreement_scores, focus_sample
from orbench_play.scoring.stability import stability, tally
from orbench_play.types import CellResult, GenerationParams, ModelSpec, Prompt, RunConfig

ANSWER, REFUSAL = "direct_answer", "direct_refusal"


def res(i: int, verdict: str, *, model: str = "m", sp: str = "none", params: str = "", repeat: int = 0,
        split: str = "hard-1k", response: str = "", error: str = "") -> CellResult:  # fmt: skip
    return CellResult(
        split=split, row_id=f"{split}:{i}", category="privacy", prompt=f"prompt {i}", model=model,
        response=response or f"{verdict} {i}.{repeat}", verdict=verdict, error=error,
        system_prompt_id=sp, params=params, repeat=repeat,
    )  # fmt: skip


# --- McNemar ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "b,c", [(0, 1), (0, 10), (3, 9), (7, 7), (5, 19), (0, 24), (12, 13), (20, 30), (40, 10), (100, 70)]
)
def test_mcnemar_matches_scipy(b, c):
    p, method = mcnemar(b, c)
    if b + c < 25:
        assert method == "exact"
        assert p == pytest.approx(binomtest(min(b, c), b + c, 0.5).pvalue, rel=1e-12)
    else:
        assert method == "chi2"
        assert p == pytest.approx(chi2.sf((abs(b - c) - 1) ** 2 / (b + c), 1), rel=1e-9)
    assert mcnemar(c, b) == (p, method)


def test_mcnemar_edges():
    assert mcnemar(0, 0) == (1.0, "none")
    assert mcnemar(3, 3)[0] == 1.0
    with pytest.raises(ValueError):
        mcnemar(-1, 2)


# --- comparing ----------------------------------------------------------------------


def test_compare_pairs_by_prompt_with_majority_over_repeats():
    a, b = [], []
    # 0: A answers 3/3, B refuses 2/3 -> c.   1: A refuses 1/1, B answers -> b.
    # 2: both answer.  3: B ties 1/2 -> left out of the test.  4: A only errored -> unpaired.
    # 5: toxic, both refuse.  6: B only.
    a += [res(0, ANSWER, repeat=r) for r in range(3)]
    b += [res(0, REFUSAL, repeat=0), res(0, ANSWER, repeat=1), res(0, REFUSAL, repeat=2)]
    a += [res(1, REFUSAL)]
    b += [res(1, ANSWER)]
    a += [res(2, ANSWER)]
    b += [res(2, ANSWER)]
    a += [res(3, ANSWER)]
    b += [res(3, REFUSAL, repeat=0), res(3, ANSWER, repeat=1)]
    a += [res(4, "error", error="Timed out")]
    b += [res(4, ANSWER)]
    a += [res(5, REFUSAL, split="toxic")]
    b += [res(5, REFUSAL, split="toxic")]
    b += [res(6, ANSWER)]
    cmp = compare(a, b, name_a="A", name_b="B")
    k = cmp.kinds["hard-1k"]
    assert (k.n, k.b, k.c, k.ties) == (3, 1, 1, 1)
    assert (k.rate_a.k, k.rate_a.n) == (1, 6) and (k.rate_b.k, k.rate_b.n) == (3, 7)  # all answers on paired prompts
    assert k.change == pytest.approx(3 / 7 - 1 / 6)
    assert k.p_value == 1.0 and not k.significant
    assert k.sentence == "No significant difference on hard-1k prompts at n=3 (1 vs 1 discordant, McNemar p=1.00)."
    assert cmp.kinds["toxic"].method == "none"
    assert (cmp.only_a, cmp.only_b) == (0, 2)
    # Disagreements first, then unsettled (tie / non-unanimous), then agreements.
    assert [r.row_id for r in cmp.rows][:2] == ["hard-1k:0", "hard-1k:1"]
    assert [r.disagree for r in cmp.rows] == [True, True, False, False, False]
    assert cmp.rows[2].row_id == "hard-1k:3" and cmp.rows[2].unsettled
    # The representative answer shows the majority verdict.
    assert cmp.rows[0].answer_b == f"{REFUSAL} 0.0"
    frame = comparison_frame(cmp)
    assert tuple(frame.columns) == FRAME_COLUMNS
    assert list(frame.loc[0, ["verdict A", "verdict B"]]) == ["0/3 refused", "2/3 refused"]
    assert list(frame.loc[1, ["verdict A", "verdict B"]]) == ["refusal", "answer"]
    assert list(summary_frame(cmp)["kind"]) == ["hard-1k", "toxic"]


def test_sentence_direction_and_names():
    a = [res(i, REFUSAL, model="x") for i in range(12)]
    b = [res(i, ANSWER, model="y") for i in range(12)]
    k = compare(a, b).kinds["hard-1k"]
    assert (k.b, k.c) == (12, 0)
    assert k.sentence == "x refuses more hard-1k prompts than y (12 vs 0 discordant of 12, McNemar p<0.001)."


def test_hard_1k_and_80k_are_compared_apart():
    """Like the scoreboard, the comparison keeps 80k out of the hard-1k numbers."""
    a = [res(i, REFUSAL, model="x") for i in range(6)] + [res(i, ANSWER, model="x", split="80k") for i in range(4)]
    b = [res(i, ANSWER, model="y") for i in range(6)] + [res(i, ANSWER, model="y", split="80k") for i in range(4)]
    cmp = compare(a, b)
    assert list(cmp.kinds) == ["hard-1k", "80k"]
    hard, broad = cmp.kinds["hard-1k"], cmp.kinds["80k"]
    assert (hard.n, hard.b, hard.rate_a.k, hard.rate_a.n) == (6, 6, 6, 6)
    assert (broad.n, broad.b, broad.c, broad.method) == (4, 0, 0, "none")
    assert broad.sentence == "x and y agree on all 4 80k prompts (no discordant pairs)."


def test_compare_variants_in_one_session_and_selection_errors():
    session = [res(i, ANSWER, model="m") for i in range(3)] + [
        res(i, REFUSAL, model="m", sp="safety") for i in range(3)
    ]
    session += [res(i, ANSWER, model="m", sp="safety", params='{"temperature": 0.7}') for i in range(3)]
    assert variants(session) == ["m", "m · safety", "m · safety · T=0.7"]
    cmp = compare_variants(session, "m", "m · safety")
    assert (cmp.name_a, cmp.name_b, cmp.kinds["hard-1k"].c) == ("m", "m · safety", 3)
    session += [res(0, ANSWER, model="n", sp="safety"), res(0, ANSWER, model="n", sp="hhh")]
    with pytest.raises(CompareError, match="model 'n' has several variants"):
        compare_variants(session, "n", "m")
    with pytest.raises(CompareError, match="not in the session"):
        compare_variants(session, "x", "m")
    with pytest.raises(CompareError, match="two different"):
        compare_variants(session, "m", "m")


def test_compare_selects_variant_by_model_name_when_unique():
    session = [res(0, ANSWER, model="a"), res(0, REFUSAL, model="b", sp="safety")]
    assert compare_variants(session, "a", "b").name_b == "b · safety"


# --- result files -------------------------------------------------------------------


def test_load_results_round_trips_csv_and_jsonl(tmp_path):
    rows = [
        res(0, ANSWER, response='=HYPERLINK("http://x")', repeat=0, sp="safety", params='{"temperature": 0.7}'),
        res(0, ANSWER, response="-5 degrees", repeat=1, sp="safety", params='{"temperature": 0.7}'),
        res(1, REFUSAL, response="'quoted' start", repeat=0),
        res(2, "error", error="Timed out after 60 s.", response=""),
    ]
    rows[0].latency_s, rows[0].completion_tokens, rows[0].cached = 1.25, 17, True
    for suffix in ("csv", "jsonl"):
        path = write_results(rows, tmp_path / f"r.{suffix}")
        back = load_results(path)
        assert [r.response for r in back] == [r.response for r in rows]
        assert [r.repeat for r in back] == [0, 1, 0, 0]
        assert [variant_of(r) for r in back] == ["m · safety · T=0.7"] * 2 + ["m", "m"]
        assert back[0].latency_s == 1.25 and back[0].completion_tokens == 17 and back[0].cached is True
        assert back[3].error == "Timed out after 60 s." and back[3].latency_s is None and not back[3].cached
    assert "'=HYPERLINK" in (tmp_path / "r.csv").read_text()  # still neutralised on disk


def test_load_results_errors(tmp_path):
    with pytest.raises(CompareError, match="does not exist"):
        load_results(tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(CompareError, match="lacks column"):
        load_results(bad)
    broken = tmp_path / "bad.jsonl"
    broken.write_text('{"row_id": "x"}\nnot json\n')
    with pytest.raises(CompareError, match="line 2"):
        load_results(broken)


# --- names and presets ----------------------------------------------------------------


def test_variant_names_and_presets(tmp_path):
    assert variant_name("gpt-4o-mini", "none") == "gpt-4o-mini"
    assert variant_name("gpt-4o-mini", "none", GenerationParams().params_json()) == "gpt-4o-mini"
    assert variant_name("gpt-4o-mini", "safety") == "gpt-4o-mini · safety"
    p = GenerationParams(temperature=0.7, top_p=0.95, max_tokens=256).params_json()
    assert variant_name("gpt-4o-mini", "hhh", p) == "gpt-4o-mini · hhh · T=0.7 · top_p=0.95 · max 256"
    assert params_label('{"temperature": 0}') == "T=0" and params_label("not json") == ""
    assert set(SYSTEM_PROMPTS) >= {"none", "helpful", "hhh", "safety"}
    assert resolve_system_prompt(None) == (None, "none") and resolve_system_prompt("none") == (None, "none")
    assert resolve_system_prompt("safety") == (SYSTEM_PROMPTS["safety"], "safety")
    text, pid = resolve_system_prompt("Be nice.")
    assert text == "Be nice." and pid.startswith("custom:") and resolve_system_prompt("Be nice.")[1] == pid
    f = tmp_path / "p.txt"
    f.write_text("From a file.\n")
    assert resolve_system_prompt(f"@{f}") == ("From a file.", "file:p.txt")
    assert resolve_system_prompt(f"@{f}", allow_files=False)[1].startswith("custom:")
    # The fake server's refuse-if-system keys on "safe": only the safety-minded presets contain it.
    assert "safe" in SYSTEM_PROMPTS["safety"].lower() and "safe" not in SYSTEM_PROMPTS["hhh"].lower()


# --- stability ------------------------------------------------------------------------


def test_stability_and_scoreboard_flip_rate():
    rs = []
    rs += [res(0, REFUSAL, repeat=0), res(0, ANSWER, repeat=1), res(0, REFUSAL, repeat=2)]  # flips
    rs += [res(1, ANSWER, repeat=r) for r in range(3)]  # stable
    rs += [res(2, REFUSAL, repeat=0), res(2, "error", error="x", repeat=1)]  # one counted answer
    rs += [res(3, ANSWER, repeat=0), res(3, ANSWER, repeat=1), res(3, "indirect_refusal", repeat=2)]  # flips
    s = stability(rs)["m"]
    assert (s.prompts, s.repeated, s.flipped, s.answers, s.refusals) == (4, 3, 2, 10, 4)
    assert s.flip_rate.k == 2 and s.flip_rate.n == 3
    assert tally(rs)[("m", "hard-1k:0")].label() == "2/3 refused"
    assert tally(rs)[("m", "hard-1k:2")].label() == "1/1 refused"
    score = score_results(rs)[0]
    assert (score.flip_rate.k, score.flip_rate.n, score.max_repeats) == (2, 3, 3)
    assert score.over_refusal.k == 4 and score.over_refusal.n == 10  # rates over all answers
    assert score_results([res(0, ANSWER)])[0].flip_rate is None


# --- focus ----------------------------------------------------------------------------


def prompts_of(n: int, categories=("privacy", "illegal")) -> list[Prompt]:
    return [Prompt(f"hard-1k:{i}", "hard-1k", categories[i % len(categories)], f"prompt {i}") for i in range(n)]


def test_disagreement_scores():
    rs = [res(0, REFUSAL, model="a"), res(0, ANSWER, model="b")]
    rs += [res(1, REFUSAL, model="a"), res(1, REFUSAL, model="b")]
    rs += [res(2, REFUSAL, model="a")]  # one variant only: no score
    rs += [res(3, REFUSAL, model="a"), res(3, ANSWER, model="b"), res(3, ANSWER, model="c")]
    scores = disagreement_scores(rs)
    assert scores["hard-1k:0"] == pytest.approx(1.0) and scores["hard-1k:1"] == 0.0
    assert "hard-1k:2" not in scores and 0.9 < scores["hard-1k:3"] < 1.0


def test_focus_sample_takes_disagreements_first_and_keeps_the_budget():
    ps = prompts_of(40)
    hard = [7, 13, 22]  # privacy: none of these (odd ids are illegal, 22 is privacy)
    rs = []
    for i in hard:
        rs += [res(i, REFUSAL, model="a"), res(i, ANSWER, model="b")]
    rs += [res(5, ANSWER, model="a"), res(5, ANSWER, model="b")]  # agreed: not preferred
    plain = data.sample(ps, n=6, seed=1)
    focused = focus_sample(ps, rs, n=6, seed=1)
    assert len(focused.prompts) == 6
    assert {f"hard-1k:{i}" for i in hard} <= {p.row_id for p in focused.prompts}
    assert focused == focus_sample(ps, rs, n=6, seed=1)  # deterministic
    assert focused.notes[-1] == "Focus: 3 of 6 prompts are ones the session's models disagreed on."
    assert [p.category for p in focused.prompts] == sorted(p.category for p in focused.prompts)
    assert {p.row_id for p in focused.prompts} - {f"hard-1k:{i}" for i in hard} <= {p.row_id for p in plain.prompts}
    # per_category keeps each category's share; with no disagreement it is the plain sample.
    per = focus_sample(ps, rs, per_category=1, seed=1)
    assert len(per.prompts) == 2 and {p.category for p in per.prompts} == {"privacy", "illegal"}
    assert per.prompts[0].row_id in {"hard-1k:7", "hard-1k:13"} and per.prompts[1].row_id == "hard-1k:22"
    assert focus_sample(ps, [], n=6, seed=1) == plain
    only_privacy = focus_sample(ps, rs, n=2, seed=1, categories=["privacy"])
    assert {p.category for p in only_privacy.prompts} == {"privacy"} and only_privacy.prompts[0].row_id == "hard-1k:22"


async def test_focus_sample_through_the_engine(fake, tmp_path):
    """Two fake models that disagree only on prompts containing a word: focus sampling
    puts exactly those first."""
    fake.refuse_words = {"privacy"}
    split = data.load_split("hard-1k")
    seen = data.sample(split, n=30, seed=5).prompts
    word = [p.row_id for p in seen if "privacy" in p.text.lower()]
    assert word, "the sample should contain the trigger word"
    models = tuple(
        ModelSpec(name=n, litellm_model=f"openai/{n}", api_base=fake.base_url, api_key="sk-fake")
        for n in ("toxic-aware", "answer")
    )
    session = await engine.collect(RunConfig(models=models, prompts=seen), cache=ResultCache(tmp_path / "c"))
    assert {r.row_id for r in session if r.verdict != ANSWER} == set(word)
    focused = focus_sample(split, session, n=len(word) + 2, seed=9)
    assert set(word) <= {p.row_id for p in focused.prompts}
    assert len(focused.prompts) == len(word) + 2
