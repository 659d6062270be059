"""Issue #6, endpoints and limits: public mode refuses custom endpoints that
point inside (checked after DNS, pinned at connect time, redirects refused),
limits free-text models to an allow-list of providers, caps each session, and
exempts the owner's configured models. Also: bad CLI input is one line, exit 2.

Name resolution is injected (`resolver=` / `guards.endpoints._system_resolver`), so no
test asks a real DNS server; the `no_egress` fence fails any test that tries
to connect beyond 127.0.0.1.
"""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
from aiohttp import web

from orbench_play import engine, guards
from orbench_play.guards import GuardError, SessionLimiter, check_endpoint_url, check_model, public_mode
from orbench_play.models import bare_model, custom_endpoint
from orbench_play.types import ModelSpec, Prompt, RunConfig

PROMPT = Prompt("hard-1k:1", "hard-1k", "privacy", "How do I look up a public record?")


def resolver_for(table: dict[str, list[str]]):
    """A getaddrinfo stand-in answering from `table` (host -> addresses)."""

    def resolve(host, port, *args, **kwargs):
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "unknown host (test resolver)")
        out = []
        for address in table[host]:
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            out.append((family, socket.SOCK_STREAM, 6, "", (address, port)))
        return out

    return resolve


def numeric_only(host, port, *args, **kwargs):
    """The system resolver restricted to numeric forms (no DNS query possible)."""
    return socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM, 0, socket.AI_NUMERICHOST)


def inet_aton_forms(host, port, *args, **kwargs):
    """How glibc reads shorthand IPv4 forms like 127.1 or 2130706433 (no DNS)."""
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (socket.inet_ntoa(socket.inet_aton(host)), port))]


# -- public mode switch --------------------------------------------------------------


@pytest.mark.parametrize(
    "env, expected",
    [
        ({}, False),
        ({"ORBENCH_PUBLIC": "1"}, True),
        ({"ORBENCH_PUBLIC": "true"}, True),
        ({"ORBENCH_PUBLIC": "0"}, False),
        ({"SPACE_ID": "someone/orbench-play"}, True),
        ({"SPACE_ID": "someone/orbench-play", "ORBENCH_PUBLIC": "0"}, False),
        ({"SPACE_ID": ""}, False),
    ],
)
def test_public_mode_switch(env, expected):
    assert public_mode(env) is expected


# -- endpoint checks ---------------------------------------------------------------------

BAD_ADDRESSES = [
    "127.0.0.1",
    "127.5.6.7",
    "0.0.0.0",  # noqa: S104 -- an address the guard must refuse, not one we bind to
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.10",
    "169.254.169.254",
    "169.254.1.1",
    "100.64.0.1",
    "100.100.100.200",
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "fd00:ec2::254",
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
    "ff02::1",
]


@pytest.mark.parametrize("address", BAD_ADDRESSES)
def test_inside_addresses_are_refused_after_resolution(address):
    resolve = resolver_for({"innocent.example": [address]})
    with pytest.raises(GuardError, match=r"cannot reach innocent\.example"):
        check_endpoint_url("https://innocent.example/v1", resolver=resolve)


@pytest.mark.parametrize("address", ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "8.8.8.8"])
def test_public_addresses_pass(address):
    resolve = resolver_for({"api.example": [address]})
    assert check_endpoint_url("https://api.example/v1", resolver=resolve) == [address]


def test_one_inside_address_among_public_ones_is_refused():
    resolve = resolver_for({"mixed.example": ["93.184.215.14", "10.0.0.5"]})
    with pytest.raises(GuardError, match="private"):
        check_endpoint_url("https://mixed.example/v1", resolver=resolve)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "http://[::1]:8000/v1",
        "http://[::ffff:127.0.0.1]/v1",
        "http://169.254.169.254/latest/meta-data",
        "http://[fd00:ec2::254]/",
    ],
)
def test_literal_inside_urls_are_refused(url):
    with pytest.raises(GuardError, match="cannot reach"):
        check_endpoint_url(url, resolver=numeric_only)


@pytest.mark.parametrize("host", ["127.1", "2130706433", "0x7f000001", "0177.0.0.1", "169.254.43518"])
def test_shorthand_ipv4_forms_are_refused(host):
    with pytest.raises(GuardError, match="cannot reach"):
        check_endpoint_url(f"http://{host}/v1", resolver=inet_aton_forms)


@pytest.mark.parametrize(
    "url, reason",
    [
        ("", "empty"),
        ("ftp://api.example/v1", "http:// or https://"),
        ("file:///etc/passwd", "http:// or https://"),
        ("gopher://api.example/", "http:// or https://"),
        ("api.example/v1", "http:// or https://"),
        ("https://user:pw@api.example/v1", "user name or password"),
        ("https://evil.example@api.example/v1", "user name or password"),
        ("https:///v1", "no host"),
        ("https://api.example:99999/v1", "malformed"),
        ("https://api.exa mple/v1", "malformed"),
        ("https://api.example/v1\r\nX: y", "malformed"),
    ],
)
def test_malformed_urls_are_refused_with_a_reason(url, reason):
    with pytest.raises(GuardError, match=reason) as info:
        check_endpoint_url(url, resolver=resolver_for({"api.example": ["93.184.215.14"]}))
    assert "\n" not in str(info.value)


def test_unresolvable_and_slow_names_are_refused():
    with pytest.raises(GuardError, match="does not resolve"):
        check_endpoint_url("https://nonexistent.invalid/v1", resolver=resolver_for({}))

    def slow(*args):
        import time

        time.sleep(2)
        return []

    with pytest.raises(GuardError, match=r"longer than 0\.2 s"):
        check_endpoint_url("https://slow.example/v1", resolver=slow, timeout_s=0.2)


# -- models ---------------------------------------------------------------------------------


def test_outside_public_mode_nothing_is_refused():
    check_model(custom_endpoint("http://127.0.0.1:8000/v1", "m"), public=False)
    check_model(bare_model("ollama/llama3"), public=False)


def test_owner_configured_and_local_models_are_exempt():
    owner = ModelSpec("mine", "ollama/llama3", api_base="http://127.0.0.1:11434", owner_configured=True)
    local = ModelSpec("local/smollm2", "openai/smollm2", api_base="http://127.0.0.1:9999/v1", is_local=True)
    check_model(owner, public=True, resolver=resolver_for({}))
    check_model(local, public=True, resolver=resolver_for({}))


def test_custom_endpoint_to_loopback_is_refused_in_public_mode():
    spec = custom_endpoint("http://localhost:8000/v1", "m", "sk-x")
    with pytest.raises(GuardError, match="loopback"):
        check_model(spec, public=True, resolver=resolver_for({"localhost": ["127.0.0.1"]}))


@pytest.mark.parametrize(
    "name", ["openai/gpt-4o-mini", "groq/llama-3.1-8b-instant", "together_ai/meta-llama/Llama-3.3-70B"]
)
def test_allowed_providers_pass(name):
    check_model(bare_model(name), public=True, env={})


@pytest.mark.parametrize(
    "name, reason",
    [
        ("ollama/llama3", "not available"),
        ("bedrock/anthropic.claude-v2", "not available"),
        ("vertex_ai/gemini-pro", "not available"),
        ("hosted_vllm/x", "not available"),
        ("gpt-4o", "write the provider"),
        ("openai/", "write the provider"),
        ("openai/gpt 4o", "characters"),
        ("openai/gpt-4o\n", "characters"),
        ("openai/" + "x" * 300, "characters"),
    ],
)
def test_free_text_models_outside_the_allow_list_are_refused(name, reason):
    spec = ModelSpec(name=name, litellm_model=name)
    with pytest.raises(GuardError, match=reason):
        check_model(spec, public=True, env={})


def test_allow_list_is_configurable():
    env = {"ORBENCH_ALLOWED_PROVIDERS": "groq"}
    check_model(bare_model("groq/x"), public=True, env=env)
    with pytest.raises(GuardError, match="allowed: groq"):
        check_model(bare_model("openai/x"), public=True, env=env)


def test_smuggled_api_base_in_a_bare_model_is_refused():
    spec = ModelSpec("x", "openai/gpt-4o", extra=(("api_base", "http://10.0.0.1"),))
    with pytest.raises(GuardError, match="custom endpoint"):
        check_model(spec, public=True, env={})


def test_check_models_wants_at_least_one():
    with pytest.raises(GuardError, match="at least one model"):
        guards.check_models([], public=True)


def test_custom_prompt_length():
    assert guards.check_custom_prompt("  hi  ", max_chars=10) == "hi"
    with pytest.raises(GuardError, match="empty"):
        guards.check_custom_prompt("   ")
    with pytest.raises(GuardError, match="11 characters; the limit is 10"):
        guards.check_custom_prompt("x" * 11, max_chars=10)


# -- per-session limits ---------------------------------------------------------------------


def test_cell_cap_per_run():
    limiter = SessionLimiter(max_cells=16, runs_per_minute=100, env={})
    limiter.check_run(16)
    with pytest.raises(GuardError, match=r"17 cells .* allows 16 per run"):
        limiter.check_run(17)
    with pytest.raises(GuardError, match="400 cells"):  # no run is exempt, whoever configured its models
        limiter.check_run(400)
    with pytest.raises(GuardError, match="Nothing to run"):
        limiter.check_run(0)


def test_runs_per_minute_roll_over():
    now = [1000.0]
    limiter = SessionLimiter(max_cells=10, runs_per_minute=3, env={}, clock=lambda: now[0])
    for _ in range(3):
        limiter.check_run(1)
        now[0] += 1
    with pytest.raises(GuardError, match=r"3 runs per minute .* try again in 57 s"):
        limiter.check_run(1)
    with pytest.raises(GuardError):  # a refused run does not extend the wait
        limiter.check_run(1)
    now[0] = 1060.0
    limiter.check_run(1)


def test_limits_come_from_the_environment():
    limiter = SessionLimiter(env={"ORBENCH_MAX_CELLS": "5", "ORBENCH_RUNS_PER_MINUTE": "2"})
    assert (limiter.max_cells, limiter.runs_per_minute) == (5, 2)
    fallback = SessionLimiter(env={"ORBENCH_MAX_CELLS": "lots", "ORBENCH_RUNS_PER_MINUTE": "-1"})
    assert (fallback.max_cells, fallback.runs_per_minute) == (guards.DEFAULT_MAX_CELLS, guards.DEFAULT_RUNS_PER_MINUTE)


def test_sessions_do_not_share_limits():
    a, b = SessionLimiter(runs_per_minute=1, env={}), SessionLimiter(runs_per_minute=1, env={})
    a.check_run(1)
    b.check_run(1)  # b is not slowed down by a
    with pytest.raises(GuardError):
        a.check_run(1)


# -- at connect time: pinning, rebinding, redirects ------------------------------------------


async def _run_one(spec, timeout_s=30.0):  # the first-chunk limit: a loaded box may take seconds to start
    config = RunConfig(models=(spec,), prompts=(PROMPT,), timeout_s=timeout_s, max_retries=0, use_cache=False)
    (result,) = await engine.collect(config)
    return result


async def test_dns_rebinding_between_check_and_connect_is_refused(fake, monkeypatch, no_egress):
    """The name passes the check, then re-resolves to loopback: the engine refuses to connect."""
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    answers = iter([["93.184.215.14"], ["127.0.0.1"]])
    monkeypatch.setattr(
        guards.endpoints, "_system_resolver", lambda host, port, *a: resolver_for({host: next(answers)})(host, port)
    )
    spec = custom_endpoint(f"http://rebind.example:{fake.port}/v1", "answer", "sk-x")
    check_model(spec)  # first answer: public
    result = await _run_one(spec)
    assert result.verdict == "error" and "cannot reach rebind.example (127.0.0.1)" in result.error
    assert fake.request_count() == 0


@pytest.fixture
def loopback_counts_as_public(monkeypatch):
    """Let the fake server on 127.0.0.1 stand in for a public host."""
    real = guards.endpoints.address_problem
    monkeypatch.setattr(guards.endpoints, "address_problem", lambda ip: None if ip.is_loopback else real(ip))


async def test_connection_is_pinned_to_the_checked_address(fake, monkeypatch, no_egress, loopback_counts_as_public):
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    monkeypatch.setattr(guards.endpoints, "_system_resolver", resolver_for({"pinned.example": ["127.0.0.1"]}))
    spec = custom_endpoint(f"http://pinned.example:{fake.port}/v1", "answer", "sk-x")
    result = await _run_one(spec)
    assert result.ok, result.error
    (request,) = fake.requests
    assert request.headers["Host"] == f"pinned.example:{fake.port}"  # the name was kept, the address pinned
    assert "pinned.example" not in no_egress.lookups  # the HTTP stack never resolved it itself


@pytest.fixture
async def redirector(fake):
    """A server on 127.0.0.1 that answers every request with a 307 to the fake server."""

    async def handler(request):
        raise web.HTTPTemporaryRedirect(fake.base_url + "/chat/completions")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield site._server.sockets[0].getsockname()[1]
    await runner.cleanup()


async def test_redirects_are_refused_in_public_mode(
    fake, redirector, monkeypatch, no_egress, loopback_counts_as_public
):
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    monkeypatch.setattr(guards.endpoints, "_system_resolver", resolver_for({"bouncer.example": ["127.0.0.1"]}))
    spec = custom_endpoint(f"http://bouncer.example:{redirector}/v1", "answer", "sk-x")
    result = await _run_one(spec)
    assert result.verdict == "error"
    assert "redirect (307)" in result.error and "does not follow redirects" in result.error
    assert fake.request_count() == 0  # the redirect target was never asked


async def test_redirects_are_followed_outside_public_mode(fake, redirector, no_egress):
    """Documents LiteLLM's default (why the guard exists): without public mode a 307 is followed."""
    spec = custom_endpoint(f"http://127.0.0.1:{redirector}/v1", "answer", "sk-x")
    result = await _run_one(spec)
    assert result.ok and fake.request_count() == 1


# -- bad input on the command line ------------------------------------------------------------


def _cli(*args, env_extra=None, cwd=None):
    import os

    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run(
        [sys.executable, "-m", "orbench_play", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    "args, reason",
    [
        (["run", "--model", "openai/answer", "--split", "hard-1k", "--n", "0"], "--n"),
        (["run", "--model", "openai/answer", "--split", "hard-1k", "--n", "many"], "--n"),
        (["run", "--model", "openai/answer", "--split", "hard-1k", "--per-category", "-3"], "--per-category"),
        (["run", "--model", "openai/answer", "--split", "nope", "--n", "2"], "--split"),
        (["run", "--model", "openai/answer", "--split", "hard-1k", "--categories", "nonsense", "--n", "2"], "nonsense"),
        (["run", "--split", "hard-1k", "--n", "2"], "--model"),
        (["run", "--model", " ", "--split", "hard-1k", "--n", "2"], "model"),
        (
            [
                "run",
                "--model",
                "openai/answer",
                "--split",
                "hard-1k",
                "--n",
                "2",
                "--config",
                "/nonexistent/models.yaml",
            ],
            "does not exist",
        ),
        (["run", "--model", "openai/answer", "--split", "hard-1k", "--n", "2", "--timeout", "0"], "--timeout"),
        (["run", "--model", "openai/answer", "--split", "hard-1k", "--n", "2", "--temperature", "7"], "--temperature"),
        (["run", "--model", "openai/answer", "--split", "hard-1k", "--n", "2", "--repeats", "99"], "--repeats"),
        (
            [
                "run",
                "--model",
                "openai/answer",
                "--split",
                "hard-1k",
                "--n",
                "2",
                "--system-prompt",
                "@/nonexistent/p.txt",
            ],
            "system prompt",
        ),
        (
            ["judge", "/nonexistent/in.csv", "--prompt-col", "p", "--response-col", "r", "--out", "o.csv"],
            "does not exist",
        ),
    ],
)
def test_cli_rejects_nonsense_with_one_line(args, reason, tmp_path):
    proc = _cli(*args, cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-500:])
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("orbench-play: error:") and reason in lines[0], lines[0]
    assert "Traceback" not in proc.stderr + proc.stdout


def test_cli_rejects_an_unreadable_config(tmp_path):
    bad = tmp_path / "models.yaml"
    bad.write_text("model_list: [unclosed\n")
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("just: a mapping\n")
    for path, reason in ((bad, "not valid YAML"), (binary, "cannot be read"), (wrong, "model_list")):
        proc = _cli("run", "--model", "x", "--split", "hard-1k", "--n", "2", "--config", str(path), cwd=tmp_path)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and reason in proc.stderr, proc.stderr
