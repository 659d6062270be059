"""Who may replay a cached answer: the credential scope in a cache key.

The owner's models (the model list, key-gated presets, bare LiteLLM strings,
which all run on the owner's keys) and the embedded model are shared by every
visitor on purpose: anyone may run them, so anyone may replay their answers,
and their keys are not part of the cache key. A visitor's custom endpoint is
different: its answers are only for whoever holds its credential. Its cache
keys carry an HMAC-SHA256 of the credential under a per-installation secret,
so visitor B, with no key or a wrong one, misses visitor A's entries and is
sent to the endpoint (which refuses B), while A replays them.

The secret is 32 random bytes in `credential-hmac.key` in the cache folder,
mode 0600, created atomically; with the cache in Redis, it is kept there
instead (`redis_store`), so every replica computes the same keys. The API key itself is never written anywhere,
and the HMAC only ever enters the SHA-256 digest that is the cache key.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import secrets
from pathlib import Path
from typing import Any

from ..runtime.redis_link import redis_url
from ..types import ModelSpec

log = logging.getLogger(__name__)

CREDENTIAL_KEY_FILE = "credential-hmac.key"
SECRET_BYTES = 32
_SECRET_BYTES = SECRET_BYTES
_secrets: dict[str, bytes] = {}
_shared: dict[str, bytes] = {}
"""The secret every replica shares, by Redis URL, when the cache lives there (`redis_store`)."""


def use_shared_secret(secret: bytes, url: str) -> None:
    """While ORBENCH_REDIS_URL is `url`, scope keys with the secret kept there:
    replicas sharing a cache must compute the same keys for the same credential."""
    if len(secret) != SECRET_BYTES:
        raise ValueError(f"the shared secret must be {SECRET_BYTES} bytes")
    _shared[url] = secret


def shared_secret() -> bytes | None:
    """The shared secret of the Redis this process is set to use, once fetched."""
    url = redis_url()
    return _shared.get(url) if url else None


def _read_secret(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if len(data) != _SECRET_BYTES:
        raise OSError(f"{path} holds {len(data)} bytes, not {_SECRET_BYTES}")
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)  # readable by others: close it again
    return data


def _create_secret(folder: Path) -> bytes:
    """Write a new secret with mode 0600, atomically: another process that
    creates one at the same time wins or loses as a whole (link fails if the
    name exists), and nobody ever reads a half-written file."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CREDENTIAL_KEY_FILE
    secret = secrets.token_bytes(_SECRET_BYTES)
    tmp = folder / f".{CREDENTIAL_KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:  # no fsync: losing it in a crash only turns old entries into misses
            fh.write(secret)
        try:
            os.link(tmp, path)
        except FileExistsError:
            existing = _read_secret(path)
            if existing is None:
                raise
            return existing
        return secret
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def installation_secret(folder: str | os.PathLike[str] | None = None) -> bytes:
    """The HMAC secret of the cache at `folder` (default: `default_cache_dir()`),
    read or created once per process. When the folder cannot hold it (read-only
    disk...), a secret for this process only is used, with a warning: visitor
    endpoint answers then do not outlive the process, which is the safe side."""
    if folder is None:
        shared = shared_secret()
        if shared is not None:
            return shared
        from .paths import default_cache_dir

        folder = default_cache_dir()
    where = folder if isinstance(folder, Path) else Path(folder)
    key = str(where)
    secret = _secrets.get(key)
    if secret is None:
        try:
            secret = _read_secret(where / CREDENTIAL_KEY_FILE) or _create_secret(where)
        except OSError as exc:
            log.warning("cache secret unavailable at %s (%s); using one for this process only", where, exc)
            secret = secrets.token_bytes(_SECRET_BYTES)
        secret = _secrets.setdefault(key, secret)
    return secret


def credential_scope(model: ModelSpec) -> str | None:
    """Which credential's entries an answer from `model` belongs to: None for
    models everyone shares (owner-configured, presets, bare strings, the
    embedded model), else an HMAC of the visitor's key (`"none"` when they gave
    none: an open endpoint's answers are shared by everyone who gives no key)."""
    if model.owner_configured or model.is_local or not (model.api_base or model.api_key):
        return None
    credential = (model.api_key or "").encode("utf-8")
    return hmac.new(installation_secret(), credential, hashlib.sha256).hexdigest()


def cache_identity(model: ModelSpec) -> dict[str, Any]:
    """`model.identity()`, plus the credential scope for a visitor's endpoint.
    Shared models keep exactly their old keys (existing caches stay valid)."""
    identity = model.identity()
    scope = credential_scope(model)
    if scope is not None:
        identity["credential"] = scope
    return identity


def visitor_key(address: str) -> str:
    """A visitor's address as the run limits know it: an HMAC under the same
    secret, so the shared store (Redis) never holds an address in clear."""
    return hmac.new(installation_secret(), b"visitor:" + address.encode("utf-8"), hashlib.sha256).hexdigest()[:32]
