"""`orbench-play score` and `orbench-play review`: the happy path, the round
trip review → fill in → score, and every bad input exiting 2 with one line and
nothing written."""

from __future__ import annotations

import csv
import json
import random

import pytest

from orbench_play.cli import main
from orbench_play.scoring import error_aware, review_policy
from orbench_play.types import CLASS_LABELS

HEADER = ["split", "row_id", "model", "response", "verdict", "verdict_source", "error", "p_refusal", "sure"]


def write_run(path, n=40, *, with_p=True, seed=2):
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        p = rng.random()
        verdict = "direct_refusal" if p > 0.5 else ("indirect_refusal" if p > 0.45 else "direct_answer")
        row = {
            "split": "toxic" if i % 2 else "hard-1k",
            "row_id": f"s:{i}",
            "model": "m1" if i < n // 2 else "m2",
            "response": "=formula-looking answer" if i == 0 else "an answer",
            "verdict": verdict,
            "verdict_source": "classifier",
            "error": "",
            "p_refusal": f"{p:.4f}",
            "sure": str(p < 0.2 or p > 0.8),
        }
        rows.append(row)
    rows.append({**rows[0], "row_id": "s:err", "verdict": "error", "error": "timed out", "p_refusal": "", "sure": ""})
    header = HEADER if with_p else [h for h in HEADER if h not in ("p_refusal", "sure")]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, header, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    return rows


def read(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_score_groups_with_error_aware_and_naive_figures(tmp_path, capsys):
    src, out = tmp_path / "run.csv", tmp_path / "out.csv"
    rows = write_run(src)
    assert main(["score", str(src), "--by", "model", "--by", "split", "--out", str(out)]) == 0
    got = read(out)
    assert list(got[0]) == [
        "model",
        "split",
        "n",
        "refusal_rate",
        "low",
        "high",
        "naive_rate",
        "naive_low",
        "naive_high",
    ]
    assert [(r["model"], r["split"]) for r in got] == [
        ("m1", "hard-1k"),
        ("m1", "toxic"),
        ("m2", "hard-1k"),
        ("m2", "toxic"),
    ]
    group = [r for r in rows[:-1] if r["model"] == "m1" and r["split"] == "toxic"]
    cells = [error_aware.Cell(float(r["p_refusal"]), r["verdict"] != "direct_answer") for r in group]
    want = error_aware.estimate(cells)
    row = got[1]
    assert int(row["n"]) == len(group)
    assert float(row["refusal_rate"]) == pytest.approx(want.rate, abs=1e-6)
    assert (float(row["low"]), float(row["high"])) == pytest.approx((want.low, want.high), abs=1e-6)
    assert float(row["naive_rate"]) == pytest.approx(want.naive_rate, abs=1e-6)
    # without --by: one row for the file (the error row does not count)
    assert main(["score", str(src), "--out", str(out)]) == 0
    (whole,) = read(out)
    assert next(iter(whole)) == "n" and int(whole["n"]) == 40


def test_score_of_an_older_file_uses_the_fallback_and_says_so_once(tmp_path, capsys):
    src, out = tmp_path / "old.jsonl", tmp_path / "out.csv"
    with open(src, "w") as fh:
        for i, verdict in enumerate(["direct_refusal", "direct_answer", "direct_answer", "indirect_refusal"]):
            fh.write(
                json.dumps({"row_id": f"x:{i}", "model": "m", "verdict": verdict, "verdict_source": "phrases"}) + "\n"
            )
    capsys.readouterr()
    assert main(["score", str(src), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert sum("p_refusal" in line for line in err.splitlines()) == 1 and "fallback" in err
    (row,) = read(out)
    assert float(row["refusal_rate"]) == pytest.approx(0.5) and float(row["naive_rate"]) == 0.5


def test_review_then_score_with_the_filled_picks(tmp_path, capsys):
    src, picks, out = tmp_path / "run.csv", tmp_path / "picks.csv", tmp_path / "out.csv"
    rows = write_run(src)
    assert main(["review", str(src), "--budget", "8", "--out", str(picks)]) == 0
    chosen = read(picks)
    assert len(chosen) == 8
    assert list(chosen[0]) == [*HEADER, "row", "pick_probability", "human_verdict"]
    assert all(r["human_verdict"] == "" for r in chosen)
    for r in chosen:  # every column of FILE, as it was
        original = rows[int(r["row"])]
        assert {k: r[k] for k in HEADER} == original
    weights = [review_policy.weight(float(r["p_refusal"])) for r in rows[:-1]]
    pis = review_policy.inclusion_probabilities(weights, 8)
    assert all(float(r["pick_probability"]) == pytest.approx(pis[int(r["row"])], rel=1e-5) for r in chosen)
    # the same seed picks the same rows; another seed others
    again = tmp_path / "again.csv"
    assert main(["review", str(src), "--budget", "8", "--out", str(again)]) == 0
    assert read(again) == chosen
    assert main(["review", str(src), "--budget", "8", "--seed", "5", "--out", str(again)]) == 0
    assert [r["row"] for r in read(again)] != [r["row"] for r in chosen]
    # a person says every picked answer is a refusal; one row left empty is skipped
    for r in chosen[:-1]:
        r["human_verdict"] = "refusal"
    with open(picks, "w", newline="") as fh:
        w = csv.DictWriter(fh, list(chosen[0]))
        w.writeheader()
        w.writerows(chosen)
    assert main(["score", str(src), "--reviews", str(picks), "--out", str(out)]) == 0
    (row,) = read(out)
    cells = {
        i: error_aware.Cell(float(r["p_refusal"]), r["verdict"] != "direct_answer") for i, r in enumerate(rows[:-1])
    }
    for r in chosen[:-1]:
        i = int(r["row"])
        cells[i] = error_aware.Cell(float(rows[i]["p_refusal"]), True, y=1, pi=float(r["pick_probability"]))
    want = error_aware.estimate(list(cells.values()))
    assert want.reviewed == 7
    assert float(row["refusal_rate"]) == pytest.approx(want.rate, abs=1e-5)
    assert float(row["high"]) == pytest.approx(want.high, abs=1e-5)


def _picks(tmp_path, rows):
    path = tmp_path / "reviews.csv"
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, ["row", "pick_probability", "human_verdict"])
        w.writeheader()
        w.writerows(rows)
    return path


@pytest.mark.parametrize(
    "case, fragment",
    [
        ("by", "--by nope"),
        ("no-verdict-column", "no verdicts"),
        ("no-verdicts", "no verdicts"),
        ("missing-row", "row '999' does not exist"),
        ("bad-label", "'maybe' is not a class"),
        ("bad-probability", "pick_probability '0'"),
        ("budget", "--budget 500"),
        ("zero-budget", "--budget"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys, case, fragment):
    src, out = tmp_path / "run.csv", tmp_path / "out.csv"
    write_run(src)
    argv = ["score", str(src), "--out", str(out)]
    if case == "by":
        argv += ["--by", "model", "--by", "nope"]
    elif case == "no-verdict-column":
        src.write_text("a,b\n1,2\n")
    elif case == "no-verdicts":
        src.write_text("row_id,verdict,error\nx,error,boom\ny,,\n")
    elif case == "missing-row":
        argv += [
            "--reviews",
            str(_picks(tmp_path, [{"row": "999", "pick_probability": "0.5", "human_verdict": "refusal"}])),
        ]
    elif case == "bad-label":
        argv += [
            "--reviews",
            str(_picks(tmp_path, [{"row": "1", "pick_probability": "0.5", "human_verdict": "maybe"}])),
        ]
    elif case == "bad-probability":
        argv += ["--reviews", str(_picks(tmp_path, [{"row": "1", "pick_probability": "0", "human_verdict": "answer"}]))]
    elif case == "budget":
        argv = ["review", str(src), "--budget", "500", "--out", str(out)]
    elif case == "zero-budget":
        argv = ["review", str(src), "--budget", "0", "--out", str(out)]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and fragment in err and err.startswith("orbench-play: error:")
    assert not out.exists() and not (tmp_path / "out.csv.part").exists()


def test_human_verdict_takes_the_three_classes_and_the_two_words(tmp_path):
    src, out = tmp_path / "run.csv", tmp_path / "out.csv"
    write_run(src, n=10)
    labels = [*CLASS_LABELS, "answer", "Refusal"]
    reviews = _picks(
        tmp_path, [{"row": str(i), "pick_probability": "", "human_verdict": v} for i, v in enumerate(labels)]
    )
    assert main(["score", str(src), "--reviews", str(reviews), "--out", str(out)]) == 0
    (row,) = read(out)
    assert int(row["n"]) == 10
