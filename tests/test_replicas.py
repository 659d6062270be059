"""Issue 21 end to end: two `python app.py` processes (replicas A and B) on one
real `redis-server`, driven through the app's HTTP API (raw Gradio calls, as a
load balancer would pass them on), with the fake provider on loopback.

- a run on A is replayed from cache on B with no provider request;
- a budget spent on A blocks paid calls on B;
- a visitor's runs-per-minute limit holds across both (visitors are told apart
  by their address, as a trusted proxy sends it in X-Forwarded-For);
- killing Redis mid-run: the running cells finish, nothing crashes, paid calls
  stop (the budget fails closed) and the page's banner says why; restarting
  Redis: both replicas recover by themselves.

Each replica has a cache folder of its own, so nothing here is shared through
the disk. fakeredis is no substitute: this is a real server, really killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis_server import RedisServer
from support import browser_page, chromium, free_port, require_chromium

from benchmarks import gradio_http as api

REPO = Path(__file__).resolve().parents[1]
CAP = "0.00001"
"""Below the price of one gpt-4o-mini answer: one paid call spends the day."""


def _models_yaml(path: Path, base_url: str) -> Path:
    path.write_text(
        "model_list:\n"
        "  - model_name: fake-a\n    litellm_params:\n      model: openai/answer:a\n"
        f"      api_base: {base_url}\n      api_key: sk-fake\n"
        "  - model_name: fake-long\n    litellm_params:\n      model: openai/long:r\n"
        f"      api_base: {base_url}\n      api_key: sk-fake\n"
        # priced by LiteLLM and without an api_base of its own, so the spend cap counts it;
        # OPENAI_BASE_URL sends it to the fake server
        "  - model_name: paid\n    litellm_params:\n      model: openai/gpt-4o-mini\n      api_key: sk-fake\n",
        encoding="utf-8",
    )
    return path


class Replica:
    def __init__(self, name: str, folder: Path, env: dict[str, str]):
        self.name, self.port = name, free_port()
        self.root = f"http://127.0.0.1:{self.port}"
        self.log = folder / f"app-{name}.log"
        env = {**env, "GRADIO_SERVER_PORT": str(self.port), "ORBENCH_CACHE_DIR": str(folder / f"cache-{name}")}
        self._sink = self.log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "app.py"], cwd=REPO, env=env, stdout=self._sink, stderr=subprocess.STDOUT
        )

    def wait_ready(self, within: float = 120) -> None:
        deadline = time.monotonic() + within
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"replica {self.name} exited:\n{self.tail()}")
            with contextlib.suppress(OSError), urllib.request.urlopen(self.root + "/", timeout=5) as response:  # noqa: S310 -- our own http URL
                if response.status == 200:
                    return
            if time.monotonic() > deadline:
                raise AssertionError(f"replica {self.name} served nothing within {within:.0f} s:\n{self.tail()}")
            time.sleep(0.3)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=20)
        self._sink.close()

    def call(self, endpoint: str, data: list, visitor: str = "192.0.2.1") -> list:
        headers = {"X-Forwarded-For": visitor}
        return asyncio.run(api.call_once(self.root, endpoint, data, headers))

    def run_prompt(self, prompt: str, models: list[str], visitor: str = "192.0.2.1") -> dict:
        return api.results(self.call("run_prompt", api.prompt_args(prompt, models), visitor))


@pytest.fixture(scope="module")
def shared(fake_server, tmp_path_factory) -> Iterator[tuple[RedisServer, Replica, Replica]]:
    folder = tmp_path_factory.mktemp("replicas")
    with RedisServer() as redis_server:
        env = {
            **os.environ,
            "ORBENCH_REDIS_URL": redis_server.url,
            "ORBENCH_MODELS": str(_models_yaml(folder / "models.yaml", fake_server.base_url)),
            "ORBENCH_PUBLIC": "1",  # the limits apply; a public demo needs its shared state at start
            "ORBENCH_RUNS_PER_MINUTE": "2",
            "ORBENCH_PROXY_HOPS": "1",  # this test plays the visitors' proxy: X-Forwarded-For names them
            "ORBENCH_BUDGET_USD": CAP,
            "OPENAI_BASE_URL": fake_server.base_url,
            "OPENAI_API_KEY": "sk-fake",
        }
        replicas = [Replica("a", folder, env), Replica("b", folder, env)]
        try:
            for replica in replicas:
                replica.wait_ready()
            yield redis_server, replicas[0], replicas[1]
        finally:
            for replica in replicas:
                replica.stop()


def test_a_run_on_a_replays_on_b_with_no_provider_request(shared, fake):
    _, a, b = shared
    setup = api.run_args(["fake-a"], "hard-1k", ["privacy", "illegal"], 2, 11, 64)
    first = api.results(a.call("run", setup, visitor="198.51.100.1"))["results"]
    assert len(first) == 4 and all(r["verdict"] == "direct_answer" and not r["cached"] for r in first)
    assert fake.request_count() == 4
    again = api.results(b.call("run", setup, visitor="198.51.100.2"))["results"]
    assert [r["response"] for r in again] == [r["response"] for r in first]
    assert all(r["cached"] for r in again)
    assert fake.request_count() == 4  # B asked the provider nothing


def test_a_budget_spent_on_a_blocks_paid_calls_on_b(shared, fake):
    _, a, b = shared
    spent = a.run_prompt("What does a credit report contain?", ["paid"], visitor="198.51.100.3")["results"][0]
    assert spent["verdict"] == "direct_answer" and spent["cost_usd"] > float(CAP), spent
    blocked = b.run_prompt("And how do I read one?", ["paid", "fake-a"], visitor="198.51.100.4")["results"]
    by_model = {r["model"]: r for r in blocked}
    assert by_model["paid"]["error"].startswith(f"Daily budget of ${float(CAP):g} reached")
    assert by_model["fake-a"]["verdict"] == "direct_answer"  # free models keep working
    assert fake.request_count("gpt-4o-mini") == 1


def test_a_visitors_limit_holds_across_both_replicas(shared, fake):
    _, a, b = shared
    visitor = "203.0.113.50"
    assert a.run_prompt("first", ["fake-a"], visitor)["results"][0]["verdict"] == "direct_answer"
    assert b.run_prompt("second", ["fake-a"], visitor)["results"][0]["verdict"] == "direct_answer"
    refused = a.call("run_prompt", api.prompt_args("third", ["fake-a"]), visitor)
    assert "runs per minute per visitor" in refused[0] and api.results(refused) == {}
    refused = b.call("run_prompt", api.prompt_args("third again", ["fake-a"]), visitor)
    assert "runs per minute per visitor" in refused[0]
    other = b.run_prompt("someone else", ["fake-a"], "203.0.113.51")  # another visitor is not slowed down
    assert other["results"][0]["verdict"] == "direct_answer"
    assert fake.request_count() == 3


def test_losing_redis_mid_run_loses_nothing_fails_closed_and_recovers(shared, fake, chromium_or_skip):
    redis_server, a, b = shared
    fake.words, fake.long_seconds = 300, 4.0

    async def run_and_kill() -> list:
        import aiohttp

        setup = api.run_args(["fake-long"], "hard-1k", ["privacy", "illegal"], 2, 23, 512)
        async with aiohttp.ClientSession() as session:
            running = asyncio.create_task(api.call(session, a.root, "run", setup, {"X-Forwarded-For": "198.51.100.9"}))
            deadline = time.monotonic() + 60
            while fake.request_count("long") < 4:  # every cell is streaming
                assert time.monotonic() < deadline, "the run did not start"
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)
            redis_server.stop()  # killed mid-run
            return await running

    outputs = asyncio.run(run_and_kill())
    run = api.results(outputs)
    assert len(run["results"]) == 4 and all(r["verdict"] == "direct_answer" for r in run["results"]), run
    assert all(len(r["response"]) > 1000 for r in run["results"])  # whole answers, nothing lost
    assert "Shared state unavailable" in outputs[0]  # said under the grid
    # Paid calls stop on both replicas (the budget cannot be checked); free ones still run, uncached.
    for replica, visitor in ((a, "198.51.100.10"), (b, "198.51.100.11")):
        rows = {
            r["model"]: r
            for r in replica.run_prompt("Is a paid call possible?", ["paid", "fake-a"], visitor)["results"]
        }
        assert (
            "cannot be checked right now" in rows["paid"]["error"]
            or "Shared state unavailable" in rows["paid"]["error"]
        ), rows
        assert rows["fake-a"]["verdict"] == "direct_answer" and not rows["fake-a"]["cached"]
    assert fake.request_count("gpt-4o-mini") == 0
    assert a.proc.poll() is None and b.proc.poll() is None  # nothing crashed
    page_banner(a.root, "Shared state unavailable")

    redis_server.start()  # empty, as a restarted Redis without persistence is
    deadline = time.monotonic() + 60
    for attempt in range(1000):  # A finds it again by itself: a paid call is admitted
        rows = a.run_prompt(f"Paid again? {attempt}", ["paid"], f"198.51.101.{attempt % 250}")["results"]
        if rows[0]["verdict"] == "direct_answer":
            break
        assert time.monotonic() < deadline, f"replica A did not recover: {rows[0]['error']}"
        time.sleep(0.5)
    setup = api.run_args(["fake-a"], "hard-1k", ["privacy"], 2, 31, 64)
    first = api.results(a.call("run", setup, "198.51.100.13"))["results"]
    assert not any(r["cached"] for r in first)
    asked = fake.request_count()
    for attempt in range(1000):  # and so does B: it replays A's run through Redis again
        again = api.results(b.call("run", setup, f"198.51.102.{attempt % 250}"))["results"]
        if all(r["cached"] for r in again):
            break
        assert time.monotonic() < deadline, "replica B did not recover"
        asked = fake.request_count()
        time.sleep(0.5)
    assert fake.request_count() == asked  # the replay asked the provider nothing
    page_banner(b.root, None)


@pytest.fixture
def chromium_or_skip():
    require_chromium()


def page_banner(root: str, expected: str | None) -> None:
    """The page's banner, as a visitor sees it once the page has loaded."""
    with chromium() as browser, browser_page(browser) as page:
        page.goto(root + "/", wait_until="domcontentloaded")
        page.wait_for_function(
            "() => !!(document.querySelector('#share textarea') || {}).value", timeout=60_000
        )  # the load chain (banner, then share link) has run
        text = page.inner_text("#banner")
    if expected is None:
        assert "Shared state" not in text, text
    else:
        assert expected in text, text
