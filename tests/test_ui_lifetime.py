"""Sessions expire, and every way a session ends frees its files (issue 25, item 2).

Before: the session state had no time to live, `state_session_capacity` was
Gradio's 10,000, a client that never opened Gradio's heartbeat was never
expired, a session Gradio evicted at its capacity skipped our clean-up, a
`kill -9` left the spool and download folders behind for good, and nothing
capped what all sessions together kept on disk (30 raw sessions of 4 × 1 MB
answers grew the downloads from 19 to 259 MB and the spool from 10 to 130 MB;
nothing was freed 90 s later).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support import api_client, drain, serve_playground_demo

from orbench_play.runtime import scratch
from orbench_play.types import CellResult
from orbench_play.ui.state import exports, lifetime
from orbench_play.ui.state.session import Session, new_session

BIG = 300_000
MODELS = ("fake-big-a", "fake-big-b")


def wait_for(condition, within: float = 40.0, every: float = 0.2):
    """Poll `condition` until it is truthy (returned) or `within` seconds pass (AssertionError)."""
    deadline = time.monotonic() + within
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within:g} s")
        time.sleep(every)


def files(folder: Path, pattern: str) -> list[Path]:
    return sorted(p for p in folder.rglob(pattern) if p.is_file()) if folder.exists() else []


@pytest.fixture
def roots(tmp_path, monkeypatch):
    """Gradio's upload folder and the temp folder (spools) of this test, and a fresh disk count."""
    upload, tmp = tmp_path / "gradio", tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(upload))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    exports.sessions_budget.cache_clear()  # a count of this test's own (the limit is read when made)
    yield upload, tmp
    exports.sessions_budget.cache_clear()


def big_models(fake, tmp_path: Path, size: int = BIG) -> Path:
    """Two owner models whose answers are `size` characters, so each is spooled and downloaded whole."""
    lines = ["model_list:"]
    for name in MODELS:
        fake.set_text(f"echo:{name}", (name + " says: " + "lorem ipsum dolor sit amet " * (size // 20))[:size])
        lines += [
            f"  - model_name: {name}",
            f"    litellm_params: {{model: 'openai/echo:{name}', api_base: '{fake.base_url}', api_key: sk-fake,"
            f" max_tokens: {size // 32 + 1024}}}",
        ]
    path = tmp_path / "models.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_once(client, seed: int) -> dict:
    out = client.predict(list(MODELS), "hard-1k", ["privacy"], 1, seed, 512, api_name="/run")
    assert out[6]["run"]["done"] == len(MODELS), out[6]
    return out[6]


def sessions_of(demo, client) -> list[Session]:
    state = demo.state_holder.session_data.get(client.session_hash)
    return [v for v in state.state_data.values() if isinstance(v, Session)] if state is not None else []


def test_a_raw_session_without_a_heartbeat_is_cleaned_after_its_time_to_live(fake, tmp_path, roots, monkeypatch):
    """A gradio_client caller never opens Gradio's heartbeat: before, its session lived as long as
    the process. Now it ends ORBENCH_SESSION_TTL_S after its last use, with its spool and downloads."""
    upload, tmp = roots
    monkeypatch.setenv("ORBENCH_SESSION_TTL_S", "3")
    with serve_playground_demo(big_models(fake, tmp_path)) as (url, demo):
        client = api_client(url, download_files=False)
        run_once(client, 1)
        (sess,) = sessions_of(demo, client)
        assert files(tmp, "*.txt") and files(upload, "orbench-session.*")  # spooled and downloadable
        assert sess.files.budget.used > 2 * BIG
        # closed is set first (so handlers stop), then the files go: wait for the end of both
        wait_for(lambda: sess.closed and sess.files.budget.used == 0)
        assert files(tmp, "*.txt") == [] and files(upload, "orbench-session.*") == []
        assert sess.files.budget.used == 0
        # The visitor comes back later: a fresh session, which works.
        assert run_once(client, 2)["session_results"] == len(MODELS)


def test_sessions_gradio_evicts_at_its_capacity_are_cleaned(fake, tmp_path, roots, monkeypatch):
    """Gradio drops the oldest session past `state_session_capacity` without calling the
    state's delete callback. The capacity now comes from the disk budget, and the reaper
    ends an evicted session (its files go) while the sessions still held keep theirs."""
    upload, tmp = roots
    monkeypatch.setenv("ORBENCH_SESSION_TTL_S", "600")  # so only the eviction can end a session here
    # That time to live has the reaper look every 30 s (a quarter of it, at most 30 s), which
    # this test waited out; it looks as often as it ever does instead (the evicted session
    # still has to be unused for UNHELD_GRACE_S first, as in the app).
    monkeypatch.setattr(lifetime, "reap_every_s", lambda: 0.2)
    monkeypatch.setenv("ORBENCH_SESSION_SPOOL_MB", "1")
    monkeypatch.setenv("ORBENCH_SESSIONS_DISK_MB", "14")  # 14 MB / (3 × 1 MB + 4 MB) = 2 sessions
    assert lifetime.capacity() == 2
    with serve_playground_demo(big_models(fake, tmp_path)) as (url, demo):
        assert demo.state_holder.capacity == 2
        clients = [api_client(url, download_files=False) for _ in range(3)]
        kept = []
        for i, client in enumerate(clients):
            run_once(client, i)
            kept += sessions_of(demo, client)
        first = kept[0]
        assert sessions_of(demo, clients[0]) == []  # evicted by Gradio, delete callback skipped
        wait_for(lambda: first.closed and first.files.export_paths() == [])  # ended, and its files gone
        assert not kept[1].closed and not kept[2].closed
        spools = {p.parent for p in files(tmp, "*.txt")}
        exported = {p.parent for p in files(upload, "orbench-session.*")}
        assert len(spools) == 2 and len(exported) == 2  # the two held sessions' files only
        assert first.files.export_paths() == []


def test_the_reaper_ends_idle_and_unheld_sessions_but_never_a_running_or_held_one(roots):
    import gc

    gc.collect()  # sessions of earlier tests, still tracked until collected, must not be counted below
    lifetime.sweep(time.monotonic() + 1e9, held=None, ttl=1)
    now = time.monotonic()
    idle, unheld, held, running, fresh = (new_session() for _ in range(5))
    for sess in (idle, unheld, held, running):
        sess.last_used = now - 60
    idle.last_used = now - 120
    running.run = object.__new__(type("Live", (), {"finished": False}))  # a live run
    held_ids = {id(idle), id(held), id(running), id(fresh)}
    assert lifetime.sweep(now, held=held_ids, ttl=100) == 2
    assert idle.closed and unheld.closed  # past its time to live / no Gradio state holds it
    assert not held.closed and not running.closed and not fresh.closed
    assert lifetime.sweep(now + 1_000, held=None, ttl=100) == 2  # unknown holders: time to live only
    assert held.closed and fresh.closed and not running.closed


def test_a_collected_session_takes_its_files_with_it(roots):
    """A session Gradio dropped and Python collected before the reaper saw it still frees its disk."""
    import gc

    _, tmp = roots
    sess = new_session()
    sess.files.keep(answer(1, "x" * 10_000))
    assert files(tmp, "*.txt")
    del sess
    gc.collect()
    assert files(tmp, "*.txt") == []


def answer(row: int, text: str) -> CellResult:
    return CellResult(split="hard-1k", row_id=f"hard-1k:{row}", category="privacy", prompt=f"p{row}", model="m",
                      response=text, verdict="direct_answer", verdict_source="classifier")  # fmt: skip


# -- what a crash leaves ------------------------------------------------------------------

HOLDER = """
import sys, time
from orbench_play.runtime import scratch
for parent in sys.argv[1:]:
    folder = scratch.process_folder(parent)
    (folder / "spool-x").mkdir()
    (folder / "spool-x" / "answer.txt").write_text("a whole long answer")
print("ready", flush=True)
time.sleep(600)
"""


def holder(*parents: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, *map(str, parents)], stdout=subprocess.PIPE, text=True, cwd=os.getcwd()
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def test_the_start_up_sweep_removes_a_killed_processs_folders_and_never_a_live_ones(fake, tmp_path, roots):
    """`kill -9` leaves a process's spool and download folders; the next start removes them,
    and leaves those of a sibling process that is still running (it holds their lock)."""
    upload, tmp = roots
    upload.mkdir()
    killed, alive = holder(tmp, upload), holder(tmp, upload)
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait(10)
        legacy = tmp / "orbench-spool-abc123"  # from a version before per-process folders, two days old
        legacy.mkdir()
        os.utime(legacy, (time.time() - 2 * 86_400,) * 2)
        before = {root: sorted(p.name for p in root.glob(scratch.PREFIX + "*")) for root in (tmp, upload)}
        assert all(len(names) == 2 for names in before.values())
        with serve_playground_demo(big_models(fake, tmp_path), warm=False):
            after = {root: sorted(p.name for p in root.glob(scratch.PREFIX + "*")) for root in (tmp, upload)}
        for root in (tmp, upload):
            (left,) = [n for n in before[root] if n in after[root]]  # one of the two is gone
            assert left.startswith(f"{scratch.PREFIX}{alive.pid}-")  # the live one's stays, files and all
            assert (root / left / "spool-x" / "answer.txt").is_file()
        assert not legacy.exists()
    finally:
        alive.kill()
        alive.wait(10)


def test_spools_and_downloads_live_in_this_processs_folders(roots):
    upload, tmp = roots
    sess = Session()
    sess.begin_run([], [])
    sess.files.keep(answer(1, "y" * 10_000))
    csv_path, _ = sess.files.export([answer(1, "y")])
    (spooled,) = files(tmp, "*.txt")
    for path, root in ((spooled, tmp), (Path(csv_path), upload)):
        owner = path.relative_to(root).parts[0]
        assert owner.startswith(f"{scratch.PREFIX}{os.getpid()}-")
    assert scratch.sweep(tmp) == [] and scratch.sweep(upload) == []  # our own folders are never swept
    assert spooled.exists() and Path(csv_path).exists()
    sess.close()


# -- a total cap ----------------------------------------------------------------------------


async def test_past_the_total_cap_nothing_more_is_spooled_and_no_run_starts(fake, tmp_path, roots, monkeypatch):
    """Every session's spool and downloads together stop at ORBENCH_SESSIONS_DISK_MB: the next
    long answer is kept cut, saying the server's space is full, and no new run starts (a clear
    message) until sessions end and give their space back."""
    monkeypatch.setenv("ORBENCH_SESSIONS_DISK_MB", "1")
    from orbench_play.models import load_catalog
    from orbench_play.ui.handlers.playground import Playground

    pg = Playground(load_catalog(big_models(fake, tmp_path, 600_000), include_local=False))
    first, second = new_session(), new_session()  # 600 kB answers: one fits the 1 MB total, two do not
    frames = await drain(pg.run_setup(["fake-big-a"], "hard-1k", ["privacy"], 2, 0, 512, first))
    kept = sorted(r.response for r in first.results.values())
    assert len(kept) == 2
    assert sum("space for long answers is full" in r for r in kept) == 1
    assert any("the server's space for long answers is full" in r for r in kept)
    assert not first.files.budget.full
    first.export_files()  # the run's downloads (as its last frame writes them): counted once written
    assert first.files.budget.full
    frames = await drain(pg.run_setup(["fake-big-a"], "hard-1k", ["illegal"], 1, 0, 512, second))
    assert "space for session files is full" in frames[-1][0] and second.results == {}
    first.close()  # its time to live passed: its space comes back
    assert not second.files.budget.full
    await drain(pg.run_setup(["fake-big-a"], "hard-1k", ["illegal"], 1, 0, 512, second))
    assert len(second.results) == 1


def test_the_disk_budget_counts_what_is_written_and_given_back(roots):
    budget = scratch.DiskBudget(100)
    assert budget.try_take(60) and not budget.try_take(41) and budget.used == 60
    budget.take(50)  # a download, counted once written: may pass the cap
    assert budget.full and budget.used == 110
    budget.give_back(110)
    assert budget.used == 0 and not budget.full


def test_an_event_for_a_session_that_ended_starts_a_fresh_one():
    from orbench_play.ui.state.session import usable_session

    sess = new_session()
    sess.close()
    fresh = usable_session(sess)
    assert fresh is not sess and not fresh.closed
    assert usable_session(fresh) is fresh
    assert isinstance(usable_session(None), Session)


def test_capacity_follows_the_disk_budget(monkeypatch):
    monkeypatch.setenv("ORBENCH_SESSION_SPOOL_MB", "32")
    monkeypatch.delenv("ORBENCH_SESSIONS_DISK_MB", raising=False)
    assert lifetime.capacity() == 8192 // (3 * 32 + 4)
    monkeypatch.setenv("ORBENCH_SESSIONS_DISK_MB", "1")
    assert lifetime.capacity() == lifetime.MIN_CAPACITY
    assert lifetime.capacity(10**15, 1) == lifetime.MAX_CAPACITY
