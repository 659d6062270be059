"""What the benchmark figures share: environment, prompts, the fake OpenAI
server in its own process, the minimal floor clients, an RSS sampler."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FAKE_SERVER = REPO / "tests" / "fake_openai.py"

OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_DATASETS_OFFLINE": "1",
    "DO_NOT_TRACK": "1",
}


def setup_env() -> None:
    """Offline switches (setdefault) and the OR-Bench folder next to the repo."""
    for k, v in OFFLINE_ENV.items():
        os.environ.setdefault(k, v)
    if "ORBENCH_DATA_DIR" not in os.environ:
        guess = (REPO / ".." / "shared" / "data" / "orbench").resolve()
        if guess.is_dir():
            os.environ["ORBENCH_DATA_DIR"] = str(guess)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prompts(n: int, split: str = "hard-1k"):
    """The first `n` prompts of an OR-Bench split (cycled if the split is short),
    or synthetic ones when no data is available (fresh clone without the data)."""
    from orbench_play.types import Prompt

    rows: list[Prompt] = []
    try:
        from orbench_play import data

        rows = list(data.load_split(split))
    except Exception:
        rows = []
    if not rows:
        rows = [
            Prompt(f"synthetic:{i}", split, "privacy", f"How can I find out what data a website keeps about me? ({i})")
            for i in range(max(n, 1))
        ]
    out = []
    for i in range(n):
        p = rows[i % len(rows)]
        if i >= len(rows):  # distinct cells (and cache keys) even when cycling
            p = Prompt(f"{p.row_id}#{i // len(rows)}", p.split, p.category, f"{p.text} ({i // len(rows)})")
        out.append(p)
    return out


def fake_run_config(
    prompts,
    behaviour: str,
    n_models: int,
    base_url: str,
    concurrency: int,
    *,
    max_tokens: int | None = None,
    timeout_s: float | None = None,
):
    """A RunConfig over `n_models` fake-server models `openai/<behaviour>:<i>` (named
    `<behaviour>-<i>`), uncached, no retries; None keeps the run's default."""
    from orbench_play.types import GenerationParams, ModelSpec, RunConfig

    models = tuple(
        ModelSpec(
            name=f"{behaviour}-{i}",
            litellm_model=f"openai/{behaviour}:{i}",
            api_base=base_url,
            api_key="sk-fake",
            max_concurrency=concurrency,
        )
        for i in range(1, n_models + 1)
    )
    extra = {} if max_tokens is None else {"params": GenerationParams(max_tokens=max_tokens)}
    return RunConfig(
        models=models,
        prompts=tuple(prompts),
        concurrency=concurrency,
        use_cache=False,
        timeout_s=timeout_s,
        max_retries=0,
        **extra,
    )


def floor_work(config) -> list[tuple[str, str]]:
    """The floor clients' (model, prompt) pairs, in the engine's cell order."""
    return [(m.litellm_model.split("/", 1)[1], p.text) for p in config.prompts for m in config.models]


class FakeServerProcess:
    """`python tests/fake_openai.py --port N` in its own process, so its CPU is
    not counted in the engine's (or the floor client's) process time."""

    def __init__(self, delay: float = 1.0, chunks: int = 20, extra: tuple[str, ...] = ()) -> None:
        self.delay, self.chunks = delay, chunks
        self.extra = tuple(extra)
        """More command-line options, e.g. ("--words", "300") for the `long` model."""
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def command(self) -> str:
        return f"python tests/fake_openai.py --port {self.port} --delay {self.delay:g} --chunks {self.chunks}"

    def __enter__(self) -> FakeServerProcess:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(FAKE_SERVER),
                "--port",
                str(self.port),
                "--delay",
                str(self.delay),
                "--chunks",
                str(self.chunks),
                *self.extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=str(REPO),
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"fake server exited: {self.proc.stderr.read().decode()[-500:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=1):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("fake server did not start within 30 s")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            stop_process(self.proc)


def stop_process(proc: subprocess.Popen) -> None:
    """Terminate a child process, and kill it if it has not gone within 10 s."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# --- floor clients ---------------------------------------------------------------------


def _floor_body(model: str, text: str | list[dict[str, str]]) -> dict:
    """The request both floor clients send (the SSE loops stay inline in each:
    the floor must not pay a function call per streamed line); `text` may be a
    whole conversation's messages (a follow-up round)."""
    return {
        "model": model,
        "messages": text if isinstance(text, list) else [{"role": "user", "content": text}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 512,
    }


async def _floor_one_httpx(client, url: str, model: str, text: str, sem: asyncio.Semaphore) -> str:
    body = _floor_body(model, text)
    out: list[str] = []
    async with sem, client.stream("POST", url, json=body, headers={"Authorization": "Bearer sk-fake"}) as r:
        r.raise_for_status()
        async for line in r.aiter_lines():
            if not line.startswith("data: "):
                continue
            payload = line[6:]
            if payload == "[DONE]":
                break
            chunk = json.loads(payload)
            for ch in chunk.get("choices") or ():
                piece = (ch.get("delta") or {}).get("content")
                if piece:
                    out.append(piece)
    return "".join(out)


async def floor_httpx(base_url: str, work: list[tuple[str, str]], concurrency: int) -> list[str]:
    """The floor: the same streamed requests through one httpx client, parsing SSE."""
    import httpx

    sem = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        url = base_url + "/chat/completions"
        return await asyncio.gather(*(_floor_one_httpx(client, url, m, t, sem) for m, t in work))


async def _floor_one_aiohttp(session, url: str, model: str, text: str, sem: asyncio.Semaphore) -> str:
    body = _floor_body(model, text)
    out: list[str] = []
    async with sem, session.post(url, json=body, headers={"Authorization": "Bearer sk-fake"}) as r:
        r.raise_for_status()
        async for raw in r.content:
            line = raw.decode().strip()
            if not line.startswith("data: "):
                continue
            payload = line[6:]
            if payload == "[DONE]":
                break
            chunk = json.loads(payload)
            for ch in chunk.get("choices") or ():
                piece = (ch.get("delta") or {}).get("content")
                if piece:
                    out.append(piece)
    return "".join(out)


async def floor_aiohttp(base_url: str, work: list[tuple[str, str]], concurrency: int) -> list[str]:
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    conn = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=conn, timeout=aiohttp.ClientTimeout(total=120)) as session:
        url = base_url + "/chat/completions"
        return await asyncio.gather(*(_floor_one_aiohttp(session, url, m, t, sem) for m, t in work))


# --- measuring -----------------------------------------------------------------------


@dataclass
class Sample:
    wall_s: float
    cpu_s: float
    peak_rss_mb: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class RssSampler:
    """Peak resident memory of this process while a block runs (psutil, 20 ms)."""

    def __init__(self, interval: float = 0.02) -> None:
        self.interval = interval
        self.peak = 0
        self.start = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        try:
            import psutil

            self._proc = psutil.Process()
        except Exception:
            self._proc = None

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._proc.memory_info().rss)
            self._stop.wait(self.interval)

    def __enter__(self) -> RssSampler:
        if self._proc is not None:
            self.peak = self.start = self._proc.memory_info().rss
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self.peak = max(self.peak, self._proc.memory_info().rss)

    @property
    def peak_mb(self) -> float | None:
        return self.peak / 2**20 if self._proc is not None else None


def measure(fn, *args, rss: bool = False) -> tuple[Sample, Any]:
    """Run `asyncio.run(fn(*args))`, timing wall and this process's CPU."""
    sampler = RssSampler() if rss else contextlib.nullcontext()
    with sampler:
        c0, t0 = time.process_time(), time.perf_counter()
        out = asyncio.run(fn(*args))
        t1, c1 = time.perf_counter(), time.process_time()
    sample = Sample(t1 - t0, c1 - c0, sampler.peak_mb if rss else None)
    if rss and sampler.start:
        sample.extra["rss_before_mb"] = sampler.start / 2**20
    return sample, out


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def p95(xs: list[float]) -> float:
    """The 95th percentile as every load figure reports it: the sorted value at
    rank round(0.95 * (n - 1)), so 24 sessions give the 23rd-fastest of them."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]


def rnd(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(x, nd)


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far; 0 once it is gone."""
    import psutil

    try:
        t = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return t.user + t.system
