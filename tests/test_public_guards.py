"""Issue 13, items 5 and 7: public-mode guards that had gaps.

- A free-text model string that carries its own endpoint (a URL anywhere in
  it, a scheme, a `..` walk, or LiteLLM parameters of its own) is refused:
  LiteLLM calls `huggingface/<URL>` at that URL with the owner's `HF_TOKEN`.
- Every block of IANA's special-purpose address registries (IPv4 and IPv6),
  multicast, deprecated site-local fec0::/10 and the reserved IPv6 space are
  refused as custom-endpoint addresses; ordinary public addresses, and NAT64
  or 6to4 forms of them, still pass.
- The per-run cell cap has no exemption (the UI side is in test_ui_guards.py).
"""

from __future__ import annotations

import ipaddress
import socket

import pytest

from orbench_play.guards import GuardError, SessionLimiter, addresses, check_endpoint_url, check_model
from orbench_play.models import bare_model, custom_endpoint
from orbench_play.types import ModelSpec
from orbench_play.ui.state.session import new_session

# -- model strings that carry an endpoint --------------------------------------------

ENDPOINT_STRINGS = [
    "huggingface/https://evil.example/v1",
    "huggingface/http://127.0.0.1:8080",
    "huggingface/HTTPS://evil.example",
    "huggingface/http:/evil.example/v1",
    "huggingface/https:evil.example",
    "huggingface/together/https://evil.example",
    "openai/gpt-4o//evil.example",
    "openai//evil.example/v1",
    "groq/ws://evil.example",
    "openrouter/file:/etc/passwd",
    "gemini/../../v1beta/files",
    "gemini/gemini-pro/..",
    "together_ai/./x",
    "mistral/unix:/var/run/docker.sock",
]


@pytest.mark.parametrize("name", ENDPOINT_STRINGS)
def test_model_strings_that_carry_an_endpoint_are_refused(name):
    with pytest.raises(GuardError, match=r"own address|characters"):
        check_model(bare_model(name), public=True, env={})


@pytest.mark.parametrize(
    "name",
    [
        "huggingface/meta-llama/Llama-3.1-8B-Instruct",
        "huggingface/together/deepseek-ai/DeepSeek-R1",
        "huggingface/Qwen/Qwen2.5-7B-Instruct:fastest",
        "openrouter/meta-llama/llama-3.1-8b-instruct",
        "fireworks_ai/accounts/fireworks/models/llama-v3p1-8b-instruct",
        "groq/llama3-8b-8192",
        "openai/gpt-4o-2024-08-06",
        "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo",
        "gemini/gemini-2.0-flash",
        "anthropic/claude-3-5-haiku@20241022",
    ],
)
def test_ordinary_model_strings_still_pass(name):
    check_model(bare_model(name), public=True, env={})


@pytest.mark.parametrize(
    "extra",
    [
        (("api_base", "http://10.0.0.1"),),
        (("base_url", "https://evil.example"),),
        (("api_host", "evil.example"),),
        (("extra_headers", {"Host": "internal"}),),
        (("temperature", 0.5),),
    ],
)
def test_visitor_models_cannot_bring_litellm_parameters(extra):
    for spec in (
        ModelSpec("x", "openai/gpt-4o", extra=extra),
        ModelSpec("y", "openai/m", api_base="https://api.example/v1", extra=extra),
    ):
        with pytest.raises(GuardError, match="custom endpoint"):
            check_model(spec, public=True, env={})


def test_the_owners_model_list_may_still_point_anywhere():
    owner = ModelSpec(
        "mine", "huggingface/http://127.0.0.1:8080", extra=(("api_base", "http://10.0.0.1"),), owner_configured=True
    )
    check_model(owner, public=True, env={})


async def test_a_huggingface_url_model_never_receives_the_owners_token(fake, monkeypatch, no_egress):
    """The reported attack, end to end through the playground: the token must not reach the URL."""
    from orbench_play.models import load_catalog
    from orbench_play.ui.handlers.playground import Playground

    token = "hf_planted_owner_token"
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    monkeypatch.setenv("HF_TOKEN", token)
    playground = Playground(load_catalog(env={}, include_local=False))
    model = f"huggingface/http://127.0.0.1:{fake.port}"
    frames = [f async for f in playground.run_prompt("hello", [model], 32, new_session())]
    assert "own address" in frames[-1][0]
    assert not any(token in str(r.headers) for r in fake.requests)
    assert fake.request_count() == 0


# -- addresses: IANA special-purpose registries ------------------------------------------


def _samples(network: str) -> list[str]:
    net = ipaddress.ip_network(network)
    picks = {net.network_address, net.broadcast_address, net.network_address + net.num_addresses // 2}
    return [str(ip) for ip in sorted(picks)]


SPECIAL = [
    (sample, network, what)
    for network, what in addresses.SPECIAL_PURPOSE_V4 + addresses.SPECIAL_PURPOSE_V6
    for sample in _samples(network)
]


def resolve_to(address: str):
    def resolve(host, port, *args, **kwargs):
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (address, port))]

    return resolve


@pytest.mark.parametrize(("address", "network", "what"), SPECIAL, ids=[f"{s[1]}:{s[0]}" for s in SPECIAL])
def test_every_special_purpose_block_is_refused(address, network, what):
    assert addresses.address_problem(ipaddress.ip_address(address)) is not None
    with pytest.raises(GuardError, match="cannot reach"):
        check_endpoint_url("https://endpoint.example/v1", resolver=resolve_to(address))


@pytest.mark.parametrize(
    "address",
    [
        "fec0::1",  # deprecated site-local, the reported gap
        "feff:ffff::1",
        "3fff:fff::1",  # documentation (RFC 9637)
        "5f00::1",  # SRv6 SIDs
        "192.0.0.9",  # PCP anycast: "globally reachable", still no endpoint lives there
        "192.88.99.1",  # deprecated 6to4 relay anycast
        "2620:4f:8000::1",
        "::a9fe:a9fe",  # IPv4-compatible (deprecated) form of 169.254.169.254
        "1::1",  # reserved IPv6 space outside 2000::/3
        "4000::1",
        "64:ff9b::c000:209",  # NAT64 of 192.0.2.9 (TEST-NET-1)
        "2002:c000:209::1",  # 6to4 of 192.0.2.9
        "::ffff:198.18.0.1",  # IPv4-mapped benchmarking address
    ],
)
def test_reported_and_audited_gaps_are_refused(address):
    with pytest.raises(GuardError, match="cannot reach"):
        check_endpoint_url("https://endpoint.example/v1", resolver=resolve_to(address))


@pytest.mark.parametrize(
    "address",
    ["8.8.8.8", "1.1.1.1", "104.18.0.1", "2606:4700::1111", "2a00:1450:4001::1", "64:ff9b::808:808", "2002:808:808::1"],
)
def test_public_addresses_and_their_nat64_and_6to4_forms_pass(address):
    assert check_endpoint_url("https://api.example/v1", resolver=resolve_to(address)) == [address]


def test_custom_endpoints_keep_working_with_a_public_address():
    spec = custom_endpoint("https://api.example/v1", "m", "sk-x")
    check_model(spec, public=True, env={}, resolver=resolve_to("8.8.8.8"))


# -- no exemption from the cell cap --------------------------------------------------------


def test_the_cell_cap_has_no_exemption():
    limiter = SessionLimiter(max_cells=80, runs_per_minute=100, env={})
    with pytest.raises(TypeError):
        limiter.check_run(400, exempt=True)  # type: ignore[call-arg]  # the parameter is gone on purpose
    with pytest.raises(GuardError, match="400 cells"):
        limiter.check_run(400)
