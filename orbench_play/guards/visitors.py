"""Who a visitor is, for the public demo's per-visitor limits: their address,
decided by one explicit trust rule.

The address is the connection's peer, unless the owner says how many reverse
proxies stand in front of the app (`ORBENCH_PROXY_HOPS`, N). Each trusted
proxy appends the address it saw to `X-Forwarded-For`, so with N proxies the
visitor is the N-th entry from the right: whatever the visitor wrote into the
header themselves sits further left and is never read. With fewer entries
than N (a request that skipped a proxy) the leftmost one is taken.

Defaults: 0 (the peer; `X-Forwarded-For` is ignored whoever sends it), and 1
on a Hugging Face Space (`SPACE_ID` set), whose proxy connects from an
internal address and appends the visitor's. Behind your own proxy (nginx on
the same host, a load balancer) set it to the number of proxies.

Gradio's server (uvicorn) would otherwise rewrite the peer from
`X-Forwarded-For` for any request from 127.0.0.1 (`FORWARDED_ALLOW_IPS`), so
a client with access to the port, or behind a local proxy that passes the
header on, could pick its own address; `serve_untrusting` turns that off for
the app's server, and this rule decides alone.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from collections.abc import Iterable, Mapping
from typing import Any

ENV_PROXY_HOPS = "ORBENCH_PROXY_HOPS"
MAX_PROXY_HOPS = 10
SPACE_PROXY_HOPS = 1
"""Proxies in front of a Hugging Face Space's app (the platform's)."""

log = logging.getLogger(__name__)


def proxy_hops(env: Mapping[str, str] | None = None) -> int:
    """How many proxies' `X-Forwarded-For` entries to trust: ORBENCH_PROXY_HOPS
    (0 to 10), else 1 on a Space, else 0. Nonsense trusts nothing (0), with a warning."""
    env = os.environ if env is None else env
    raw = (env.get(ENV_PROXY_HOPS) or "").strip()
    if not raw:
        return SPACE_PROXY_HOPS if (env.get("SPACE_ID") or "").strip() else 0
    try:
        hops = int(raw)
    except ValueError:
        hops = -1
    if not 0 <= hops <= MAX_PROXY_HOPS:
        log.warning("%s=%r is not a whole number from 0 to %d; trusting no proxy", ENV_PROXY_HOPS, raw, MAX_PROXY_HOPS)
        return 0
    return hops


def _plain_ip(text: str) -> str | None:
    """`text` as a normalised IP address (a port or brackets dropped), else None."""
    value = text.strip().strip('"')
    if value.startswith("["):  # [v6]:port
        value = value[1 : value.find("]")] if "]" in value else ""
    elif value.count(":") == 1:  # v4:port
        value = value.split(":", 1)[0]
    try:
        return str(ipaddress.ip_address(value.split("%", 1)[0]))
    except ValueError:
        return None


def visitor_address(peer: str | None, forwarded_for: Iterable[str], hops: int) -> str | None:
    """The visitor's address: the peer with `hops` 0, else the `hops`-th entry from
    the right of the X-Forwarded-For chain (the leftmost when the chain is shorter).
    An entry that is not an IP address falls back to the peer."""
    if hops <= 0:
        return peer
    chain = [part.strip() for header in forwarded_for for part in str(header).split(",") if part.strip()]
    if not chain:
        return peer
    entry = chain[-hops] if len(chain) >= hops else chain[0]
    return _plain_ip(entry) or peer


def _forwarded_headers(request: Any) -> list[str]:
    headers = getattr(request, "headers", None)
    if headers is None:
        return []
    getlist = getattr(headers, "getlist", None)
    if callable(getlist):
        return [str(v) for v in getlist("x-forwarded-for")]
    value = headers.get("x-forwarded-for") if hasattr(headers, "get") else None
    return [str(value)] if value else []


def request_address(request: Any, env: Mapping[str, str] | None = None) -> str | None:
    """The address of the visitor who sent `request` (a `gr.Request` or a Starlette
    request) under the trust rule above; None when it is not known."""
    if request is None:
        return None
    client = getattr(request, "client", None)
    peer = getattr(client, "host", None) or None
    return visitor_address(peer, _forwarded_headers(request), proxy_hops(env))


def serve_untrusting(env: dict[str, str] | os._Environ[str] | None = None) -> None:
    """Before the app's server starts: uvicorn trusts no proxy header for the peer
    (FORWARDED_ALLOW_IPS empty), so `request_address` sees the real connection."""
    env = os.environ if env is None else env
    env["FORWARDED_ALLOW_IPS"] = ""
