"""Issue 43 (public-demo hardening, round three): the defects a hostile visitor
and a careless operator found, each with the test that failed before its fix.
Tests that need the served app over HTTP live in `test_hardening_round3_app.py`."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import uuid
from datetime import UTC, datetime

import pytest
from fake_hub import FakeHub
from support import fake_models_yaml, run_cli

from orbench_play import budget, cli, data, engine, guards
from orbench_play.budget import BudgetUnavailable, SpendGuard
from orbench_play.engine import streams
from orbench_play.guards import GuardError
from orbench_play.models import CatalogError, bare_model, custom_endpoint, load_catalog
from orbench_play.publish import card_text
from orbench_play.types import CellResult, ModelSpec, Prompt, RunConfig

PROMPT = Prompt("hard-1k:1", "hard-1k", "privacy", "How do I see which apps can read my location?")


def _run_one(fake, behaviour: str, path: str, monkeypatch, **config):
    monkeypatch.setenv(streams.ENV_FAST, "1" if path == "fast" else "0")
    spec = custom_endpoint(fake.base_url, behaviour, "sk-test")
    run = RunConfig(models=(spec,), prompts=(PROMPT,), use_cache=False, max_retries=1, **config)
    (result,) = asyncio.run(engine.collect(run))
    return result


# -- 3. only text resets the idle clock ---------------------------------------------------


@pytest.mark.parametrize("path", ["fast", "wrapper"])
def test_chunks_without_text_do_not_reset_the_idle_limit(fake, monkeypatch, path):
    # `{"content": ""}` every 20 ms used to hold the cell until the overall limit (or the server's close)
    result = _run_one(fake, "trickle-empty", path, monkeypatch, timeout_s=10.0, idle_timeout_s=1.0, token_timeout_s=0.0)
    assert result.error.startswith("Timed out: no new text for 1 s after "), result.error
    assert result.response  # the text before the keep-alives is kept


# -- 1. a prompt set's Hub id never reads the server's disk --------------------------------


@pytest.mark.parametrize("source", ["private", "private:default:train", "csv", "json::train", "x/../private"])
def test_in_public_mode_an_id_that_is_not_owner_name_is_refused(source):
    with pytest.raises(data.DataError, match="in public mode a prompt set must be a Hub dataset"):
        data.parse_source(source, allow_local=False)


def test_a_hub_id_naming_a_local_folder_is_read_from_the_hub(tmp_path, monkeypatch):
    """`orbench_play/assets` (or a planted `owner/name` folder) under the working directory
    used to be read from disk by `datasets`; it is read from the Hub (the fake Hub here)."""
    secret = f"OPERATOR-SECRET-{uuid.uuid4().hex}"
    planted = tmp_path / "work" / "someone" / "notes"
    planted.mkdir(parents=True)
    (planted / "notes.csv").write_text(f"prompt\n{secret}\n", encoding="utf-8")
    (tmp_path / "work" / "private").mkdir()
    (tmp_path / "work" / "private" / "notes.csv").write_text(f"prompt\n{secret}\n", encoding="utf-8")
    hub = FakeHub(token="hf_unused").start()
    try:
        hub.add_files("someone/notes", {"notes.csv": b"prompt\nA question the Hub holds?\n"})
        env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_TOKEN")}
        env.update(HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf-home"), ORBENCH_PUBLIC="1")
        script = (
            "import sys\nfrom orbench_play import data\n"
            "for source in sys.argv[1:]:\n"
            "    try:\n"
            "        print([p.text for p in data.preview(data.parse_source(source, allow_local=False), data.ColumnMap())])\n"
            "    except data.DataError as exc:\n"
            "        print('refused:', exc)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, "someone/notes", "private", "private:default:train"],
            cwd=tmp_path / "work", env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    finally:
        hub.stop()
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "['A question the Hub holds?']", done.stdout
    assert all(line.startswith("refused: ") for line in lines[1:]) and len(lines) == 3
    assert secret not in done.stdout + done.stderr


# -- 2. no error message quotes a secret-bearing field ---------------------------------------

KEY = "sk-live-" + "9" * 24


@pytest.mark.parametrize(
    "params",
    [
        f"api_key: [{KEY}]",
        "api_key: 4242424242424242",
        f"api_key: {{{KEY}: 1}}",
        f"api_base: [https://user:{KEY}@host.example/v1]",
        f"extra_headers: {{Bearer {KEY}: 2024-01-01}}",
        f"aws_secret_access_key: {{{KEY}: .nan}}",
        f"password: {{{KEY}: .inf}}",
    ],
)
def test_a_mistyped_secret_is_named_never_quoted(tmp_path, params):
    path = tmp_path / "models.yaml"
    path.write_text(f"model_list:\n  - model_name: m\n    litellm_params: {{model: openai/x, {params}}}\n")
    with pytest.raises(CatalogError) as caught:
        load_catalog(path, include_local=False)
    message = str(caught.value)
    assert KEY not in message and "4242424242424242" not in message and "9999" not in message, message
    assert "litellm_params." in message and "\n" not in message


@pytest.mark.parametrize("shape", [f"litellm_params: {KEY}", f"litellm_params: [{KEY}]", f"model_info: {KEY}"])
def test_a_misplaced_secret_is_not_quoted_either(tmp_path, shape):
    path = tmp_path / "models.yaml"
    body = "model_list:\n  - model_name: m\n"
    body += (
        f"    {shape}\n" if shape.startswith("litellm") else f"    litellm_params: {{model: openai/x}}\n    {shape}\n"
    )
    path.write_text(body)
    with pytest.raises(CatalogError) as caught:
        load_catalog(path, include_local=False)
    assert KEY not in str(caught.value) and ("got text" in str(caught.value) or "got a list" in str(caught.value))


def test_a_custom_endpoint_url_with_credentials_is_not_quoted():
    with pytest.raises(CatalogError) as caught:
        custom_endpoint(f"ftp://me:{KEY}@host.example/v1", "m")
    assert KEY not in str(caught.value)


@pytest.mark.parametrize("url", ["http://host.example:99999/v1", "http://host.example:port/v1"])
def test_a_custom_endpoint_url_with_a_bad_port_is_one_sentence(url):
    with pytest.raises(CatalogError, match="port that is not a number"):
        custom_endpoint(url, "m")


# -- 7. model ids and the dataset card ------------------------------------------------------

HOSTILE_IDS = ["m\r# Injected heading", "m\u202egnp.exe", "m\x1b[31mred", "m\u2028next"]


@pytest.mark.parametrize("model_id", HOSTILE_IDS)
def test_control_and_bidi_characters_are_refused_in_model_ids(model_id):
    with pytest.raises(CatalogError, match="control or invisible formatting characters"):
        custom_endpoint("https://api.example.com/v1", model_id)
    spec = ModelSpec(name="custom/x", litellm_model=f"openai/{model_id}", api_base="https://api.example.com/v1")
    with pytest.raises(GuardError, match="control or invisible formatting"):
        guards.check_model(spec, public=True)


def test_the_card_escapes_markdown_and_html_in_every_cell():
    hostile = "x\r\n## Injected\r| a | b |\n[click](https://evil.example) <img src=x onerror=alert(1)> \u202e\x1b[31m"
    results = [
        CellResult(
            split="custom:s.csv", row_id="custom:s.csv:0", category="tech", prompt="p", model=hostile,
            response="r", verdict="direct_answer", verdict_source="phrases", expected="benign",
        )
    ]  # fmt: skip
    card = card_text(results, title=hostile)
    page = card.split("\n---\n", 1)[1]  # the page after the YAML front matter
    assert "\r" not in page and "\u202e" not in page and "\x1b" not in page
    assert "<img" not in page and not re.search(r"(?<!\\)\]\(", page) and "\n## Injected" not in page
    assert "&lt;img" in page and "\\[click\\]" in page
    lines = page.splitlines()
    widths = {}  # each table's header: its rows must have as many cells (no pipe of the model id splits one)
    for i, line in enumerate(lines):
        if line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            width = len(re.findall(r"(?<!\\)\|", line))
        elif line.startswith("| ") and "Injected" in line:
            widths[i] = (width, len(re.findall(r"(?<!\\)\|", line)))
    assert len(widths) == 2 and all(want == got for want, got in widths.values()), widths


# -- 8. the spend ledger fails closed on any content that is not dollars -----------------------

PAID = bare_model("openai/gpt-4o-mini")


@pytest.mark.parametrize(
    "content", ["NaN", "null", "[]", '{"%s": -5}', '{"%s": NaN}', '{"%s": Infinity}', '{"%s": "1"}', '{"%s": true}']
)
def test_a_corrupt_file_ledger_fails_closed_and_is_not_rewritten(tmp_path, content):
    path = tmp_path / "spend.json"
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    text = content.replace("%s", day)
    path.write_text(text, encoding="utf-8")
    guard = SpendGuard(1.0, path)
    with pytest.raises(BudgetUnavailable, match="cannot be checked right now"):
        guard.reserve(PAID, 10, 100)
    guard.settle(budget.Reservation(guard, day, 0.0), 0.5)  # a cost that arrives now is kept, not written over it
    with pytest.raises(BudgetUnavailable):
        guard.reserve(PAID, 10, 100)
    assert path.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("value", ["nan", "-5", "inf"])
async def test_a_corrupt_shared_ledger_fails_closed(redis_url, monkeypatch, value):
    import redis

    from orbench_play.budget.redis_ledger import SPENT

    monkeypatch.setenv("ORBENCH_BUDGET_USD", "1")
    monkeypatch.setattr(budget, "_default", None, raising=False)
    client = redis.Redis.from_url(redis_url)
    client.hset(SPENT, datetime.now(UTC).strftime("%Y-%m-%d"), value)
    client.close()
    guard = budget.default_guard()
    assert guard is not None and guard.shared is not None
    with pytest.raises(BudgetUnavailable, match="not a finite, non-negative number"):
        await guard.reserve_async(PAID, 10, 100)


# -- 9. --token-timeout has the model list's ceiling ------------------------------------------


@pytest.mark.parametrize("value", ["1e308", "3600.5", "-1", "nan", "inf"])
def test_token_timeout_beyond_its_ceiling_is_exit_2_in_one_line(capsys, value):
    assert cli.main(["run", "--model", "x", "--split", "hard-1k", "--n", "1", f"--token-timeout={value}"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--token-timeout" in err, err


def test_token_timeout_zero_and_the_ceiling_still_pass(fake, tmp_path, monkeypatch):
    config = fake_models_yaml(tmp_path / "models.yaml", fake.base_url, {"A": "answer"})
    for value in ("0", "3600"):
        argv = ["run", "--config", str(config), "--model", "A", "--split", "hard-1k", "--n", "1", "--quiet"]
        assert cli.main([*argv, "--no-cache", "--token-timeout", value]) == 0
    monkeypatch.setenv("ORBENCH_TOKEN_TIMEOUT_S", "1e308")
    assert cli.main(["run", "--config", str(config), "--model", "A", "--split", "hard-1k", "--n", "1"]) == 2


# -- also: a prompt set that cannot be read is one line ---------------------------------------


@pytest.mark.parametrize("name, body", [("bad.jsonl", b'{"prompt": "a"}\n{"prompt": \n'), ("bad.parquet", b"no")])
def test_an_unreadable_prompt_set_is_one_line(tmp_path, name, body):
    (tmp_path / name).write_bytes(body)
    done = run_cli(["run", "--model", "x", "--prompts", str(tmp_path / name), "--n", "1"], cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("orbench-play: error: Could not read prompt set")
