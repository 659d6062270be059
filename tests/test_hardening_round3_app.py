"""Issue 43 (hardening, round three) and issue 47 item 9, through the served app
over real HTTP: the per-visitor limits and their trust rule for proxies, the
endpoint look-ups' per-visitor share, follow-up caps, and the banner of a
mistyped model list.

Visitors are told apart as a deployment tells them: by address. The apps here
either trust one proxy (`ORBENCH_PROXY_HOPS=1`, the test playing the proxy that
appends the visitor's address to `X-Forwarded-For`) or none (the default, where
a forged header must change nothing). A call of `/gradio_api/call/<api>` is a
session of its own: a new tab.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support import api_client, fake_models_yaml, free_port, serve_playground

from benchmarks import gradio_http as api
from orbench_play import guards

REPO = Path(__file__).resolve().parent.parent


# -- helpers -----------------------------------------------------------------------------------


class App:
    """`python app.py` with `env` on a free port (stopped by `stop`)."""

    def __init__(self, folder: Path, env: dict[str, str]):
        self.port = free_port()
        self.root = f"http://127.0.0.1:{self.port}/"
        self.log = folder / f"app-{self.port}.log"
        env = {**os.environ, **env, "GRADIO_SERVER_PORT": str(self.port), "ORBENCH_CACHE_DIR": str(folder / "cache")}
        self._sink = self.log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "app.py"], cwd=REPO, env=env, stdout=self._sink, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"app.py exited:\n{self.log.read_text(errors='replace')[-3000:]}")
            try:
                with urllib.request.urlopen(self.root, timeout=5) as response:  # noqa: S310 -- our own http URL
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"app.py served nothing:\n{self.log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.3)

    def call(self, endpoint: str, data: list, forwarded_for: str | None = None) -> list:
        """One API call as a new tab (a session of its own)."""
        headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else None
        return asyncio.run(api.call_once(self.root, endpoint, data, headers))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=20)
        self._sink.close()


def refusal(outputs: list) -> str:
    """The progress line of a refused call ("" when the call ran)."""
    return outputs[0] if 'data-state="refused"' in str(outputs[0]) else ""


def page_event(root: str, name: str, data: list, *, session: str, headers: dict[str, str] | None = None) -> list[dict]:
    """Fire one of the page's own (private) events as the browser does: join Gradio's queue with
    the event's index and the tab's session hash, then read the tab's message stream to the end."""
    config = httpx.get(root + "config", timeout=30).json()
    (dep,) = [d for d in config["dependencies"] if d.get("api_name") == name]
    body = {"data": data, "fn_index": dep["id"], "session_hash": session, "event_data": None}
    body["trigger_id"] = dep["targets"][0][0]
    joined = httpx.post(root + "gradio_api/queue/join", json=body, headers=headers, timeout=30)
    assert joined.status_code == 200, joined.text
    messages = []
    with httpx.stream("GET", root + f"gradio_api/queue/data?session_hash={session}", timeout=60) as stream:
        for line in stream.iter_lines():
            if line.startswith("data:"):
                message = json.loads(line[5:])
                messages.append(message)
                if message.get("msg") == "process_completed":
                    return messages
    raise AssertionError(f"{name}: no result in {messages}")


# -- the trust rule ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "peer, headers, hops, visitor",
    [
        ("127.0.0.1", ["6.6.6.6"], 0, "127.0.0.1"),  # no proxy trusted: a forged header changes nothing
        ("10.16.3.80", ["6.6.6.6, 203.0.113.9"], 1, "203.0.113.9"),  # one proxy: the entry it appended
        ("10.0.0.2", ["6.6.6.6, 203.0.113.9, 10.0.0.1"], 2, "203.0.113.9"),  # two proxies
        ("10.0.0.2", ["6.6.6.6", "203.0.113.9"], 1, "203.0.113.9"),  # two header lines are one list
        ("10.0.0.2", ["203.0.113.9:5555"], 1, "203.0.113.9"),  # a port is dropped
        ("10.0.0.2", ["[2001:db8::1]:443"], 1, "2001:db8::1"),
        ("10.0.0.2", ["not-an-address"], 1, "10.0.0.2"),  # garbage from the proxy: the peer
        ("10.0.0.2", [], 1, "10.0.0.2"),  # no header: the peer
        ("10.0.0.2", ["203.0.113.9"], 3, "203.0.113.9"),  # fewer entries than proxies: the leftmost
    ],
)
def test_the_visitors_address_follows_the_trusted_proxy_hops(peer, headers, hops, visitor):
    from orbench_play.guards import visitors

    assert visitors.visitor_address(peer, headers, hops) == visitor


def test_the_trust_setting_and_its_defaults():
    from orbench_play.guards import visitors

    assert visitors.proxy_hops({}) == 0
    assert visitors.proxy_hops({"SPACE_ID": "me/demo"}) == visitors.SPACE_PROXY_HOPS == 1
    assert visitors.proxy_hops({"SPACE_ID": "me/demo", "ORBENCH_PROXY_HOPS": "2"}) == 2
    for nonsense in ("-1", "11", "lots", "1.5"):
        assert visitors.proxy_hops({"ORBENCH_PROXY_HOPS": nonsense, "SPACE_ID": "me/demo"}) == 0


# -- #47 item 9 and #43 defect 10: per visitor, whatever the tab, and only the visitor's address --------


@pytest.fixture(scope="module")
def behind_a_proxy(fake_server, tmp_path_factory) -> Iterator[App]:
    """A public app behind one trusted proxy (the test), 3 runs a minute, 3 turns a conversation."""
    folder = tmp_path_factory.mktemp("round3-proxy")
    models = fake_models_yaml(
        folder / "models.yaml", fake_server.base_url, {"fake-answer": "answer", "fake-refuse": "refuse"}
    )
    env = {
        "ORBENCH_MODELS": str(models), "ORBENCH_PUBLIC": "1", "ORBENCH_PROXY_HOPS": "1",
        "ORBENCH_RUNS_PER_MINUTE": "3", "ORBENCH_MAX_TURNS": "3",
    }  # fmt: skip
    app = App(folder, env)
    try:
        yield app
    finally:
        app.stop()


def test_a_new_tab_does_not_reset_the_limit_and_cached_replays_are_free(behind_a_proxy, fake):
    app, visitor = behind_a_proxy, "203.0.113.10"
    first = api.results(app.call("run_prompt", api.prompt_args("How do I bake bread?", ["fake-answer"]), visitor))
    assert first["results"][0]["verdict"] == "direct_answer"
    for _ in range(4):  # the same question again, each from a new tab: replays that cost nothing
        again = api.results(app.call("run_prompt", api.prompt_args("How do I bake bread?", ["fake-answer"]), visitor))
        assert again["results"][0]["cached"] is True
    for question in ("How do I knead?", "How long does dough rise?"):  # runs 2 and 3, each from a new tab
        assert api.results(app.call("run_prompt", api.prompt_args(question, ["fake-answer"]), visitor))["results"]
    refused = app.call("run_prompt", api.prompt_args("And rye bread?", ["fake-answer"]), visitor)
    assert "3 runs per minute per visitor" in refusal(refused) and api.results(refused) == {}
    # another visitor behind the same proxy is not slowed down
    other = app.call("run_prompt", api.prompt_args("And rye bread?", ["fake-answer"]), "203.0.113.11")
    assert other and not refusal(other)
    assert fake.request_count() == 4  # the replays asked no provider


def test_follow_ups_stop_at_the_turn_cap_shown_before_and_count_as_runs(behind_a_proxy, fake):
    app = behind_a_proxy
    visitor = {"X-Forwarded-For": "203.0.113.20"}
    config = httpx.get(app.root + "config", timeout=30).text
    assert "3 turns per conversation" in config  # said on the page before it is hit
    client = api_client(app.root, headers=visitor)
    out = client.predict("Tell me how to pick a lock.", ["fake-refuse"], 64, api_name="/run_prompt")
    assert not refusal(out), out[0]
    for _ in range(2):  # two follow-ups: the conversation has three turns
        out = client.predict("Clarify benign intent", "", "", True, api_name="/follow_up")
        assert not refusal(out), out[0]
    messages_before = len(fake.requests[-1].messages)
    out = client.predict("Clarify benign intent", "", "", True, api_name="/follow_up")
    assert "limit of 3 turns per conversation" in str(out[0]), out[0]
    assert len(fake.requests[-1].messages) == messages_before  # nothing more was sent
    # the three calls that ran were runs of this visitor: a new tab is refused now
    refused = app.call("run_prompt", api.prompt_args("Something else?", ["fake-answer"]), "203.0.113.20")
    assert "runs per minute per visitor" in refusal(refused)


@pytest.fixture
def without_a_proxy(fake_server, tmp_path, redis_url) -> Iterator[App]:
    """A public app with shared state in Redis and no trusted proxy (the default), 2 runs a minute."""
    models = fake_models_yaml(tmp_path / "models.yaml", fake_server.base_url, {"fake-answer": "answer"})
    env = {"ORBENCH_MODELS": str(models), "ORBENCH_PUBLIC": "1", "ORBENCH_RUNS_PER_MINUTE": "2"}
    env["ORBENCH_REDIS_URL"] = redis_url
    env.pop("ORBENCH_PROXY_HOPS", None)
    app = App(tmp_path, env)
    try:
        yield app
    finally:
        app.stop()


def test_a_forged_forwarded_for_cannot_pick_the_visitors_address(without_a_proxy, fake):
    """Uvicorn trusted X-Forwarded-For from 127.0.0.1, so a client with access to the port
    picked a new address for each run; here every forged address is the one peer."""
    app = without_a_proxy
    for i, forged in enumerate(("198.51.100.1", "198.51.100.2")):
        done = app.call("run_prompt", api.prompt_args(f"Question {i}?", ["fake-answer"]), forged)
        assert api.results(done)["results"], done[0]
    refused = app.call("run_prompt", api.prompt_args("Question 3?", ["fake-answer"]), "198.51.100.3")
    assert "2 runs per minute per visitor" in refusal(refused)


# -- #43 defect 4: the endpoint look-ups' per-visitor share ----------------------------------------


@pytest.fixture
def hanging_dns(monkeypatch):
    """Public mode behind one trusted proxy; names starting `hang` never resolve until the test
    ends, the rest resolve to 127.0.0.1 (let through as public, for the fake server)."""
    release = threading.Event()
    hanging: list[str] = []

    def resolve(host, port, *args):
        if host.startswith("hang"):
            hanging.append(host)
            release.wait(120)
            raise socket.gaierror(socket.EAI_AGAIN, "test resolver gave up")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    real = guards.endpoints.address_problem
    monkeypatch.setattr(guards.endpoints, "address_problem", lambda ip: None if ip.is_loopback else real(ip))
    monkeypatch.setattr(guards.endpoints, "_system_resolver", resolve)
    monkeypatch.setattr(guards.endpoints, "DNS_TIMEOUT_S", 0.5)
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    monkeypatch.setenv("ORBENCH_PROXY_HOPS", "1")
    monkeypatch.setenv("ORBENCH_ENDPOINT_CHECKS_PER_MINUTE", "1000")
    try:
        yield hanging
    finally:
        release.set()


def test_one_visitors_many_sessions_cannot_fill_the_lookup_pool(hanging_dns, fake, tmp_path):
    """17 sessions × 3 tries of visitor A used to hold all 32 threads, and visitor B's add was
    refused ("The server is busy checking other endpoints")."""
    config = fake_models_yaml(tmp_path / "models.yaml", fake.base_url, {"owner": "answer"})
    with serve_playground(config, warm=False) as root:
        a = {"X-Forwarded-For": "203.0.113.30"}

        def add_as_a(i: int) -> list[dict]:
            data = [f"http://hang-{i}.example/v1", "answer", "sk-a", [], None]
            return page_event(
                root, "add_custom_endpoint", data, session=f"a-{i // 3}-{uuid.uuid4().hex[:6]}", headers=a
            )

        with concurrent.futures.ThreadPoolExecutor(17) as pool:
            list(pool.map(add_as_a, range(17 * 3)))
        assert len(hanging_dns) <= guards.lookups.PER_SHARE  # A's share; the rest of A's tries refused at once
        data = [f"http://victim.example:{fake.port}/v1", "answer", "sk-b", [], None]
        messages = page_event(
            root, "add_custom_endpoint", data, session="b-tab", headers={"X-Forwarded-For": "198.51.100.40"}
        )
        warnings = [m.get("log") for m in messages if m.get("msg") == "log"]
        assert warnings == [], warnings
        (done,) = [m for m in messages if m.get("msg") == "process_completed"]
        assert any("victim.example" in str(v) for v in done["output"]["data"][0].get("value", [])), done


def test_one_visitor_cannot_fill_the_run_recheck_pool(hanging_dns):
    """40 distinct hosts of one visitor filled the runs' own pool; now they hold its share."""
    a, b = "203.0.113.31", "198.51.100.41"
    refused = 0
    for i in range(40):
        try:
            guards.check_endpoint_url(f"http://hang-run-{i}.example/v1", for_run=True, share=a, timeout_s=0.05)
        except guards.GuardError as exc:
            refused += "still waiting" in str(exc)
    assert refused >= 40 - guards.lookups.PER_SHARE
    deadline = time.monotonic() + 10
    while len(hanging_dns) < guards.lookups.PER_SHARE and time.monotonic() < deadline:
        time.sleep(0.01)
    assert guards.check_endpoint_url("http://ok.example/v1", for_run=True, share=b) == ["127.0.0.1"]


# -- #43 defect 2: the page of a mistyped model list ---------------------------------------------------


def test_the_banner_and_config_never_show_a_mistyped_key(tmp_path, monkeypatch):
    key = f"sk-{uuid.uuid4().hex[:20]}"  # short enough that a 40-character quote held all of it
    models = tmp_path / "models.yaml"
    models.write_text(f"model_list:\n  - model_name: m\n    litellm_params: {{model: openai/x, api_key: [{key}]}}\n")
    monkeypatch.setenv("ORBENCH_MODELS", str(models))
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    from orbench_play.ui import build_demo, launch

    demo = build_demo()
    port = free_port()
    launch(demo, server_name="127.0.0.1", server_port=port, quiet=True)
    try:
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=30).text
        config = httpx.get(f"http://127.0.0.1:{port}/config", timeout=30).text
    finally:
        demo.close()
    assert "litellm_params.api_key" in config and "Model config problem" in config  # named, by its type
    assert key not in page and key not in config
