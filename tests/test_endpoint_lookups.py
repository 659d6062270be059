"""One visitor cannot starve everyone's endpoint checks (issue 25, item 5).

Before: every DNS check shared 4 resolver threads; a look-up that hung past
the 3 s limit kept its thread, so 12 "Add endpoint" requests for names whose
look-ups hang made a victim's add, and its next run (which re-checks the
address), fail with "Looking up … took longer than 3 s". Adding endpoints had
no rate limit. Here a resolver function stands in for DNS (names starting with
`hang` never answer until the test ends; the rest answer 127.0.0.1, which the
test lets count as public so the fake server can stand in for a public host).
"""

from __future__ import annotations

import concurrent.futures
import socket
import threading
import time

import pytest
from support import drain, fake_playground

from orbench_play import guards
from orbench_play.guards.lookups import LookupBusy, LookupPool
from orbench_play.ui.state.session import new_session

VISITOR_A_LOOKUPS = 12


@pytest.fixture
def dns(monkeypatch):
    """Public mode with a resolver whose `hang*` names never answer (until the test ends)."""
    release = threading.Event()
    hanging: list[str] = []
    state = {"hang_all": False}

    def resolve(host, port, *args):
        if host.startswith("hang") or state["hang_all"]:
            hanging.append(host)
            release.wait(120)
            raise socket.gaierror(socket.EAI_AGAIN, "test resolver gave up")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    real = guards.endpoints.address_problem
    monkeypatch.setattr(guards.endpoints, "address_problem", lambda ip: None if ip.is_loopback else real(ip))
    monkeypatch.setattr(guards.endpoints, "_system_resolver", resolve)
    monkeypatch.setattr(guards.endpoints, "DNS_TIMEOUT_S", 0.5)
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    try:
        yield state, hanging
    finally:
        release.set()


@pytest.fixture
def playground(fake, tmp_path):
    return fake_playground(tmp_path / "models.yaml", fake.base_url, {"owner-answer": "answer"})


def add(pg, sess, url: str):
    """Press "Add endpoint" (a sync handler: Gradio runs it in a worker thread)."""
    return pg.add_custom_endpoint(url, "answer", "sk-visitor", [], sess)


def visitor_b_adds_and_runs(pg, fake, tag: str) -> None:
    b = new_session()
    started = time.monotonic()
    add(pg, b, f"http://victim-{tag}.example:{fake.port}/v1")
    assert len(b.extra_models) == 1, "visitor B's endpoint was not added"
    assert time.monotonic() - started < 1.0  # its own look-up, not a wait behind visitor A's
    (name,) = b.extra_models
    frames = asyncio_run(drain(pg.run_prompt("Is this allowed?", [name], 64, b)))
    (result,) = frames[-1][6]["run"]["results"]
    assert result["verdict"] == "direct_answer" and not result["error"], result["error"]


def asyncio_run(coro):
    import asyncio

    return asyncio.run(coro)


@pytest.mark.filterwarnings("ignore::UserWarning")  # the refusals' toasts, outside a Gradio request
def test_one_visitors_hung_lookups_never_starve_anothers_add_and_run(dns, playground, fake):
    _, hanging = dns
    a = new_session()
    with concurrent.futures.ThreadPoolExecutor(VISITOR_A_LOOKUPS) as pool:
        adds = [pool.submit(add, playground, a, f"http://hang-{i}.example/v1") for i in range(VISITOR_A_LOOKUPS)]
        concurrent.futures.wait(adds, timeout=30)
    assert a.extra_models == {}  # none of visitor A's names resolved
    assert 1 <= len(hanging) <= 2  # at most two of A's look-ups were let through to hang; the rest refused at once
    visitor_b_adds_and_runs(playground, fake, "one-tab")


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_hung_lookups_from_many_sessions_hold_no_slot_another_visitor_needs(dns, playground, fake):
    """Visitor A opens a tab per look-up: each hangs past its time limit with a thread of its own,
    and the pool grows past them, so visitor B still gets a thread at once."""
    _, hanging = dns
    tabs = [new_session() for _ in range(VISITOR_A_LOOKUPS)]
    with concurrent.futures.ThreadPoolExecutor(VISITOR_A_LOOKUPS) as pool:
        adds = [pool.submit(add, playground, s, f"http://hang-{i}.example/v1") for i, s in enumerate(tabs)]
        concurrent.futures.wait(adds, timeout=30)
    assert len(hanging) == VISITOR_A_LOOKUPS  # all twelve are hung now, past their time limit
    visitor_b_adds_and_runs(playground, fake, "many-tabs")


def test_a_run_falls_back_on_a_recent_check_when_its_lookup_times_out(dns, playground, fake):
    """The run's re-check has a pool of its own; when even its look-up times out, the addresses a
    check of the same host found a moment ago are used (the connection is pinned to them)."""
    state, hanging = dns
    b = new_session()
    add(playground, b, f"http://slowing.example:{fake.port}/v1")
    (name,) = b.extra_models
    state["hang_all"] = True  # from now on every look-up hangs, this host's too
    frames = asyncio_run(drain(playground.run_prompt("Is this allowed?", [name], 64, b)))
    (result,) = frames[-1][6]["run"]["results"]
    assert result["verdict"] == "direct_answer" and not result["error"], result["error"]
    assert "slowing.example" in hanging  # it did look again, and did not wait for the answer
    # An endpoint never checked has nothing to fall back on: a time-out is a refusal.
    with pytest.raises(guards.GuardError, match="took longer than"):
        guards.check_endpoint_url(f"http://never-seen.example:{fake.port}/v1", for_run=True)


def test_adding_endpoints_is_rate_limited_per_session(dns, playground, fake, monkeypatch):
    monkeypatch.setenv("ORBENCH_ENDPOINT_CHECKS_PER_MINUTE", "3")
    a, b = new_session(), new_session()
    with pytest.warns(UserWarning, match="endpoints per minute per session"):
        for i in range(4):
            add(playground, a, f"http://ok-{i}.example:{fake.port}/v1")
    assert len(a.extra_models) == 3
    add(playground, b, f"http://ok-b.example:{fake.port}/v1")  # another session has its own minute
    assert len(b.extra_models) == 1


def test_the_pool_refuses_at_once_rather_than_queue_and_reuses_threads():
    release = threading.Event()
    pool = LookupPool("test-dns", max_threads=3, per_key=1)
    hung = [pool.submit(f"k{i}", release.wait, 30) for i in range(3)]
    with pytest.raises(LookupBusy, match="still waiting"):
        pool.submit("k0", time.sleep, 0)  # k0 has one unfinished already
    with pytest.raises(LookupBusy, match="busy"):
        pool.submit("k9", time.sleep, 0)  # every thread is taken: refused, never queued
    release.set()
    assert all(f.result(timeout=10) is True for f in hung)
    deadline = time.monotonic() + 10
    while pool.stats()["idle"] < 3 and time.monotonic() < deadline:  # the threads are back
        time.sleep(0.01)
    done = [pool.submit(f"k{i}", lambda: "ok") for i in range(3)]
    assert [f.result(timeout=10) for f in done] == ["ok"] * 3
    assert pool.stats()["threads"] == 3  # the same three threads, no more


def test_a_finished_lookup_is_no_longer_counted_when_its_caller_hears_of_it():
    """The count went down only after the caller was woken, so a visitor who
    checked again at once could be refused for a look-up that had ended."""
    pool = LookupPool("orbench-test-dns", per_key=1)
    for i in range(300):
        assert pool.submit("visitor:a", lambda n: n, i).result(timeout=30) == i
    assert pool.stats()["unfinished"] == 0
