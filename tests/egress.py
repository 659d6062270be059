"""A test-only network fence: nothing may leave 127.0.0.1.

`no_egress` (a fixture every test can use: conftest.py provides it) patches name resolution
and `socket.connect` for the duration of a test:

- `getaddrinfo` answers only for loopback names and literal addresses; every
  other name fails as an unknown host *without asking a resolver* (so a DNS
  failure test sends no DNS query either), and is recorded in `fence.lookups`;
- a connect to a non-loopback address is refused and recorded in
  `fence.blocked`; the fixture fails the test if anything was blocked unless
  the test cleared the list on purpose.
"""

from __future__ import annotations

import ipaddress
import socket
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", ""}


@dataclass
class Fence:
    lookups: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)


def _is_loopback_literal(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0]).is_loopback
    except ValueError:
        return False


@contextmanager
def fenced():
    """The fence as a context manager (for module-scoped fixtures and scripts)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        fence = Fence()
        real_getaddrinfo = socket.getaddrinfo
        real_connect = socket.socket.connect
        real_connect_ex = socket.socket.connect_ex

        def getaddrinfo(host, *args, **kwargs):
            name = host.decode() if isinstance(host, bytes) else (host or "")
            if name.lower() in _LOCAL_NAMES or _is_loopback_literal(name):
                return real_getaddrinfo(host, *args, **kwargs)
            try:  # a literal public/private address: resolving it is harmless, connecting is fenced
                ipaddress.ip_address(name.strip("[]"))
                return real_getaddrinfo(host, *args, **kwargs)
            except ValueError:
                pass
            fence.lookups.append(name)
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known (test fence)")

        def _check(address):
            host = address[0] if isinstance(address, tuple) and address else None
            if isinstance(host, str) and not _is_loopback_literal(host):
                fence.blocked.append(host)
                raise OSError(101, f"Network is unreachable (test fence blocked {host})")

        def connect(self, address):
            _check(address)
            return real_connect(self, address)

        def connect_ex(self, address):
            _check(address)
            return real_connect_ex(self, address)

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        monkeypatch.setattr(socket.socket, "connect", connect)
        monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
        yield fence
        assert not fence.blocked, f"a test tried to connect outside 127.0.0.1: {fence.blocked}"


@pytest.fixture
def no_egress():
    with fenced() as fence:
        yield fence
