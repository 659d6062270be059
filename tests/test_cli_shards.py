"""Issue 21 item 4: batch runs split over machines with `--shard K/N` share the
cache in Redis, so parts resume and no cell is paid for twice. Each "machine"
here is a CLI process with a cache folder of its own; what they share is one
real redis-server."""

from __future__ import annotations

import csv
import os

import pytest
from support import fake_models_yaml, run_cli

from orbench_play import data


def test_shards_are_disjoint_and_cover_the_run():
    rows = [f"80k:{i}" for i in range(5000)]
    parts = [{r for r in rows if data.in_shard(r, k, 4)} for k in range(1, 5)]
    assert sum(map(len, parts)) == len(rows) and set().union(*parts) == set(rows)
    assert all(1000 < len(p) < 1500 for p in parts)  # a hash, not a block of rows
    assert data.in_shard("hard-1k:7", 1, 1)


@pytest.mark.parametrize("bad", ["0/4", "5/4", "1/0", "a/b", "2", "1/2/3"])
def test_a_bad_shard_is_one_line_and_exit_2(bad):
    proc = run_cli(["run", "--model", "x", "--shard", bad], timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "--shard" in proc.stderr and "K/N" in proc.stderr and "Traceback" not in proc.stderr


def test_shards_on_two_machines_share_the_cache_and_never_pay_twice(redis_url, fake, tmp_path):
    config = fake_models_yaml(tmp_path / "models.yaml", fake.base_url, {"fake-a": "answer:s"})
    env = {**os.environ, "ORBENCH_REDIS_URL": redis_url}
    base = ["run", "--config", str(config), "--model", "fake-a", "--split", "hard-1k", "--per-category", "2",
            "--seed", "5", "--quiet"]  # fmt: skip

    def machine(name: str, *extra: str) -> list[dict[str, str]]:
        out = tmp_path / f"{name}.csv"
        proc = run_cli([*base, *extra, "--out", str(out)], env={**env, "ORBENCH_CACHE_DIR": str(tmp_path / name)})
        assert proc.returncode == 0, proc.stderr
        with out.open(newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))

    one = machine("m1", "--shard", "1/2")
    two = machine("m2", "--shard", "2/2")
    assert one and two and not {r["row_id"] for r in one} & {r["row_id"] for r in two}
    assert fake.request_count() == len(one) + len(two) == 20  # 10 categories x 2 prompts, each asked once
    # A third machine runs the whole thing (or a shard resumes): everything replays from Redis.
    whole = machine("m3")
    assert len(whole) == 20 and all(r["cached"] == "True" for r in whole)
    assert fake.request_count() == 20
