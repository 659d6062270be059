"""Canary: what the engine's fast stream path relies on in LiteLLM and the OpenAI SDK.

LiteLLM is pinned to a tested range (pyproject.toml); this test fails loudly,
naming what changed, when an upgrade moves anything `orbench_play.streams` and
`orbench_play.failures` read. At run time the fast path checks the same things
and falls back to LiteLLM's wrapper when one does not hold, so an upgrade
degrades to slow-but-correct; this test is what tells us to look.
"""

from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path

import pytest

from orbench_play.engine import failures, streams
from orbench_play.engine.llm import litellm_module

REPO = Path(__file__).resolve().parent.parent


async def _open(fake, behaviour: str, **kw):
    return await litellm_module().acompletion(
        model=f"openai/{behaviour}",
        api_base=fake.base_url,
        api_key="sk-canary",
        messages=[{"role": "user", "content": "canary"}],
        stream=True,
        stream_options={"include_usage": True},
        max_retries=0,
        num_retries=0,
        timeout=10,
        max_tokens=50,
        **kw,
    )


def _pinned(name: str) -> str:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(rf'"{name}([<>=!~][^"]*)"', text)
    assert found, f"pyproject.toml no longer pins {name} to a tested range"
    return found.group(1)


@pytest.mark.parametrize("name", ["litellm", "openai"])
def test_installed_versions_are_in_the_tested_range(name):
    from packaging.specifiers import SpecifierSet

    installed = metadata.version(name)
    pinned = _pinned(name)
    assert installed in SpecifierSet(pinned), (
        f"{name} {installed} is outside the range the fast stream path was tested with ({pinned}): "
        "run tests/test_litellm_canary.py and tests/test_stream_paths.py, then widen the pin"
    )


async def test_litellm_hands_back_an_unread_openai_sdk_stream(fake):
    from openai import AsyncStream
    from openai.types.chat import ChatCompletionChunk

    response = await _open(fake, "answer")
    try:
        provider = getattr(response, "custom_llm_provider", None)
        assert provider == "openai", (
            f"CustomStreamWrapper.custom_llm_provider is {provider!r} for an openai/ model, not 'openai': "
            "streams.FAST_PROVIDERS no longer matches LiteLLM's provider resolution"
        )
        stream = getattr(response, "completion_stream", None)
        assert type(stream) is AsyncStream, (
            f"CustomStreamWrapper.completion_stream is a {type(stream).__name__}, not openai.AsyncStream"
        )
        assert getattr(stream, "_cast_to", None) is ChatCompletionChunk, (
            "openai.AsyncStream._cast_to is no longer ChatCompletionChunk (or was renamed)"
        )
        http = getattr(stream, "response", None)
        for attribute in ("aiter_bytes", "aclose", "headers", "is_stream_consumed"):
            assert hasattr(http, attribute), f"AsyncStream.response has no {attribute!r} any more"
        assert http.is_stream_consumed is False, "LiteLLM now reads the stream before handing it back"
        assert "text/event-stream" in http.headers.get("content-type", "")
        assert hasattr(response, "aclose"), "CustomStreamWrapper.aclose is gone: streams.stream_answer closes with it"
        assert streams.raw_response(response) is http, "streams.raw_response refuses a stream it should read"
    finally:
        await response.aclose()


async def test_litellm_sends_what_the_fast_path_expects_back(fake):
    """Usage only arrives when LiteLLM passes stream_options through; one request
    per call only while max_retries=0/num_retries=0 still switch retries off."""
    with pytest.raises(Exception):  # noqa: B017 -- any error: this checks the request count
        response = await _open(fake, "e500-always")
        async for _ in response:
            pass
    assert fake.request_count("e500-always") == 1, "LiteLLM or the OpenAI SDK retried although told not to"
    response = await _open(fake, "answer")
    await response.aclose()
    request = fake.requests[-1]
    assert request.params.get("stream_options") == {"include_usage": True}, "stream_options no longer reach the server"
    assert request.params.get("max_tokens") == 50 and request.stream is True


async def test_the_raw_stream_carries_openai_chunks(fake):
    """The chunk shapes `streams._read_sse` reads, as LiteLLM leaves them on the wire."""
    response = await _open(fake, "answer")
    http = streams.raw_response(response)
    body = b"".join([piece async for piece in http.aiter_bytes()])
    await response.aclose()
    events = [line[6:] for line in body.decode().split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert any(c["choices"] and c["choices"][0]["delta"].get("content") for c in chunks)
    finished = [c for c in chunks if c["choices"] and c["choices"][0].get("finish_reason")]
    assert finished and finished[-1]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0


async def test_errors_surface_where_the_engine_looks_for_them(fake):
    # Fast path: a connection cut mid-body is a transport error failures.cut_stream knows.
    response = await _open(fake, "cut")
    http = streams.raw_response(response)
    with pytest.raises(Exception) as cut:
        async for _ in http.aiter_bytes():
            pass
    await response.aclose()
    assert isinstance(cut.value, failures._transport_errors()), (
        f"a cut stream now raises {type(cut.value).__module__}.{type(cut.value).__name__}, not an httpx TransportError"
    )
    # Wrapper path: LiteLLM keeps the original error in the cause chain.
    for behaviour, kind in (("malformed", json.JSONDecodeError), ("bad-utf8", UnicodeDecodeError)):
        response = await _open(fake, behaviour)
        with pytest.raises(Exception) as raised:
            async for _ in response:
                pass
        chain = list(failures._causes(raised.value))
        assert any(isinstance(c, kind) for c in chain), (
            f"LiteLLM no longer keeps the {kind.__name__} of a {behaviour} stream in the exception's cause chain"
        )
    response = await _open(fake, "error-mid")
    with pytest.raises(Exception) as raised:
        async for _ in response:
            pass
    bodies = [getattr(c, "body", None) for c in failures._causes(raised.value) if type(c).__name__ == "APIError"]
    assert any(isinstance(b, dict) and b.get("message") for b in bodies), (
        "an {'error': ...} event mid-stream no longer surfaces as openai.APIError with its body"
    )


def test_missing_keys_are_named_by_litellm():
    found = litellm_module().validate_environment(model="openai/gpt-4o-mini", api_base=None)
    assert "OPENAI_API_KEY" in found.get("missing_keys", []), (
        "litellm.validate_environment no longer names the missing key variable"
    )


async def test_what_the_bounds_and_the_wrapper_reader_rely_on(fake):
    """bounds.bound_body replaces the unread body of the SDK's HTTP response;
    streams._read_wrapper reads LiteLLM's record of the provider's own finish
    reason and recognises its complaint about a stream that ended without one."""
    from orbench_play.engine import bounds

    response = await _open(fake, "answer")
    try:
        http = streams.sdk_response(response)
        assert http is not None, "streams.sdk_response no longer finds the SDK's HTTP response"
        assert bounds._stream_class(type(http).__module__) is not None, (
            f"{type(http).__module__} has no AsyncByteStream: bounds.bound_body cannot bound the body"
        )
        watch = bounds.bound_body(http, bounds.StreamBounds.for_tokens(50), lambda: 0)
        assert watch is not None, "bounds.bound_body refuses an unread SDK response"
        assert hasattr(response.completion_stream, "close"), "openai.AsyncStream.close is gone (streams._SdkGuard)"
        async for _ in response:
            pass
        assert watch.done and watch.bytes > 0, "the bounded body did not carry the stream"
        for attribute in ("received_finish_reason", "intermittent_finish_reason"):
            assert hasattr(response, attribute), f"CustomStreamWrapper.{attribute} is gone (streams._provider_finished)"
        assert response.received_finish_reason == "stop"
    finally:
        await response.aclose()
    response = await _open(fake, "no-end")
    with pytest.raises(Exception) as raised:
        async for _ in response:
            pass
    assert streams._eof_complaint(response, raised.value), (
        "LiteLLM no longer fails a stream that ends without a finish reason with CustomStreamWrapper._stream_eof_error"
    )
