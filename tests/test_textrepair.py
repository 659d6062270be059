"""Issue 13 item 2: text that is not valid Unicode is repaired at the engine
boundary, before anything is cached, shown or exported, and a cache entry that
already holds it is repaired when read."""

from __future__ import annotations

import json
import os

import pytest
from fake_openai import LONE_SURROGATE_TEXT
from support import fake_models_yaml, run_cli

from orbench_play import engine
from orbench_play.cache import CachedAnswer, ResultCache, cell_key
from orbench_play.export import write_results
from orbench_play.models import custom_endpoint
from orbench_play.text.repair import REPLACEMENT, StreamRepair, repair_text
from orbench_play.types import Prompt, RunConfig

SMILE = "\U0001f600"
LONE_REPAIRED = LONE_SURROGATE_TEXT.replace("\udc00", REPLACEMENT).replace("\ud800", REPLACEMENT)
PROMPT = Prompt("hard-1k:9", "hard-1k", "privacy", "Who can see my photos?")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("plain ascii", "plain ascii"),
        ("déjà vu 😀", "déjà vu 😀"),
        ("pair \ud83d\ude00 joined", f"pair {SMILE} joined"),
        ("lone high \ud83d here", f"lone high {REPLACEMENT} here"),
        ("lone low \ude00", f"lone low {REPLACEMENT}"),
        ("reversed \ude00\ud83d", f"reversed {REPLACEMENT}{REPLACEMENT}"),
        ("\ud83d\ud83d\ude00", f"{REPLACEMENT}{SMILE}"),
    ],
)
def test_repair_text(text, expected):
    repaired = repair_text(text)
    assert repaired == expected
    repaired.encode("utf-8")  # always encodable


def test_valid_text_is_returned_as_is():
    text = "déjà vu 😀" * 100
    assert repair_text(text) is text


@pytest.mark.parametrize(
    "pieces, expected",
    [
        (["Smile: \ud83d", "\ude00 done."], f"Smile: {SMILE} done."),
        (["a\ud83d", "", "\ude00b"], f"a{SMILE}b"),  # an empty piece between the halves
        (["end \ud83d"], f"end {REPLACEMENT}"),  # the stream ends on half a pair
        (["x\ud83d", "y"], f"x{REPLACEMENT}y"),
        (["\ude00", "z"], f"{REPLACEMENT}z"),
    ],
)
def test_stream_repair_joins_pairs_split_over_pieces(pieces, expected):
    repair = StreamRepair()
    out = "".join(repair.feed(p) for p in pieces) + repair.flush()
    assert out == expected


async def test_the_engine_shows_and_caches_only_repaired_text(fake, tmp_path):
    cache = ResultCache(tmp_path / "cache")
    models = (
        custom_endpoint(fake.base_url, "split-surrogate", "sk"),
        custom_endpoint(fake.base_url, "lone-surrogate", "sk"),
    )
    config = RunConfig(models=models, prompts=(PROMPT,))
    events = [e async for e in engine.run(config, cache=cache)]
    shown = {m.name: "".join(e.text for e in events if e.kind == "delta" and e.model == m.name) for m in models}
    assert shown == {models[0].name: f"Smile: {SMILE} done.", models[1].name: LONE_REPAIRED}
    results = {e.result.model: e.result for e in events if e.kind == "done"}
    assert {n: r.response for n, r in results.items()} == shown
    for value in (cache._cache.get(k) for k in cache._cache.iterkeys()):
        value["response"].encode("utf-8")
    again = await engine.collect(config, cache=cache)  # a rerun replays them
    assert all(r.cached for r in again) and [r.response for r in again] == list(shown.values())


async def test_a_cache_entry_holding_bad_text_is_repaired_when_read(fake, tmp_path):
    """An entry written by an older version, before the engine repaired text."""
    cache = ResultCache(tmp_path / "cache")
    model = custom_endpoint(fake.base_url, "answer", "sk")
    config = RunConfig(models=(model,), prompts=(PROMPT,))
    key = cell_key(model, config.params.messages(PROMPT.text), config.params)
    cache.put_answer(key, CachedAnswer("Sure \ud83d and \ude00 more", "stop", 5, 0.0, 0.1, 0.05))
    (result,) = await engine.collect(config, cache=cache)
    assert result.cached and result.response == f"Sure {REPLACEMENT} and {REPLACEMENT} more"
    assert fake.request_count() == 0
    assert cache.get_answer(key).response == result.response  # written back repaired
    write_results([result], tmp_path / "out.csv")


def test_the_cli_writes_csv_and_jsonl_of_a_run_with_broken_text(fake, tmp_path):
    names = ("split-surrogate", "lone-surrogate")
    config = fake_models_yaml(tmp_path / "models.yaml", fake.base_url, {name: name for name in names}, api_key="sk-x")
    env = dict(os.environ, ORBENCH_CACHE_DIR=str(tmp_path / "cache"))
    for out in (tmp_path / "r.csv", tmp_path / "r.jsonl"):
        args = ["run", "--config", str(config), "--model", "split-surrogate", "--model", "lone-surrogate"]
        args += ["--split", "hard-1k", "--n", "2", "--retries", "0", "--out", str(out)]
        proc = run_cli(args, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr
        assert not (tmp_path / (out.name + ".part")).exists()
    rows = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text(encoding="utf-8").split("\n") if line]
    assert {r["response"] for r in rows} == {f"Smile: {SMILE} done.", LONE_REPAIRED}
    assert SMILE in (tmp_path / "r.csv").read_text(encoding="utf-8")
