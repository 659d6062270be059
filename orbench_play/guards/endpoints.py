"""Door 1, custom endpoints (server-side request forgery): a visitor's base URL
must be plain http(s) without credentials, and every address its host name
resolves to must be a public one. Checked when the visitor picks the endpoint
(`check_endpoint_url`) and again when the engine connects (`endpoint_client`),
which pins the connection to the address it checked and refuses redirects."""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import functools
import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from ..types import ModelSpec
from .addresses import address_problem
from .lookups import ADD_LOOKUPS, RUN_LOOKUPS, LookupBusy, LookupPool
from .mode import GuardError, public_mode

DNS_TIMEOUT_S = 3.0
RECENT_CHECK_S = 600.0
"""How long a run may fall back on an earlier successful check of a host whose look-up now times out."""
RECENT_HOSTS = 4096

Resolver = Callable[..., Sequence[tuple]]

_recent: collections.OrderedDict[tuple[str, int], tuple[float, list[str]]] = collections.OrderedDict()
"""(host, port) -> (when, addresses) of the latest checks that passed (least recent first)."""
_recent_lock = threading.Lock()


def _remember(host: str, port: int, addresses: list[str]) -> None:
    with _recent_lock:
        _recent[(host.lower(), port)] = (time.monotonic(), list(addresses))
        _recent.move_to_end((host.lower(), port))
        while len(_recent) > RECENT_HOSTS:
            _recent.popitem(last=False)


def _recalled(host: str, port: int) -> list[str] | None:
    """The addresses of a check of `host` that passed within RECENT_CHECK_S, if any."""
    with _recent_lock:
        entry = _recent.get((host.lower(), port))
    if entry is None or time.monotonic() - entry[0] > RECENT_CHECK_S:
        return None
    return list(entry[1])


def _resolve(
    host: str, port: int, resolver: Resolver, timeout_s: float, key: str, pool: LookupPool, share: str | None = None
) -> list[str]:
    """Every address `host` resolves to, with a wall-clock limit (getaddrinfo has none);
    `share`: the visitor whose share of the pool's threads the look-up takes."""
    future = pool.submit(key, resolver, host, port, 0, socket.SOCK_STREAM, share=share)
    try:
        infos = future.result(timeout=timeout_s)
    except concurrent.futures.TimeoutError:
        raise LookupTimeout(f"Looking up {host} took longer than {timeout_s:g} s.") from None
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


class LookupTimeout(GuardError):
    """A DNS look-up took longer than its time limit."""


def _system_resolver(*args):
    return socket.getaddrinfo(*args)


def check_endpoint_url(
    url: str,
    *,
    resolver: Resolver | None = None,
    timeout_s: float | None = None,
    visitor: str | None = None,
    for_run: bool = False,
    share: str | None = None,
) -> list[str]:
    """Refuse a custom endpoint a public demo must not reach; return the checked addresses.

    Every address the host resolves to must be public (a name with one public
    and one private address is refused: the client could pick either).

    The look-up runs in a pool (`lookups`) where no one's hung look-ups hold a
    slot anyone else needs: a visitor adding an endpoint (`visitor`, their
    session) has at most `lookups.PER_KEY` unfinished; a run's re-check
    (`for_run`) has a pool of its own, keyed by host, and when its look-up
    times out it uses the addresses of a check of the same host that passed
    within RECENT_CHECK_S (the connection is pinned to them, so this reaches
    nothing that check did not allow). A fresh answer is always checked anew:
    a name that now resolves inside is refused. `share` (the visitor's address)
    caps how many unfinished look-ups one visitor holds in either pool, across
    all their sessions and hosts (`lookups.PER_SHARE`).
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
    limit = DNS_TIMEOUT_S if timeout_s is None else timeout_s
    pool = RUN_LOOKUPS if for_run else ADD_LOOKUPS
    key = f"host:{host.lower()}" if for_run or visitor is None else f"visitor:{visitor}"
    try:
        addresses = _resolve(host, port, resolver or _system_resolver, limit, key, pool, share)
    except (LookupTimeout, LookupBusy):
        recalled = _recalled(host, port) if for_run else None
        if recalled is None:
            raise
        addresses = recalled  # checked within RECENT_CHECK_S; the look-up is slow or its pool busy now
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
    _remember(host, port, addresses)
    return addresses


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
    addresses = await asyncio.to_thread(
        check_endpoint_url, spec.api_base, resolver=resolve, for_run=True, share=spec.lookup_share
    )
    import openai

    host = (urlsplit(spec.api_base.strip()).hostname or "").rstrip(".")
    return openai.AsyncOpenAI(
        base_url=spec.api_base,
        api_key=spec.api_key or "none",
        max_retries=0,
        http_client=_pinned_http_client(host, addresses[0]),
    )
