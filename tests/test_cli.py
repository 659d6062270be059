"""`orbench-play run` / `judge` end to end against the fake server."""

from __future__ import annotations

import csv
import hashlib
import json
import time

import pytest
from support import fake_models_yaml, run_cli

from orbench_play.cli import build_parser, main
from orbench_play.cli.run import build_run_config
from orbench_play.types import CATEGORIES, RESULT_COLUMNS


@pytest.fixture
def models_yaml(tmp_path, fake):
    return fake_models_yaml(tmp_path / "models.yaml", fake.base_url, {"A": "answer", "B": "refuse", "C": "indirect"})


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_run_writes_contract_rows_and_resumes_from_cache(tmp_path, models_yaml, fake, capsys):
    out = tmp_path / "r.csv"
    argv = [
        "run",
        "--config",
        str(models_yaml),
        "--model",
        "A",
        "--model",
        "B",
        "--split",
        "hard-1k",
        "--per-category",
        "1",
        "--seed",
        "0",
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(argv) == 0
    rows = read_csv(out)
    assert len(rows) == 20
    assert tuple(rows[0])[: len(RESULT_COLUMNS)] == RESULT_COLUMNS
    assert {r["category"] for r in rows} == set(CATEGORIES)
    assert {(r["model"], r["verdict"]) for r in rows} == {("A", "direct_answer"), ("B", "direct_refusal")}
    assert all(r["cached"] == "False" and r["error"] == "" for r in rows)
    assert all(r["row_id"].startswith("hard-1k:") for r in rows)
    printed = capsys.readouterr().out
    assert "scoreboard" in printed and "A" in printed
    sent = fake.request_count()
    assert sent == 20

    assert main(argv) == 0
    assert fake.request_count() == sent, "a repeat run must send nothing"
    again = read_csv(out)
    assert all(r["cached"] == "True" for r in again)
    assert [r["response"] for r in again] == [r["response"] for r in rows]


def test_jsonl_output_and_n_total(tmp_path, models_yaml):
    out = tmp_path / "r.jsonl"
    assert (
        main(
            [
                "run",
                "--config",
                str(models_yaml),
                "--model",
                "A",
                "--split",
                "toxic",
                "--n",
                "4",
                "--categories",
                "privacy,illegal",
                "--out",
                str(out),
                "--quiet",
                "--no-cache",
            ]
        )
        == 0
    )
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 4 and {r["category"] for r in rows} == {"privacy", "illegal"}
    assert list(rows[0])[: len(RESULT_COLUMNS)] == list(RESULT_COLUMNS)


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--split", "nope", "--n", "1"], "Unknown split 'nope'; choose one or more of: hard-1k, toxic, 80k"),
        (["--split", "hard-1k,", "--split", ",", "--n", "1"], "give one or more of hard-1k, toxic, 80k"),
        (["--split", "hard-1k", "--n", "0"], "at least 1"),
        (["--split", "hard-1k", "--per-category", "-3"], "at least 1"),
        (["--split", "hard-1k", "--n", "2", "--per-category", "2"], "not allowed with argument"),
        (["--split", "hard-1k", "--n", "2", "--categories", "privacy,spam"], "spam"),
        (["--split", "hard-1k", "--n", "2", "--config", "/nonexistent/models.yaml"], "does not exist"),
        (["--split", "hard-1k", "--n", "2", "--repeats", "9"], "repeats"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args, fragment, capsys):
    assert main(["run", "--model", "A", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and fragment in err and err.startswith("orbench-play: error:")


def test_judge_adds_verdict_columns(tmp_path, capsys):
    src = tmp_path / "answers.csv"
    with open(src, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["q", "a", "keep"])
        w.writerow(["How do I pick a lock?", "I'm sorry, but I can't help with that.", "1"])
        w.writerow(["How do I bake bread?", "Mix flour, water, salt and yeast, knead, rest, bake at 230C.", "2"])
        w.writerow(["Anything", "", "3"])
    out = tmp_path / "judged.csv"
    assert main(["judge", str(src), "--prompt-col", "q", "--response-col", "a", "--out", str(out)]) == 0
    rows = read_csv(out)
    assert [r["verdict"] for r in rows] == ["direct_refusal", "direct_answer", "direct_refusal"]
    assert [r["verdict_source"] for r in rows][2] == "provider"
    assert [r["keep"] for r in rows] == ["1", "2", "3"]
    assert all(0 <= float(r["p_refusal"]) <= 1 and r["sure"] in ("True", "False") for r in rows)
    assert float(rows[0]["p_refusal"]) > 0.5 > float(rows[1]["p_refusal"])
    assert main(["judge", str(src), "--prompt-col", "nope", "--response-col", "a", "--out", str(out)]) == 2
    assert "nope" in capsys.readouterr().err


def test_console_script_entry_point_runs(tmp_path):
    start = time.perf_counter()
    proc = run_cli(["run", "--model", "x", "--split", "bogus", "--n", "1"], timeout=60)
    assert proc.returncode == 2 and "bogus" in proc.stderr and "Traceback" not in proc.stderr
    assert time.perf_counter() - start < 30


def test_judge_output_keeps_carriage_returns_and_defuses_formulas(tmp_path):
    src = tmp_path / "answers.csv"
    with open(src, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["q", "a"])
        w.writerow(["Q1", "line one\rline two, still the same answer"])
        w.writerow(["Q2", '=HYPERLINK("http://x")'])
    out = tmp_path / "judged.csv"
    assert main(["judge", str(src), "--prompt-col", "q", "--response-col", "a", "--out", str(out)]) == 0
    rows = read_csv(out)
    assert len(rows) == 2
    assert rows[0]["a"] == "line one\rline two, still the same answer"
    assert rows[1]["a"].startswith("'=")


# sha256 of the comma-joined row ids that `--split hard-1k --n 50 --seed 1` drew before
# --split took a list (commit 6b1c74e): old result files must keep pairing with new ones.
OLD_HARD_N50_SEED1 = "a41277774429afc565b24c540730ef3bdda1e9d850485ee99c1ce126e3bf1fe0"


def drawn(models_yaml, *args: str):
    config, _catalog, notes = build_run_config(
        build_parser().parse_args(["run", "--config", str(models_yaml), "--model", "A", *args])
    )
    return config.prompts, notes


def test_default_run_is_the_or_bench_pair_one_per_category_of_each(models_yaml):
    prompts, notes = drawn(models_yaml)
    assert notes == []
    assert [(p.split, p.category) for p in prompts] == [("hard-1k", c) for c in sorted(CATEGORIES)] + [
        ("toxic", c) for c in sorted(CATEGORIES)
    ]
    assert drawn(models_yaml, "--split", "toxic,hard-1k", "--per-category", "1")[0] == prompts


def test_one_split_draws_the_prompts_it_drew_before(models_yaml):
    prompts, _ = drawn(models_yaml, "--split", "hard-1k", "--n", "50", "--seed", "1")
    assert hashlib.sha256(",".join(p.row_id for p in prompts).encode()).hexdigest() == OLD_HARD_N50_SEED1
    both, _ = drawn(models_yaml, "--split", "hard-1k,toxic", "--n", "50", "--seed", "1")
    assert both[:50] == prompts and {p.split for p in both[50:]} == {"toxic"} and len(both) == 100


def test_help_shows_the_split_list_and_the_size_default(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: hard-1k,toxic" in text
    assert "[--per-category N | --n N]" in text and "default: 1 unless --n is given" in text


def test_run_says_when_80k_is_a_partial_sample(tmp_path, models_yaml, capsys):
    out = tmp_path / "r.csv"
    argv = ["run", "--config", str(models_yaml), "--model", "A", "--split", "80k", "--n", "2", "--quiet"]
    assert main([*argv, "--out", str(out), "--no-cache"]) == 0
    err = capsys.readouterr().err
    note = "Split 80k is a partial sample: or-bench-80k-partial-1000.csv has 1,000 of the 80,359 prompts"
    assert err.count(note) == 2  # before the run, and again under the scoreboard
    assert main(["run", "--config", str(models_yaml), "--model", "A", "--split", "toxic", "--n", "1", "--quiet"]) == 0
    assert "partial" not in capsys.readouterr().err


def test_run_says_it_streams_80k_and_fails_in_one_line_offline(models_yaml, capsys, monkeypatch):
    monkeypatch.delenv("ORBENCH_DATA_DIR")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["run", "--config", str(models_yaml), "--model", "A", "--split", "toxic,80k", "--quiet"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "Streaming OR-Bench split 80k from the Hugging Face Hub…"
    assert len(err) == 2 and err[1].startswith("orbench-play: error: OR-Bench split 80k streams from the Hugging Face")
