"""The fake OpenAI server behaves as documented, over raw HTTP and through LiteLLM."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import httpx
import pytest
from fake_openai import (
    BEHAVIOURS,
    HOSTILE_TEXT,
    INDIRECT_TEXT,
    REFUSE_TEXT,
    FakeOpenAIServer,
    resolve_behaviour,
)


def chat(fake, model, prompt="How do I bake bread?", *, stream=False, system=None, timeout=5.0, **params):
    msgs = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    body = {"model": model, "messages": msgs, "stream": stream, **params}
    return httpx.post(
        fake.base_url + "/chat/completions",
        json=body,
        headers={"Authorization": "Bearer sk-test-123"},
        timeout=timeout,
    )


def sse(resp: httpx.Response) -> list:
    """Parse an SSE body into decoded chunks ('[DONE]' kept as a string)."""
    events = []
    for block in resp.text.split("\n\n"):
        if not block.strip():
            continue
        assert block.startswith("data: "), block
        data = block[len("data: ") :]
        events.append(data if data == "[DONE]" else json.loads(data))
    return events


def streamed_text(events) -> str:
    return "".join(
        c["choices"][0]["delta"].get("content") or "" for c in events if isinstance(c, dict) and c["choices"]
    )


def test_model_name_resolution():
    assert resolve_behaviour("answer") == "answer"
    assert resolve_behaviour("openai/refuse") == "refuse"
    assert resolve_behaviour("refuse:b") == "refuse"
    assert resolve_behaviour("e429/x") == "e429"
    assert resolve_behaviour("whatever-model") == "answer"
    assert resolve_behaviour("unknown-model") == "unknown"
    assert resolve_behaviour("e429-always") == "e429-always"


def test_non_stream_answer_is_recorded(fake):
    r = chat(fake, "answer:a", "Tell me about volcanoes", temperature=0.3)
    assert r.status_code == 200
    body = r.json()
    assert body["object"] == "chat.completion"
    text = body["choices"][0]["message"]["content"]
    assert text.startswith("Sure. Here is some information about: Tell me about volcanoes")
    assert 150 < len(text) < 300
    assert body["usage"]["completion_tokens"] > 0
    (rec,) = fake.requests
    assert rec.model == "answer:a" and rec.behaviour == "answer"
    assert rec.prompt == "Tell me about volcanoes"
    assert rec.params["temperature"] == 0.3
    assert rec.headers["Authorization"] == rec.headers["authorization"] == "Bearer sk-test-123"
    assert fake.request_count("answer:a") == 1
    assert fake.request_count("answer") == 1
    assert fake.request_count("answer:b") == 0


def test_stream_shape_and_usage(fake):
    r = chat(fake, "answer", "Explain tides", stream=True, stream_options={"include_usage": True})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    events = sse(r)
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    usage_chunk = chunks[-1]
    assert usage_chunk["choices"] == [] and usage_chunk["usage"]["completion_tokens"] > 0
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert "Explain tides" in streamed_text(events)
    # no usage chunk unless asked
    events = sse(chat(fake, "answer", "Explain tides", stream=True))
    assert all(c == "[DONE]" or c["choices"] for c in events)


@pytest.mark.parametrize(
    "model,expected",
    [("refuse", REFUSE_TEXT), ("indirect", INDIRECT_TEXT), ("hostile", HOSTILE_TEXT), ("empty", "")],
)
def test_fixed_texts_stream(fake, model, expected):
    events = sse(chat(fake, model, stream=True))
    assert streamed_text(events) == expected
    assert events[-2]["choices"][0]["finish_reason"] == "stop"


def test_filtered(fake):
    events = sse(chat(fake, "filtered", stream=True))
    assert events[-2]["choices"][0]["finish_reason"] == "content_filter"
    assert chat(fake, "filtered").json()["choices"][0]["finish_reason"] == "content_filter"


def test_refuse_if_system_and_toxic_aware(fake):
    ans = chat(fake, "refuse-if-system", system="Be concise.").json()["choices"][0]["message"]["content"]
    assert ans.startswith("Sure.")
    ref = chat(fake, "refuse-if-system", system="Be SAFE.").json()["choices"][0]["message"]["content"]
    assert ref == REFUSE_TEXT
    fake.refuse_words = {"plutonium"}
    assert chat(fake, "toxic-aware", "Buy PLUTONIUM").json()["choices"][0]["message"]["content"] == REFUSE_TEXT
    assert chat(fake, "toxic-aware", "Buy bread").json()["choices"][0]["message"]["content"].startswith("Sure.")
    fake.reset()
    assert fake.refuse_words == {"FORBIDDEN"}


def test_echo_returns_request(fake):
    r = chat(fake, "echo", "hello", system="sys prompt", temperature=0.7, max_tokens=33, stream=True)
    echoed = json.loads(streamed_text(sse(r)))
    assert echoed["messages"][0] == {"role": "system", "content": "sys prompt"}
    assert echoed["temperature"] == 0.7 and echoed["max_tokens"] == 33
    assert "stream" not in echoed


def test_max_tokens_truncates_with_length(fake):
    body = chat(fake, "answer", max_tokens=5).json()
    assert body["choices"][0]["finish_reason"] == "length"
    assert len(body["choices"][0]["message"]["content"]) == 20


def test_slow_takes_delay(fake):
    fake.delay, fake.chunks = 0.5, 5
    t = time.monotonic()
    events = sse(chat(fake, "slow", stream=True))
    assert time.monotonic() - t >= 0.45
    assert len([c for c in events if c != "[DONE]" and c["choices"][0]["delta"].get("content")]) == 5


def test_long_streams_one_word_per_chunk_over_long_seconds(fake):
    fake.words, fake.long_seconds = 120, 0.4
    t = time.monotonic()
    events = sse(chat(fake, "long", "How do locks work?", stream=True, max_tokens=4096))
    elapsed = time.monotonic() - t
    pieces = [c["choices"][0]["delta"].get("content") for c in events if c != "[DONE]" and c["choices"]]
    pieces = [p for p in pieces if p]
    text = streamed_text(events)
    assert len(pieces) == 120 and len(text.split()) == 120
    assert all(p.count(" ") <= 1 and " " not in p.strip() for p in pieces)  # one word each
    assert text.startswith("Sure. Here is a careful answer about: How do locks work?")
    assert elapsed >= 0.35
    other = streamed_text(sse(chat(fake, "long", "Why is the sky blue?", stream=True, max_tokens=4096)))
    assert other.split()[20:40] != text.split()[20:40]  # the words vary with the prompt


def test_failures_per_model_and_prompt(fake):
    r = chat(fake, "e429", "p1")
    assert r.status_code == 429 and r.headers["Retry-After"] == "1"
    assert r.json()["error"]["type"] == "rate_limit_error"
    assert chat(fake, "e429", "p2").status_code == 429  # a different key fails too
    assert chat(fake, "e429", "p1").status_code == 200
    r = chat(fake, "e429-noheader", "p1")
    assert r.status_code == 429 and "Retry-After" not in r.headers
    assert chat(fake, "e429-noheader", "p1").status_code == 200
    for _ in range(3):
        assert chat(fake, "e429-always").status_code == 429
        assert chat(fake, "e500-always").status_code == 500
    fake.fail_times = 2
    for status in (500, 502, 503):
        assert chat(fake, f"e{status}").status_code == status
        assert chat(fake, f"e{status}").status_code == status
        assert chat(fake, f"e{status}").status_code == 200
    fake.reset()  # reset forgets counters
    assert chat(fake, "e429", "p1").status_code == 429


@pytest.mark.parametrize("model,status", [("e401", 401), ("e403", 403), ("e404", 404), ("unknown-x", 404)])
def test_permanent_errors(fake, model, status):
    for _ in range(2):
        r = chat(fake, model)
        assert r.status_code == status
        assert r.json()["error"]["message"]


def test_hang_never_sends_headers(fake):
    with pytest.raises(httpx.ReadTimeout):
        chat(fake, "hang", stream=True, timeout=0.5)
    # the handler notices the disconnect and finishes
    deadline = time.monotonic() + 3
    while fake.in_flight and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fake.in_flight == 0


def test_hang_mid_sends_some_then_stalls(fake):
    got = []
    with (
        pytest.raises(httpx.ReadTimeout),
        httpx.stream(
            "POST",
            fake.base_url + "/chat/completions",
            json={"model": "hang-mid", "messages": [{"role": "user", "content": "x"}], "stream": True},
            timeout=httpx.Timeout(5.0, read=0.5),
        ) as r,
    ):
        assert r.status_code == 200
        for line in r.iter_lines():
            got.append(line)
    assert any(line.startswith("data: {") for line in got)
    assert "data: [DONE]" not in got


def test_cut_closes_without_done(fake):
    with pytest.raises(httpx.HTTPError):
        r = chat(fake, "cut", stream=True)
        # some clients read a truncated body without error: then it must lack [DONE]
        assert "[DONE]" not in r.text
        raise httpx.RemoteProtocolError("truncated")


def test_malformed_chunk(fake):
    r = chat(fake, "malformed", stream=True)
    blocks = [b for b in r.text.split("\n\n") if b.strip()]
    bad = [b for b in blocks if b != "data: [DONE]"]
    with pytest.raises(json.JSONDecodeError):
        for b in bad:
            json.loads(b[len("data: ") :])


def test_models_endpoint(fake):
    ids = {m["id"] for m in httpx.get(fake.base_url + "/models").json()["data"]}
    assert set(BEHAVIOURS) <= ids
    assert fake.request_count() == 0  # only chat requests are counted


def test_set_text_and_in_flight(fake):
    fake.set_text("judge:x", "direct_refusal")
    assert chat(fake, "judge:x").json()["choices"][0]["message"]["content"] == "direct_refusal"
    fake.delay, fake.chunks = 0.4, 4
    threads = [threading.Thread(target=chat, args=(fake, "slow"), kwargs={"stream": True}) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert fake.wait_idle() == 0
    assert fake.max_in_flight == 3


def test_standalone_instance_on_own_port():
    with FakeOpenAIServer(refuse_words={"zzz"}) as other:
        r = chat(other, "toxic-aware", "zzz please")
        assert r.json()["choices"][0]["message"]["content"] == REFUSE_TEXT
        port = other.port
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1)


# ---------------------------------------------------------------- through LiteLLM
NO_RETRY = {"max_retries": 0, "num_retries": 0}


async def _litellm_stream(fake, model, prompt="What is rain?", **kw):
    import litellm

    resp = await litellm.acompletion(
        model=f"openai/{model}",
        api_base=fake.base_url,
        api_key="sk-fake",
        messages=[{"role": "user", "content": prompt}],
        stream=True,
        **NO_RETRY,
        **kw,
    )
    text, finish = "", None
    async for ch in resp:
        choice = ch.choices[0]
        text += choice.delta.content or ""
        finish = choice.finish_reason or finish
    return text, finish


async def test_litellm_streams_text(fake):
    text, finish = await _litellm_stream(fake, "answer:lite", "What is rain?")
    assert text.startswith("Sure. Here is some information about: What is rain?")
    assert finish == "stop"
    rec = fake.requests[-1]
    assert rec.model == "answer:lite" and rec.stream
    assert rec.headers["Authorization"] == "Bearer sk-fake"
    text, _ = await _litellm_stream(fake, "refuse")
    assert text == REFUSE_TEXT


async def test_litellm_error_classes(fake):
    import litellm

    cases = {
        "e429-always": litellm.RateLimitError,
        "e401": litellm.AuthenticationError,
        "e403": litellm.APIError,  # LiteLLM maps an OpenAI 403 to the generic APIError
        "e404": litellm.NotFoundError,
        "unknown-model": litellm.NotFoundError,
        "e500-always": litellm.InternalServerError,
        "e503": litellm.ServiceUnavailableError,
    }
    for model, exc in cases.items():
        with pytest.raises(exc) as info:
            await _litellm_stream(fake, model)
        if model.startswith("e"):
            assert info.value.status_code == int(model[1:4])
    # one attempt each: the SDK/LiteLLM did not retry behind our back
    assert fake.request_count() == len(cases)


async def test_litellm_timeout_on_hang(fake):
    import litellm

    with pytest.raises(litellm.Timeout):
        await asyncio.wait_for(_litellm_stream(fake, "hang", timeout=0.5), 10)


@pytest.mark.parametrize("model", ["cut", "malformed"])
async def test_litellm_broken_streams_raise_after_partial_text(fake, model):
    """LiteLLM raises MidStreamFallbackError (a ServiceUnavailableError, 503) mid-stream."""
    import litellm

    resp = await litellm.acompletion(
        model=f"openai/{model}",
        api_base=fake.base_url,
        api_key="sk-fake",
        messages=[{"role": "user", "content": "What is rain?"}],
        stream=True,
        **NO_RETRY,
    )
    text = ""
    with pytest.raises(litellm.ServiceUnavailableError):
        async for ch in resp:
            text += ch.choices[0].delta.content or ""
    assert text.startswith("Sure.")
    assert fake.request_count(model) == 1


async def test_litellm_reports_content_filter(fake):
    _text, finish = await _litellm_stream(fake, "filtered")
    assert finish == "content_filter"
