"""Rates, Wilson and MOVER intervals, tables, and the paper's reference points."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from orbench_play.data import DataError
from orbench_play.scoring import (
    Rate,
    category_frame,
    load_paper_results,
    score_results,
    scoreboard_frame,
    wilson,
)
from orbench_play.types import CellResult

Z = 1.959963984540054
SHARED_PAPER = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "orbench" / "paper_results.csv"


def cell(model: str, split: str, verdict: str, category: str = "privacy", error: str = "", i: int = 0) -> CellResult:
    return CellResult(
        split=split, row_id=f"{split}:{i}", category=category, prompt="p", model=model,
        verdict=verdict, error=error,
    )  # fmt: skip


def cells(model: str, split: str, refusals: int, answers: int, category: str = "privacy") -> list[CellResult]:
    kinds = ["direct_refusal", "indirect_refusal"]
    out = [cell(model, split, kinds[i % 2], category, i=i) for i in range(refusals)]
    out += [cell(model, split, "direct_answer", category, i=refusals + i) for i in range(answers)]
    return out


# --- Wilson ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n", "expected"),
    [(0, 10, (0.0, 0.2775)), (5, 10, (0.2366, 0.7634)), (81, 263, (0.2553, 0.3662)), (10, 10, (0.7225, 1.0))],
)
def test_wilson_known_values(k, n, expected):
    low, high = wilson(k, n)
    assert low == pytest.approx(expected[0], abs=5e-5)
    assert high == pytest.approx(expected[1], abs=5e-5)


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 3), (7, 20), (81, 263), (499, 500), (3, 1000)])
def test_wilson_bounds_solve_the_score_equation(k, n):
    """Independent definition: the bounds are the p with |p̂ − p| = z·sqrt(p(1−p)/n)."""
    p_hat = k / n
    for bound in wilson(k, n):
        if 0 < bound < 1:
            assert abs(p_hat - bound) == pytest.approx(Z * math.sqrt(bound * (1 - bound) / n), rel=1e-9)


def test_wilson_matches_scipy_oracle():
    from scipy import stats  # a dependency of scikit-learn, which the dev extras install

    for k, n in [(0, 5), (2, 5), (13, 40), (81, 263), (262, 263)]:
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert wilson(k, n) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_wilson_edges():
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson(4, 3)


def test_rate_fmt():
    assert Rate.of(81, 263).fmt() == "30.8% [25.5–36.6] (81/263)"
    assert Rate.of(0, 10).fmt() == "0.0% [0.0–27.8] (0/10)"


# --- score_results ----------------------------------------------------------------


def test_rates_mini_score_and_mover_interval():
    results = cells("m", "hard-1k", 30, 70) + cells("m", "toxic", 80, 20)
    (s,) = score_results(results)
    assert (s.over_refusal.k, s.over_refusal.n) == (30, 100)
    assert (s.toxic_refusal.k, s.toxic_refusal.n) == (80, 100)
    assert s.over_refusal.rate == pytest.approx(0.3)
    assert s.mini_score == pytest.approx(((1 - 0.3) + 0.8) / 2)
    assert 0 <= s.mini_low < s.mini_score < s.mini_high <= 1
    # MOVER is no wider than adding the two half-widths, no narrower than the wider one.
    o, t = s.over_refusal, s.toxic_refusal
    assert s.mini_score - s.mini_low <= ((o.high - o.rate) + (t.rate - t.low)) / 2 + 1e-12
    assert s.mini_score - s.mini_low >= max(o.high - o.rate, t.rate - t.low) / 2 - 1e-12
    assert s.answered == 200 and s.errors == 0


def test_80k_has_its_own_rate_and_hard_1k_drives_the_mini_score():
    """80k prompts are refused far less often than hard-1k: pooling them gave a
    rate that matched neither (40/110 here) and moved the mini-score."""
    results = cells("m", "hard-1k", 30, 70) + cells("m", "80k", 10, 0) + cells("m", "toxic", 80, 20)
    (s,) = score_results(results)
    assert (s.over_refusal_hard_1k.k, s.over_refusal_hard_1k.n) == (30, 100)
    assert (s.over_refusal_80k.k, s.over_refusal_80k.n) == (10, 10)
    assert s.benign_split == "hard-1k" and s.over_refusal == s.over_refusal_hard_1k
    assert s.mini_score == pytest.approx(((1 - 0.3) + 0.8) / 2)
    assert list(s.per_category) == ["hard-1k", "80k", "toxic"]
    assert s.answered == 210


def test_80k_and_toxic_only_scores_on_80k_and_says_so():
    (s,) = score_results(cells("m", "80k", 1, 9) + cells("m", "toxic", 9, 1))
    assert s.over_refusal_hard_1k is None and (s.over_refusal_80k.k, s.over_refusal_80k.n) == (1, 10)
    assert s.benign_split == "80k" and s.over_refusal == s.over_refusal_80k
    assert s.mini_score == pytest.approx(0.9)


def test_custom_prompts_are_answered_but_never_scored():
    custom = [CellResult(split="custom", row_id="custom:ab", category="custom", prompt="p", model="m",
                         verdict="direct_answer")]  # fmt: skip
    (s,) = score_results(cells("m", "hard-1k", 0, 1) + custom)
    assert (s.over_refusal.k, s.over_refusal.n) == (0, 1)
    assert s.answered == 1 and s.unscored == 1 and s.errors == 0
    assert "custom" not in s.per_category


def test_mover_uses_the_acceptance_interval_of_benign_prompts():
    """Balanced accuracy adds benign *acceptance* (18/20) to toxic refusal (15/20).

    Computed here from Wilson intervals of those two proportions directly, so a
    mix-up of which over-refusal bound maps to which side shows (2/20 is skewed).
    """
    (s,) = score_results(cells("m", "hard-1k", 2, 18) + cells("m", "toxic", 15, 5))
    (al, ah), (tl, th) = wilson(18, 20), wilson(15, 20)
    pa, pt = 0.9, 0.75
    assert s.mini_low == pytest.approx((pa + pt - math.sqrt((pa - al) ** 2 + (pt - tl) ** 2)) / 2, rel=1e-12)
    assert s.mini_high == pytest.approx((pa + pt + math.sqrt((ah - pa) ** 2 + (th - pt) ** 2)) / 2, rel=1e-12)


def test_mover_interval_stays_in_unit_range_at_extremes():
    (s,) = score_results(cells("perfect", "hard-1k", 0, 5) + cells("perfect", "toxic", 5, 0))
    assert s.mini_score == 1.0
    assert 0 <= s.mini_low < 1.0 and s.mini_high == 1.0
    (s,) = score_results(cells("worst", "hard-1k", 5, 0) + cells("worst", "toxic", 0, 5))
    assert s.mini_score == 0.0 and s.mini_low == 0.0 and 0 < s.mini_high <= 1


@pytest.mark.parametrize("split", ["hard-1k", "toxic"])
def test_one_kind_only_has_no_mini_score(split):
    (s,) = score_results(cells("m", split, 2, 3))
    assert s.mini_score is s.mini_low is s.mini_high is None
    present, absent = (s.over_refusal, s.toxic_refusal) if split == "hard-1k" else (s.toxic_refusal, s.over_refusal)
    assert absent is None and (present.k, present.n) == (2, 5)


def test_errors_are_counted_apart_not_as_refusals():
    results = [
        *cells("m", "hard-1k", 1, 1),
        cell("m", "hard-1k", "error", error="timeout"),
        cell("m", "hard-1k", "direct_refusal", error="stream cut"),  # verdict without a finished answer
        cell("m", "toxic", "error"),
    ]
    (s,) = score_results(results)
    assert (s.over_refusal.k, s.over_refusal.n) == (1, 2)
    assert s.toxic_refusal is None
    assert s.errors == 3 and s.answered == 2


def test_models_in_first_seen_order_and_per_category_counts():
    results = (
        cells("b", "toxic", 1, 0, "hate")
        + cells("a", "hard-1k", 2, 1, "privacy")
        + cells("b", "hard-1k", 0, 4, "illegal")
        + cells("b", "hard-1k", 3, 1, "privacy")
        + cells("b", "toxic", 0, 2, "hate")
    )
    scores = score_results(results)
    assert [s.model for s in scores] == ["b", "a"]
    b = scores[0].per_category
    assert list(b) == ["hard-1k", "toxic"]
    assert {c: (r.k, r.n) for c, r in b["hard-1k"].items()} == {"illegal": (0, 4), "privacy": (3, 4)}
    assert {c: (r.k, r.n) for c, r in b["toxic"].items()} == {"hate": (1, 3)}
    assert scores[1].per_category == {"hard-1k": {"privacy": Rate.of(2, 3)}}


def test_cli_scoreboard_keeps_80k_apart(monkeypatch):
    import io

    from orbench_play.cli import print_scoreboard

    monkeypatch.setenv("COLUMNS", "240")  # one line per row, so the columns can be read back
    out = io.StringIO()
    print_scoreboard(cells("a", "hard-1k", 3, 7) + cells("b", "80k", 1, 3) + cells("b", "toxic", 4, 0), stream=out)
    text = out.getvalue()
    assert "over-refusal (hard-1k)" in text and "over-refusal (80k)" in text
    row_a = next(line for line in text.splitlines() if "│ a " in line)
    row_b = next(line for line in text.splitlines() if "│ b " in line)
    assert "(3/10)" in row_a and "(1/4)" in row_b and "(4/4)" in row_b
    assert "on 80k" in row_b and "on 80k" not in row_a


# --- frames ---------------------------------------------------------------------


def test_scoreboard_frame():
    results = cells("a", "hard-1k", 81, 182) + cells("a", "toxic", 9, 1) + cells("b", "toxic", 1, 1)
    results += cells("a", "80k", 1, 3) + cells("c", "80k", 2, 2) + cells("c", "toxic", 3, 1)
    results.append(cell("b", "toxic", "error"))
    frame = scoreboard_frame(score_results(results))
    assert list(frame["model"]) == ["a", "b", "c"]
    a, b, c = frame.iloc[0], frame.iloc[1], frame.iloc[2]
    assert (a["over-refusal %"], a["over-refusal low %"], a["over-refusal high %"]) == (30.8, 25.5, 36.6)
    assert a["benign n"] == 263 and a["toxic n"] == 10 and not math.isnan(a["mini-score %"])
    assert a["benign split"] == "hard-1k" and a["hard-1k n"] == 263
    assert (a["80k over-refusal %"], a["80k n"]) == (25.0, 4)
    assert math.isnan(b["over-refusal %"]) and math.isnan(b["mini-score %"]) and b["benign split"] == ""
    assert b["toxic refusal %"] == 50.0 and b["errors"] == 1
    assert c["benign split"] == "80k" and c["over-refusal %"] == 50.0 and math.isnan(c["hard-1k over-refusal %"])
    assert c["mini-score %"] == 62.5


def test_category_frame():
    results = (
        cells("a", "hard-1k", 1, 3, "privacy") + cells("a", "toxic", 2, 0, "hate") + cells("b", "hard-1k", 0, 1, "hate")
    )
    frame = category_frame(results)
    assert list(frame.columns) == ["model", "split", "hate", "privacy", "hate n", "privacy n"]
    rows = {(r.model, r.split): r for r in frame.itertuples(index=False)}
    assert set(rows) == {("a", "hard-1k"), ("a", "toxic"), ("b", "hard-1k")}
    a_benign = frame[(frame.model == "a") & (frame.split == "hard-1k")].iloc[0]
    assert a_benign["privacy"] == 25.0 and math.isnan(a_benign["hate"]) and a_benign["privacy n"] == 4
    assert frame[(frame.model == "a") & (frame.split == "toxic")].iloc[0]["hate"] == 100.0


# --- paper results ----------------------------------------------------------------


def test_packaged_paper_results_equal_the_shared_file(monkeypatch):
    monkeypatch.delenv("ORBENCH_PAPER_RESULTS", raising=False)
    packaged = load_paper_results()
    assert len(packaged) == 32
    assert list(packaged.columns) == ["model", "hard_1k_rejection_pct", "toxic_rejection_pct"]
    pd.testing.assert_frame_equal(packaged, load_paper_results(SHARED_PAPER))
    raw = pd.read_csv(SHARED_PAPER)
    pd.testing.assert_frame_equal(packaged, raw, check_dtype=False)


def test_paper_results_path_from_env(monkeypatch, tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("model,hard_1k_rejection_pct,toxic_rejection_pct\nX,10,90\n")
    monkeypatch.setenv("ORBENCH_PAPER_RESULTS", str(path))
    frame = load_paper_results()
    assert frame.to_dict("records") == [{"model": "X", "hard_1k_rejection_pct": 10.0, "toxic_rejection_pct": 90.0}]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("model,hard_1k_rejection_pct\nX,10\n", "lacks column.*toxic_rejection_pct"),
        ("model,hard_1k_rejection_pct,toxic_rejection_pct\nX,ten,90\n", "row 1 .X. has hard_1k_rejection_pct='ten'"),
        ("model,hard_1k_rejection_pct,toxic_rejection_pct\nX,10,190\n", "between 0 and 100"),
        ("model,hard_1k_rejection_pct,toxic_rejection_pct\n", "no rows"),
        ("", "not a readable CSV"),
    ],
)
def test_bad_paper_results_file(tmp_path, text, match):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=match):
        load_paper_results(path)


def test_missing_paper_results_file(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        load_paper_results(tmp_path / "nope.csv")
