"""Public-demo guards: who may reach what, and how much one session may ask.

Public mode (`ORBENCH_PUBLIC=1`, on by default when `SPACE_ID` is set, i.e.
on a Hugging Face Space) closes the three doors a stranger could use the app
through:

1. **Custom endpoints** (server-side request forgery): a visitor's base URL
   must be plain http(s) without credentials, and every address its host name
   resolves to must be a public one — never loopback, private, link-local,
   shared (CGNAT), multicast, reserved, unspecified or a cloud metadata
   address. The check runs twice: when the visitor picks the endpoint
   (`check_model`, a friendly early message) and again when the engine
   connects (`endpoint_client`), which resolves, checks, and then *pins* the
   connection to the address it checked (so a DNS answer that changes between
   check and connect cannot point the request inside), with redirects refused
   (LiteLLM's OpenAI client follows them by default, which would let a public
   server bounce the request to an internal one).
2. **Free-text model strings**: a bare LiteLLM string must name a provider on
   an allow-list (`openai/...`, `groq/...`); provider prefixes that reach local
   daemons (`ollama/`) or cloud credentials of the host (`bedrock/`,
   `vertex_ai/`, `sagemaker/`) are refused, and so is any string that carries
   an endpoint of its own (a URL anywhere in it, e.g. `huggingface/https://...`,
   which LiteLLM would call with the owner's `HF_TOKEN`) or LiteLLM parameters
   of its own (`api_base`...): a visitor's own server is a custom endpoint, and
   goes through check 1.
3. **Volume**: `SessionLimiter` caps prompts × models per run and runs per
   minute per session, with a message that says what to change.

Entries from the owner's `ORBENCH_MODELS` file (`ModelSpec.owner_configured`)
and the embedded local model are trusted and exempt from 1 and 2, never from 3
(they run on the owner's keys and CPU). Outside
public mode every check here is a no-op: on your own machine you may point the
app at localhost.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import functools
import ipaddress
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from urllib.parse import urlsplit

from .addresses import address_problem
from .types import ModelSpec

DEFAULT_ALLOWED_PROVIDERS: frozenset[str] = frozenset(
    {
        "anthropic",
        "cerebras",
        "cohere",
        "deepseek",
        "fireworks_ai",
        "gemini",
        "groq",
        "huggingface",
        "mistral",
        "openai",
        "openrouter",
        "perplexity",
        "together_ai",
        "xai",
    }
)
"""Hosted APIs reached at their fixed public address with a key. Not here on
purpose: `ollama`, `hosted_vllm`, `openai_like`, `lm_studio` (local daemons or
arbitrary bases), `bedrock`, `vertex_ai`, `sagemaker`, `azure` (the host's
cloud credentials or owner-specific deployments)."""

DEFAULT_MAX_CELLS = 80
DEFAULT_RUNS_PER_MINUTE = 6
DEFAULT_MAX_PROMPT_CHARS = 4000
DNS_TIMEOUT_S = 3.0

_MODEL_STRING = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}")
_ENDPOINT_IN_MODEL = re.compile(
    r"//"  # any URL with a host (scheme://host, or //host relative to a base)
    r"|(?:^|/)(?:[a-z][a-z0-9+.-]*:/|https?:|wss?:)"  # a URL scheme starting any path segment
    r"|(?:^|/)\.\.?(?:/|$)",  # a "." or ".." segment: a path walking off the provider's route
    re.IGNORECASE,
)
"""A model string that names its own endpoint. LiteLLM takes `huggingface/https://host/...`
(and `oobabooga/http...`) as the URL to call, sending the provider key from the owner's
environment there; no provider reads a host from a model string in any other form."""

Resolver = Callable[..., Sequence[tuple]]


class GuardError(Exception):
    """A request the public demo refuses; `str(exc)` is the one-line reason for the user."""


# -- mode ---------------------------------------------------------------------------


def public_mode(env: Mapping[str, str] | None = None) -> bool:
    """ORBENCH_PUBLIC=1/true/yes/on, or SPACE_ID set and ORBENCH_PUBLIC not 0/false/no/off."""
    env = os.environ if env is None else env
    flag = (env.get("ORBENCH_PUBLIC") or "").strip().lower()
    if flag in ("1", "true", "yes", "on"):
        return True
    if flag in ("0", "false", "no", "off"):
        return False
    return bool((env.get("SPACE_ID") or "").strip())


def allowed_providers(env: Mapping[str, str] | None = None) -> frozenset[str]:
    """DEFAULT_ALLOWED_PROVIDERS, or the comma list in ORBENCH_ALLOWED_PROVIDERS."""
    env = os.environ if env is None else env
    raw = (env.get("ORBENCH_ALLOWED_PROVIDERS") or "").strip()
    if not raw:
        return DEFAULT_ALLOWED_PROVIDERS
    return frozenset(p.strip().lower() for p in raw.split(",") if p.strip())


# -- addresses ----------------------------------------------------------------------


def _resolve(host: str, port: int, resolver: Resolver, timeout_s: float) -> list[str]:
    """Every address `host` resolves to, with a wall-clock limit (getaddrinfo has none)."""
    future = _RESOLVER_POOL.submit(resolver, host, port, 0, socket.SOCK_STREAM)
    try:
        infos = future.result(timeout=timeout_s)
    except concurrent.futures.TimeoutError:
        raise GuardError(f"Looking up {host} took longer than {timeout_s:g} s.") from None
    except (socket.gaierror, UnicodeError, OSError, ValueError):
        raise GuardError(f"The host name {host} does not resolve.") from None
    addresses: list[str] = []
    for info in infos:
        address = str(info[4][0]).split("%", 1)[0]
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise GuardError(f"The host name {host} does not resolve.")
    return addresses


def _system_resolver(*args):
    return socket.getaddrinfo(*args)


_RESOLVER_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="orbench-dns")


def check_endpoint_url(
    url: str,
    *,
    resolver: Resolver | None = None,
    timeout_s: float = DNS_TIMEOUT_S,
) -> list[str]:
    """Refuse a custom endpoint a public demo must not reach; return the checked addresses.

    Every address the host resolves to must be public (a name with one public
    and one private address is refused: the client could pick either).
    """
    text = (url or "").strip()
    if not text:
        raise GuardError("The custom endpoint URL is empty.")
    if len(text) > 2000 or any(ord(c) < 0x21 or ord(c) == 0x7F for c in text):
        raise GuardError("The custom endpoint URL is malformed (spaces or control characters).")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise GuardError(f"The custom endpoint URL is malformed: {exc}.") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise GuardError("The custom endpoint URL must start with http:// or https://.")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise GuardError(
            "The custom endpoint URL may not contain a user name or password; give the key in the key field."
        )
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise GuardError("The custom endpoint URL has no host name.")
    port = port or (443 if parts.scheme.lower() == "https" else 80)
    addresses = _resolve(host, port, resolver or _system_resolver, timeout_s)
    for address in addresses:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            raise GuardError(f"{host} resolves to something that is not an IP address.") from None
        problem = address_problem(ip)
        if problem:
            shown = host if host == address else f"{host} ({address})"
            raise GuardError(
                f"The public demo cannot reach {shown}: it is {problem}. Use a public endpoint, "
                "or run the app yourself to test a local server."
            )
    return addresses


# -- models -------------------------------------------------------------------------


def check_model(
    spec: ModelSpec,
    *,
    public: bool | None = None,
    env: Mapping[str, str] | None = None,
    resolver: Resolver | None = None,
) -> None:
    """Raise GuardError when a public demo must not run `spec`; no-op otherwise."""
    if public is None:
        public = public_mode(env)
    if not public or spec.owner_configured or spec.is_local:
        return
    if spec.extra:  # api_base, base_url, extra_headers...: only the owner's model list may set them
        raise GuardError(
            "In the public demo, a model cannot bring its own LiteLLM parameters; add your server as a custom endpoint."
        )
    if spec.api_base:
        check_endpoint_url(spec.api_base, resolver=resolver)
        return
    model = spec.litellm_model
    if not _MODEL_STRING.fullmatch(model):
        raise GuardError(f"Model name {model[:80]!r} has characters a model name cannot have.")
    if _ENDPOINT_IN_MODEL.search(model):
        raise GuardError(
            f"Model name {model[:80]!r} carries its own address; the public demo sends free-text models only to "
            "their provider's own API. Add your server as a custom endpoint instead."
        )
    provider, slash, rest = model.partition("/")
    allowed = allowed_providers(env)
    if not slash or not rest:
        raise GuardError(
            f"In the public demo, write the provider before the model name (e.g. openai/{model}); "
            f"allowed providers: {', '.join(sorted(allowed))}."
        )
    if provider.lower() not in allowed:
        raise GuardError(
            f"Provider {provider!r} is not available in the public demo; allowed: {', '.join(sorted(allowed))}."
        )


def check_models(
    specs: Sequence[ModelSpec], *, public: bool | None = None, env: Mapping[str, str] | None = None
) -> None:
    """`check_model` for each, plus a non-empty list."""
    if not specs:
        raise GuardError("Pick at least one model.")
    for spec in specs:
        check_model(spec, public=public, env=env)


def check_custom_prompt(text: str, *, max_chars: int | None = None, env: Mapping[str, str] | None = None) -> str:
    """A visitor's own prompt: stripped, non-empty, at most ORBENCH_MAX_PROMPT_CHARS characters."""
    limit = max_chars or _env_int(env, "ORBENCH_MAX_PROMPT_CHARS", DEFAULT_MAX_PROMPT_CHARS)
    value = (text or "").strip()
    if not value:
        raise GuardError("The custom prompt is empty.")
    if len(value) > limit:
        raise GuardError(f"The custom prompt has {len(value):,} characters; the limit is {limit:,}.")
    return value


# -- connecting -----------------------------------------------------------------------


@functools.cache
def _pinned_transport_class():
    import httpx

    class PinnedTransport(httpx.AsyncBaseTransport):
        """An httpx transport that sends every request to one checked address.

        The URL keeps its host name for the Host header and TLS (SNI and the
        certificate check use the name); only the TCP connection goes to
        `ip`. A request for any other host is refused, and so is following a
        redirect (the client is built with follow_redirects=False; a 3xx
        answer becomes an error here so the user sees why).
        """

        def __init__(self, host: str, ip: str):
            self._host = host.lower()
            self._ip = ip
            self._inner = httpx.AsyncHTTPTransport(trust_env=False, retries=0)

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            if (request.url.host or "").lower() != self._host:
                raise GuardError(
                    f"Refused a request to {request.url.host}: only the checked endpoint host may be reached."
                )
            request.url = request.url.copy_with(host=self._ip)
            if request.url.scheme == "https":
                request.extensions = {**request.extensions, "sni_hostname": self._host}
            response = await self._inner.handle_async_request(request)
            if 300 <= response.status_code < 400 and response.headers.get("location"):
                await response.aclose()
                raise RedirectRefused(
                    f"The endpoint answered with a redirect ({response.status_code}); "
                    "the public demo does not follow redirects. Give the final URL instead."
                )
            return response

        async def aclose(self) -> None:
            await self._inner.aclose()

    return PinnedTransport


class RedirectRefused(GuardError):
    """A custom endpoint answered 3xx in public mode."""


def _pinned_http_client(host: str, ip: str):
    import httpx

    return httpx.AsyncClient(transport=_pinned_transport_class()(host, ip), follow_redirects=False, trust_env=False)


async def endpoint_client(
    spec: ModelSpec,
    *,
    public: bool | None = None,
    resolver: Resolver | None = None,
):
    """For a visitor's custom endpoint in public mode: an `openai.AsyncOpenAI`
    client whose connections go only to the address checked just now, with
    redirects refused. None when no guard applies (pass nothing to LiteLLM).

    Raises GuardError when the endpoint now resolves somewhere it may not go.
    """
    if public is None:
        public = public_mode()
    if not public or spec.owner_configured or spec.is_local or not spec.api_base:
        return None
    resolve = resolver or _system_resolver
    addresses = await asyncio.to_thread(check_endpoint_url, spec.api_base, resolver=resolve)
    import openai

    host = (urlsplit(spec.api_base.strip()).hostname or "").rstrip(".")
    return openai.AsyncOpenAI(
        base_url=spec.api_base,
        api_key=spec.api_key or "none",
        max_retries=0,
        http_client=_pinned_http_client(host, addresses[0]),
    )


# -- per-session limits -----------------------------------------------------------------


def _env_int(env: Mapping[str, str] | None, name: str, default: int) -> int:
    env = os.environ if env is None else env
    raw = (env.get(name) or "").strip()
    try:
        value = int(raw)
    except ValueError:
        return default
    return value if value > 0 else default


class SessionLimiter:
    """Caps one session's runs: cells (prompts × models × repeats) per run and
    runs per rolling minute. Keep one per browser session (e.g. in `gr.State`).

    Limits come from ORBENCH_MAX_CELLS and ORBENCH_RUNS_PER_MINUTE. A refused
    run does not count against the per-minute budget.
    """

    def __init__(
        self,
        max_cells: int | None = None,
        runs_per_minute: int | None = None,
        *,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.max_cells = max_cells or _env_int(env, "ORBENCH_MAX_CELLS", DEFAULT_MAX_CELLS)
        self.runs_per_minute = runs_per_minute or _env_int(env, "ORBENCH_RUNS_PER_MINUTE", DEFAULT_RUNS_PER_MINUTE)
        self._clock = clock
        self._runs: collections.deque[float] = collections.deque()
        self._lock = threading.Lock()

    def check_run(self, n_cells: int) -> None:
        """Admit a run of `n_cells` or raise GuardError saying what to change.

        Every run is capped, whoever configured its models: the owner's
        entries are exempt only from the endpoint and provider checks, since
        they spend the owner's keys too."""
        if n_cells <= 0:
            raise GuardError("Nothing to run: pick at least one prompt and one model.")
        if n_cells > self.max_cells:
            raise GuardError(
                f"This run has {n_cells} cells (prompts × models); the public demo allows {self.max_cells} per run. "
                "Pick fewer prompts or models."
            )
        with self._lock:
            now = self._clock()
            while self._runs and now - self._runs[0] >= 60.0:
                self._runs.popleft()
            if len(self._runs) >= self.runs_per_minute:
                wait = max(1, int(60.0 - (now - self._runs[0]) + 0.999))
                raise GuardError(
                    f"Slow down: the public demo allows {self.runs_per_minute} runs per minute per session; "
                    f"try again in {wait} s."
                )
            self._runs.append(now)
