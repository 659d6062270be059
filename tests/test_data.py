"""Loading OR-Bench splits from a folder, the Hub's fail-fast path, and sampling."""

from __future__ import annotations

import csv
import hashlib
import os
import random
import socket
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

from orbench_play import data
from orbench_play.data import DataError, load_split, parse_categories, parse_splits, sample, sample_splits, split_note
from orbench_play.data import sources as data_sources
from orbench_play.types import CATEGORIES, Prompt

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = REPO.parent / "shared" / "data" / "orbench"

# Category counts published in shared/data/README.md (independent of our parser).
HARD_COUNTS = {
    "deception": 72,
    "harassment": 41,
    "harmful": 106,
    "hate": 54,
    "illegal": 527,
    "privacy": 199,
    "self-harm": 63,
    "sexual": 66,
    "unethical": 125,
    "violence": 66,
}
TOXIC_COUNTS = {
    "deception": 83,
    "harassment": 76,
    "harmful": 30,
    "hate": 58,
    "illegal": 50,
    "privacy": 61,
    "self-harm": 92,
    "sexual": 73,
    "unethical": 61,
    "violence": 71,
}


def write_csv(path: Path, rows: list[tuple[str, str]], header=("prompt", "category")) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)  # default dialect: CRLF, minimal quoting, like the hub files
        w.writerow(header)
        w.writerows(rows)
    return path


# --- loading --------------------------------------------------------------------


@pytest.mark.parametrize(("split", "counts"), [("hard-1k", HARD_COUNTS), ("toxic", TOXIC_COUNTS)])
def test_shared_splits_load_with_published_counts(split, counts):
    prompts = load_split(split, DATA_DIR)
    assert Counter(p.category for p in prompts) == counts
    assert [p.row_id for p in prompts] == [f"{split}:{i}" for i in range(len(prompts))]
    assert all(p.split == split and p.text.strip() for p in prompts)


def test_row_text_matches_raw_file_including_quoted_fields():
    prompts = load_split("hard-1k", DATA_DIR)
    raw = (DATA_DIR / "or-bench-hard-1k.csv").read_bytes().decode().split("\r\n")
    assert raw[1] == f"{prompts[0].text},{prompts[0].category}"
    quoted = next(i for i, line in enumerate(raw[1:]) if line.startswith('"'))
    assert "," in prompts[quoted].text and not prompts[quoted].text.startswith('"')


def test_data_dir_defaults_to_env(monkeypatch):
    monkeypatch.setenv("ORBENCH_DATA_DIR", str(DATA_DIR))
    assert load_split("toxic") == load_split("toxic", DATA_DIR)


def test_80k_falls_back_to_partial_file_and_says_so():
    prompts = load_split("80k", DATA_DIR)
    assert len(prompts) == 1000
    assert prompts[0].row_id == "80k:0"
    note = split_note("80k", DATA_DIR)
    assert note and "partial" in note and "1,000" in note
    assert split_note("hard-1k", DATA_DIR) is None


def test_full_80k_file_wins_over_partial(tmp_path):
    write_csv(tmp_path / "or-bench-80k-partial-2.csv", [("a partial row", "hate"), ("b", "hate")])
    write_csv(tmp_path / "or-bench-80k.csv", [("the full row", "privacy")])
    assert [p.text for p in load_split("80k", tmp_path)] == ["the full row"]
    assert split_note("80k", tmp_path) is None


def test_missing_file_names_expected_path(tmp_path):
    write_csv(tmp_path / "or-bench-toxic.csv", [("x", "hate")])
    assert len(load_split("toxic", tmp_path)) == 1
    with pytest.raises(DataError, match=r"or-bench-hard-1k.csv") as exc:
        load_split("hard-1k", tmp_path)
    assert str(tmp_path) in str(exc.value)


def test_unknown_split_lists_valid_ones():
    with pytest.raises(DataError, match="hard-1k, toxic, 80k"):
        load_split("hard-2k", DATA_DIR)


def test_bad_category_names_file_row_and_value(tmp_path):
    write_csv(tmp_path / "or-bench-hard-1k.csv", [("fine", "hate"), ("bad", "weapons")])
    with pytest.raises(DataError) as exc:
        load_split("hard-1k", tmp_path)
    msg = str(exc.value)
    assert "or-bench-hard-1k.csv" in msg and "row 2" in msg and "'weapons'" in msg


def test_empty_prompt_and_missing_column_are_rejected(tmp_path):
    write_csv(tmp_path / "or-bench-hard-1k.csv", [("ok", "hate"), ("   ", "hate")])
    with pytest.raises(DataError, match=r"row 2.*empty prompt"):
        load_split("hard-1k", tmp_path)
    write_csv(tmp_path / "or-bench-toxic.csv", [("ok", "hate")], header=("text", "category"))
    with pytest.raises(DataError, match=r"or-bench-toxic.csv lacks column.*prompt"):
        load_split("toxic", tmp_path)


def test_cache_is_reused_until_the_file_changes(tmp_path):
    path = write_csv(tmp_path / "or-bench-toxic.csv", [("one", "hate")])
    first = load_split("toxic", tmp_path)
    hits = data_sources._read_csv.cache_info().hits
    assert load_split("toxic", tmp_path) == first
    assert data_sources._read_csv.cache_info().hits == hits + 1
    write_csv(path, [("one", "hate"), ("two", "privacy")])
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert [p.text for p in load_split("toxic", tmp_path)] == ["one", "two"]


# --- the Hub path must fail fast offline ------------------------------------------


def test_hub_offline_fails_fast_in_a_clean_process(tmp_path):
    """HF_HUB_OFFLINE=1, no data folder: 80k (not shipped) fails at once with what to do."""
    code = textwrap.dedent(
        """
        import time
        from orbench_play.data import DataError, load_split
        t = time.monotonic()
        try:
            load_split("80k")
        except DataError as e:
            print(f"{time.monotonic() - t:.3f}|{e}")
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "ORBENCH_DATA_DIR"}
    env.update(HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"), HF_DATASETS_CACHE=str(tmp_path / "ds"))
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, env=env, cwd=REPO, capture_output=True, text=True, timeout=60
    )
    elapsed, _, message = out.stdout.strip().partition("|")
    assert message, out.stderr[-2000:]
    assert float(elapsed) < 5.0
    assert "ORBENCH_DATA_DIR" in message and "or-bench-80k.csv" in message and "HF_HUB_OFFLINE" in message
    assert "\n" not in message


def test_hub_without_offline_flag_fails_fast(monkeypatch):
    monkeypatch.delenv("ORBENCH_DATA_DIR", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    import httpx  # noqa: F401 -- imported before the clock starts: the limit is the probe's, not an import's

    t = time.monotonic()
    with pytest.raises(DataError, match=r"Could not reach the Hugging Face Hub.*ORBENCH_DATA_DIR"):
        load_split("80k")
    assert time.monotonic() - t < 5.0


def test_hub_probe_has_a_hard_deadline_even_if_connect_hangs(monkeypatch):
    monkeypatch.delenv("ORBENCH_DATA_DIR", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: time.sleep(30))
    t = time.monotonic()
    with pytest.raises(DataError, match="split 80k"):
        load_split("80k")
    assert time.monotonic() - t < data_sources.PROBE_TIMEOUT_S + 1.5


# --- sampling -------------------------------------------------------------------


@pytest.fixture(scope="module")
def hard() -> list[Prompt]:
    return load_split("hard-1k", DATA_DIR)


def test_per_category_is_stratified_grouped_and_seeded(hard):
    s = sample(hard, per_category=5, seed=3)
    cats = [p.category for p in s.prompts]
    assert Counter(cats) == dict.fromkeys(CATEGORIES, 5)
    assert cats == sorted(cats)  # grouped alphabetically
    assert s.notes == ()
    assert sample(hard, per_category=5, seed=3) == s
    assert sample(hard, per_category=5, seed=4).prompts != s.prompts


def test_sample_ignores_input_order(hard):
    shuffled = list(hard)
    random.Random(99).shuffle(shuffled)
    assert sample(shuffled, n=37, seed=11) == sample(hard, n=37, seed=11)


def test_adding_rows_keeps_earlier_picks(hard):
    """Within a category, the new sample is the old one with some new rows merged in."""
    base = hard[:600]  # cuts the illegal block (rows 273-799) in two
    old = sample(base, categories=["illegal"], per_category=20, seed=5).prompts
    new = sample(hard, categories=["illegal"], per_category=20, seed=5).prompts
    kept = [p for p in new if p in set(base)]
    assert kept == list(old[: len(kept)])


def test_sample_is_identical_in_another_interpreter(hard):
    """Guards against hash() randomisation: a process with another PYTHONHASHSEED agrees."""
    code = (
        "from orbench_play.data import load_split, sample\n"
        f"s = sample(load_split('hard-1k', {str(DATA_DIR)!r}), n=12, seed=42)\n"
        "print(','.join(p.row_id for p in s.prompts))"
    )
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, env=env, cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == ",".join(p.row_id for p in sample(hard, n=12, seed=42).prompts), out.stderr


def test_n_spreads_evenly_with_remainder_to_first_categories(hard):
    s = sample(hard, n=23, seed=0)
    counts = Counter(p.category for p in s.prompts)
    assert [counts[c] for c in sorted(CATEGORIES)] == [3, 3, 3] + [2] * 7


def test_n_redistributes_when_a_category_runs_out(hard):
    s = sample(hard, categories="harassment,hate", n=150, seed=0)
    counts = Counter(p.category for p in s.prompts)
    assert counts == {"harassment": 41, "hate": 54}
    assert any("Asked for 150" in note and "95" in note for note in s.notes)
    s = sample(hard, categories=["harassment", "illegal"], n=100, seed=0)
    assert Counter(p.category for p in s.prompts) == {"harassment": 41, "illegal": 59}
    assert any(note.startswith("harassment:") for note in s.notes)


def test_asking_too_many_per_category_uses_all_with_note(hard):
    s = sample(hard, categories=["privacy", "hate"], per_category=300, seed=1)
    assert Counter(p.category for p in s.prompts) == {"privacy": 199, "hate": 54}
    assert "privacy: asked for 300, split hard-1k has only 199; using all 199." in s.notes


def test_absent_category_gets_a_note():
    partial = load_split("80k", DATA_DIR)
    s = sample(partial, categories=["privacy", "illegal"], per_category=2)
    assert [p.category for p in s.prompts] == ["illegal", "illegal"]
    assert any(n.startswith("privacy:") and "no prompts" in n for n in s.notes)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"n": 3, "per_category": 3}, {"n": 0}, {"per_category": -1}, {"n": 2, "categories": ["weapons"]}],
)
def test_bad_sample_arguments_raise(hard, kwargs):
    with pytest.raises(DataError):
        sample(hard, **kwargs)


def test_parse_categories():
    assert parse_categories(None) is None
    assert parse_categories("all") is None
    assert parse_categories("") is None
    assert parse_categories(" Privacy , illegal,privacy") == ["privacy", "illegal"]
    assert parse_categories(["hate", "self-harm,sexual"]) == ["hate", "self-harm", "sexual"]
    with pytest.raises(DataError, match="choose from: deception"):
        parse_categories("privacy,weapons")


def test_categories_in(hard):
    assert data.categories_in(hard) == sorted(CATEGORIES)
    assert data.categories_in(load_split("80k", DATA_DIR)) == ["harmful", "illegal", "sexual", "unethical", "violence"]


# --- several splits in one run ------------------------------------------------------

# sha256 of the comma-joined row ids drawn by the single-split sampler before splits
# became a list (commit 6b1c74e), so comparisons made then still pair up prompt by prompt.
OLD_HARD_N50_SEED1 = "a41277774429afc565b24c540730ef3bdda1e9d850485ee99c1ce126e3bf1fe0"
OLD_TOXIC_PER_CATEGORY1_SEED0 = "4f13a6ab831a36d0ec7486e3050dee94b681ed05aa9068139cb7e725a73a9124"


def digest(prompts) -> str:
    return hashlib.sha256(",".join(p.row_id for p in prompts).encode()).hexdigest()


def test_parse_splits():
    assert parse_splits(None) == parse_splits("") == parse_splits([]) == ["hard-1k", "toxic"]
    assert parse_splits("toxic, HARD-1K,toxic") == ["hard-1k", "toxic"]  # canonical order, no repeats
    assert parse_splits(["80k", "hard-1k,toxic"]) == ["hard-1k", "toxic", "80k"]
    with pytest.raises(DataError, match=r"Unknown split 'hard-2k'; choose one or more of: hard-1k, toxic, 80k"):
        parse_splits("hard-1k,hard-2k")


def test_one_split_draws_what_it_drew_before_splits_were_a_list():
    assert digest(sample_splits("hard-1k", n=50, seed=1, data_dir=DATA_DIR).prompts) == OLD_HARD_N50_SEED1
    assert (
        digest(sample_splits(["toxic"], per_category=1, seed=0, data_dir=DATA_DIR).prompts)
        == OLD_TOXIC_PER_CATEGORY1_SEED0
    )


def test_each_split_is_sampled_on_its_own_with_the_same_size_and_seed():
    both = sample_splits("hard-1k,toxic", per_category=2, seed=5, data_dir=DATA_DIR).prompts
    alone = {s: sample(load_split(s, DATA_DIR), per_category=2, seed=5).prompts for s in ("hard-1k", "toxic")}
    assert both == alone["hard-1k"] + alone["toxic"]
    assert Counter(p.split for p in both) == {"hard-1k": 20, "toxic": 20}
    # --n is per split too: adding a split never changes what another split contributes
    with_n = sample_splits(["toxic", "hard-1k"], n=7, seed=2, data_dir=DATA_DIR).prompts
    assert Counter(p.split for p in with_n) == {"hard-1k": 7, "toxic": 7}
    assert with_n[:7] == sample(load_split("hard-1k", DATA_DIR), n=7, seed=2).prompts


def test_notes_of_every_split_are_kept():
    picked = sample_splits("toxic,80k", categories=["privacy", "illegal"], per_category=1, data_dir=DATA_DIR)
    assert [p.split for p in picked.prompts] == ["toxic", "toxic", "80k"]
    assert any(n.startswith("privacy: split 80k has no prompts") for n in picked.notes)


def test_sample_splits_takes_another_sampler():
    calls = []

    def draw(prompts, **kwargs):
        calls.append((prompts[0].split, kwargs))
        return sample(prompts, **kwargs)

    sample_splits("hard-1k,toxic", per_category=1, seed=3, data_dir=DATA_DIR, draw=draw)
    assert [split for split, _ in calls] == ["hard-1k", "toxic"]
    assert all(kw == {"categories": None, "per_category": 1, "n": None, "seed": 3} for _, kw in calls)
