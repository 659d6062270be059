"""What a session keeps of long answers, and its downloads: one bounded pair,
inside Gradio's upload folder (so Gradio serves them without a copy), whole
answers in them, removed when the session ends. Issue 13 item 1, "flat resources"."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest

from orbench_play.runtime import scratch
from orbench_play.types import CellEvent, CellResult, ModelSpec, Prompt, cell_id
from orbench_play.ui.state import exports
from orbench_play.ui.state.session import Session, close_session

BIG = 1_000_000


def answer(row: int, text: str, model: str = "m") -> CellResult:
    return CellResult(split="hard-1k", row_id=f"hard-1k:{row}", category="privacy", prompt=f"p{row}", model=model,
                      response=text, verdict="direct_answer", verdict_source="classifier")  # fmt: skip


def done(result: CellResult) -> CellEvent:
    return CellEvent("done", result.cell_id, result.row_id, result.model, result=result)


@pytest.fixture
def upload(tmp_path, monkeypatch):
    """Gradio's upload folder for this test (GRADIO_TEMP_DIR), and a private temp folder for spools."""
    folder = tmp_path / "gradio"
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(folder))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return folder


def files_under(folder: Path) -> list[Path]:
    """The files sessions keep under `folder` (not the lock of this process's own folder, `scratch`)."""
    if not folder.exists():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != scratch.LOCK_NAME)


def test_long_answers_are_cut_in_memory_and_whole_on_disk(upload, tmp_path):
    files = exports.SessionFiles(limit=10 * BIG)
    text = "é" + "x" * (BIG - 1)
    kept = files.keep(answer(1, text))
    assert len(kept.response) < exports.KEPT_CHARS + 100 and kept.response.startswith("éxx")
    assert f"+{BIG - exports.KEPT_CHARS:,} characters in the export" in kept.response
    assert files.whole(kept).response == text
    assert files.used == BIG + 1  # bytes: é is two
    short = answer(2, "short")
    assert files.keep(short) is short and files.whole(short) is short
    for _ in range(5):  # a re-run of the same cell overwrites its spool file
        files.keep(answer(1, "y" * BIG))
    assert files.used == BIG and len(files_under(tmp_path / "tmp")) == 1
    files.keep(answer(1, "now short"))
    assert files.used == 0 and files_under(tmp_path / "tmp") == []


def test_the_spool_is_capped_and_a_cut_answer_says_so(upload):
    files = exports.SessionFiles(limit=2 * BIG)
    kept = [files.keep(answer(i, "z" * BIG)) for i in range(3)]
    assert files.used == 2 * BIG
    assert [files.whole(k).response == "z" * BIG for k in kept] == [True, True, False]
    assert "space for long answers is full" in files.whole(kept[2]).response


@pytest.mark.parametrize(("raw", "expected"), [("", 32 * 2**20), ("1.5", int(1.5 * 2**20)), ("0", 0),
                                               ("lots", 32 * 2**20), ("nan", 32 * 2**20), ("-3", 32 * 2**20)])  # fmt: skip
def test_spool_limit_from_the_environment(monkeypatch, raw, expected):
    monkeypatch.setenv("ORBENCH_SESSION_SPOOL_MB", raw)
    assert exports.spool_limit_bytes() == expected


def test_session_keeps_cut_copies_and_overrides_survive_a_replay(upload):
    s = Session()
    p = Prompt("hard-1k:1", "hard-1k", "privacy", "p1")
    s.begin_run([p], [ModelSpec(name="m", litellm_model="m")])
    s.apply(done(answer(1, "a" * BIG)))
    cid = cell_id("hard-1k:1", "m")
    assert len(s.results[cid].response) < exports.KEPT_CHARS + 100
    assert s.set_override(cid, "direct_refusal") is None
    s.begin_run([p], [ModelSpec(name="m", litellm_model="m")])
    s.apply(done(answer(1, "a" * BIG)))  # the same answer again (e.g. cached): the override stays
    assert s.overrides == {cid: "direct_refusal"}
    s.begin_run([p], [ModelSpec(name="m", litellm_model="m")])
    s.apply(done(answer(1, "b" * BIG)))  # a different answer: the override was about the old one
    assert s.overrides == {}


def test_exports_are_one_pair_in_gradios_folder_with_whole_answers_and_go_with_the_session(upload):
    s = Session()
    ps = [Prompt(f"hard-1k:{i}", "hard-1k", "privacy", f"p{i}") for i in range(3)]
    texts = {0: "=1+1 " + "q" * BIG, 1: "short answer", 2: "w" * (exports.KEPT_CHARS + 1)}
    seen = set()
    for _ in range(4):
        s.begin_run(ps, [ModelSpec(name="m", litellm_model="m")])
        for i, text in texts.items():
            s.apply(done(answer(i, text)))
        csv_path, jsonl_path = s.export_files()
        seen.add(Path(csv_path).parent)
        assert Path(csv_path).is_relative_to(upload) and Path(jsonl_path).parent == Path(csv_path).parent
        assert [p.name for p in files_under(upload)] == ["orbench-session.csv", "orbench-session.jsonl"]
    assert len(seen) == 4  # a fresh, unguessable folder per export; the old one deleted
    assert len(Path(csv_path).parent.name) >= 32
    csv.field_size_limit(sys.maxsize)
    rows = list(csv.DictReader(io.StringIO(Path(csv_path).read_text(encoding="utf-8"))))
    assert [len(r["response"]) for r in rows] == [len(texts[0]) + 1, len(texts[1]), len(texts[2])]  # +1: the ' guard
    lines = [json.loads(line) for line in Path(jsonl_path).read_text(encoding="utf-8").splitlines()]
    assert [line["response"] for line in lines] == list(texts.values())
    close_session(s)
    assert files_under(upload) == [] and not any(Path(p).exists() for p in (csv_path, jsonl_path))
    assert files_under(Path(exports.tempfile.gettempdir())) == []  # the spool went too


def test_an_empty_session_exports_nothing(upload):
    assert Session().export_files() is None
    assert files_under(upload) == []
