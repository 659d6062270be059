"""What went wrong with a cell, in words the user can act on.

Every exception LiteLLM (or the network under it) can raise is mapped to a
`CellFailure`: a short message for the cell and whether trying again could help.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

from .. import budget
from ..types import ModelSpec
from .llm import litellm_module


class CellFailure(Exception):
    """A cell that ended without an answer; `message` is what the user sees."""

    def __init__(self, message: str, *, retryable: bool = False, retry_after: float | None = None):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(exc, "headers", None) or getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
    except Exception:
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return None


def describe_failure(exc: BaseException, spec: ModelSpec, timeout_s: float) -> CellFailure:
    """Map any exception from LiteLLM (or the network under it) to a short
    human message, and say whether trying again could help."""
    if isinstance(exc, CellFailure):
        return exc
    from ..models.embedded import LocalModelError

    if isinstance(exc, LocalModelError):  # its message already says why and what to do
        return CellFailure(str(exc).splitlines()[0][:300])
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return CellFailure(f"Timed out after {timeout_s:g} s.")
    missing = _missing_key(exc, spec)
    if missing is not None:
        return missing
    litellm = litellm_module()
    status = getattr(exc, "status_code", None)
    detail = str(getattr(exc, "message", "") or exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
    if isinstance(exc, litellm.Timeout):
        return CellFailure(f"Timed out after {timeout_s:g} s.")
    unbuilt = _request_not_built(exc, spec)
    if unbuilt is not None:  # LiteLLM reports these as connection errors too
        return unbuilt
    unreachable = _connection_failure(exc)
    if unreachable is not None:  # LiteLLM reports these as 500 "Connection error."
        return unreachable
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return CellFailure("Rate limited by the provider (429).", retryable=True, retry_after=_retry_after(exc))
    if isinstance(exc, litellm.AuthenticationError) or status == 401:
        from ..models import provider_key_env

        hint = provider_key_env(spec.litellm_model)
        return CellFailure("Authentication failed (401): check the API key" + (f" ({hint})." if hint else "."))
    if isinstance(exc, litellm.PermissionDeniedError) or status == 403:
        return CellFailure("Access denied by the provider (403).")
    if isinstance(exc, litellm.NotFoundError) or status == 404:
        return CellFailure(f"Unknown model or endpoint (404): {spec.litellm_model}.")
    if isinstance(exc, litellm.ContentPolicyViolationError):
        return CellFailure("content_filter")  # handled as a provider refusal by the caller
    if isinstance(exc, (litellm.InternalServerError, litellm.ServiceUnavailableError, litellm.BadGatewayError)) or (
        isinstance(status, int) and status >= 500
    ):
        return CellFailure(
            f"Provider error ({status or 'server'}): try again later.", retryable=True, retry_after=_retry_after(exc)
        )
    if isinstance(exc, litellm.APIConnectionError):
        return CellFailure(f"Could not connect to the model server: {detail or 'connection failed'}.", retryable=True)
    if isinstance(exc, litellm.BadRequestError):
        return CellFailure(f"Rejected by the provider: {detail or 'bad request'}.")
    return CellFailure(f"{exc.__class__.__name__}: {detail or 'unexpected error'}.")


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        yield cause
        cause = cause.__cause__ or cause.__context__


# -- the key is missing ---------------------------------------------------------------

_MISSING_KEY = re.compile(
    r"missing credentials|missing [\w ]*api[ _]key|api_key client option must be set|no key is set", re.IGNORECASE
)


def missing_key_names(spec: ModelSpec) -> list[str]:
    """The environment variable(s) LiteLLM would read the provider's key from."""
    try:
        found = litellm_module().validate_environment(model=spec.litellm_model, api_base=spec.api_base)
        names = [str(n) for n in found.get("missing_keys") or []]
    except Exception:
        names = []
    if not names:
        from ..models import provider_key_env

        hint = provider_key_env(spec.litellm_model)
        names = [hint] if hint else []
    return names


def _missing_key(exc: BaseException, spec: ModelSpec) -> CellFailure | None:
    """The provider's SDK refused to send a request without a key (LiteLLM
    reports some of these as a 500), or a provider model string whose key is not
    set failed in any way (`groq/…` without GROQ_API_KEY was reported as a host
    that does not resolve): say which variable to set, never retry."""
    if spec.api_key:
        return None
    from ..models import unset_provider_key

    unset = None if spec.api_base else unset_provider_key(spec.litellm_model)
    if unset:
        return CellFailure(f"No API key for {spec.name}: set {unset} in the environment.")
    if not any(_MISSING_KEY.search(str(c)) for c in _causes(exc)):
        return None
    names = missing_key_names(spec)
    where = f"set {' or '.join(names)} in the environment" if names else "give it an API key"
    return CellFailure(f"No API key for {spec.name}: {where}.")


# -- streams that go wrong after they started --------------------------------------------


def _kept(chars: int) -> str:
    return f" after {chars} characters (partial text kept, not scored)" if chars else ""


def malformed_stream(kind: str, chars: int) -> CellFailure:
    """A chunk that cannot be read: retrying would most likely get the same
    bytes, so this is reported once."""
    what = {
        "utf8": "bytes that are not valid UTF-8",
        "json": "a chunk that is not valid JSON",
        "encoding": "a compressed body that does not decode",
    }[kind]
    return CellFailure(f"Malformed answer stream: the server sent {what}{_kept(chars)}.")


def _transport_errors() -> tuple[type[BaseException], ...]:
    """httpx's (and the OpenAI SDK's httpx2's) errors for a connection that failed mid-body."""
    found = [getattr(sys.modules.get(name), "TransportError", None) for name in ("httpx", "httpx2")]
    return tuple(t for t in found if isinstance(t, type))


def ended_early(chars: int) -> CellFailure:
    """A stream that ended before the answer did (no finish reason, no `[DONE]`),
    on either reader: retried while nothing was shown, like any cut stream."""
    if chars:
        return CellFailure(f"The answer stream broke off{_kept(chars)}.")
    return CellFailure("The connection closed before the answer started.", retryable=True)


def out_of_tokens_thinking(state: Any, max_tokens: int) -> CellFailure:
    """A reasoning model spent its whole budget on thoughts (`finish_reason:
    length` before any answer): not an answer, so not scored or cached; the
    cell says how much went into thoughts and how to give it more."""
    tokens = state.reasoning_tokens or state.completion_tokens
    spent = f"{tokens:,} tokens" if tokens else f"about {max(1, state.thought_chars // 4):,} tokens"
    return CellFailure(
        f"Ran out of tokens while thinking: {spent} went into thoughts and the answer never began "
        f"(max tokens {max_tokens:,}). Raise max tokens (--max-tokens, or Max tokens in the generation "
        "settings), or lower the reasoning effort."
    )


def cut_stream(exc: BaseException, chars: int) -> CellFailure | None:
    """A connection that closed or failed while the answer was streaming; None
    when `exc` is something else."""
    if not isinstance(exc, _transport_errors()):
        return None
    if "Timeout" in type(exc).__name__:
        return CellFailure(f"Timed out: the server stopped sending{_kept(chars)}.")
    return ended_early(chars)


def provider_stream_error(error: Any, chars: int) -> CellFailure:
    """An `{"error": ...}` event in the stream, as the OpenAI SDK raises it."""
    message = error.get("message") if isinstance(error, dict) else None
    message = " ".join(str(message or "no reason given").split())[:160].rstrip(".")
    return CellFailure(f"Provider error mid-stream{_kept(chars)}: {message}.", retryable=not chars)


def stream_failure(exc: BaseException, chars: int) -> CellFailure | None:
    """What a failure after the stream started means, on either reader: a
    malformed chunk, a stream that broke off, or None (describe it as usual)."""
    if isinstance(exc, CellFailure):
        return exc
    for cause in _causes(exc):
        if isinstance(cause, CellFailure):  # ours, raised under LiteLLM's wrapper (a bound, a value)
            return cause
        if isinstance(cause, UnicodeDecodeError):
            return malformed_stream("utf8", chars)
        if isinstance(cause, json.JSONDecodeError):
            return malformed_stream("json", chars)
        if type(cause).__name__ == "APIError" and isinstance(getattr(cause, "body", None), dict):
            return provider_stream_error(cause.body, chars)  # type: ignore[attr-defined]  # an {"error": ...} event
        cut = cut_stream(cause, chars)  # the body ended or broke (LiteLLM reports some of these as a 500)
        if cut is not None:
            return cut
    if chars and not isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return CellFailure(f"The answer stream broke off{_kept(chars)}.")
    return None


# -- the server cannot be reached ---------------------------------------------------------

_CODE_ERRORS = (ValueError, TypeError, KeyError, AttributeError, IndexError, LookupError)


def _request_not_built(exc: BaseException, spec: ModelSpec) -> CellFailure | None:
    """LiteLLM failed in its own code before any request left (e.g. a model
    string its provider cannot parse, such as `huggingface/localhost:8000`)
    and reported it as a connection error: say so, and do not retry, since
    the same string fails the same way every time."""
    causes = list(_causes(exc))
    if type(exc).__name__ != "APIConnectionError" or len(causes) < 2:
        return None
    if any(isinstance(c, (OSError, *_transport_errors())) for c in causes):
        return None
    root = causes[-1]
    if not isinstance(root, _CODE_ERRORS) or isinstance(root, (json.JSONDecodeError, UnicodeError)):
        return None
    detail = " ".join(str(root).split())[:120] or type(root).__name__
    return CellFailure(f"LiteLLM could not make a request for {spec.litellm_model} ({detail}): check the model string.")


def _connection_failure(exc: BaseException) -> CellFailure | None:
    """A failure to reach the server at all (DNS, refused, reset before any
    answer), found anywhere in the exception's cause chain."""
    import socket

    from ..guards import GuardError

    connect_error = False
    for cause in _causes(exc):
        if isinstance(cause, GuardError):  # refused by a public-mode guard (e.g. a redirect)
            return CellFailure(str(cause))
        if isinstance(cause, (TimeoutError, asyncio.TimeoutError)):
            return None
        if isinstance(cause, socket.gaierror):
            return CellFailure("Could not connect to the model server: its host name does not resolve.")
        if isinstance(cause, ConnectionRefusedError):
            return CellFailure("Could not connect to the model server: connection refused.", retryable=True)
        if type(cause).__name__ in ("APIConnectionError", "ConnectError", "ClientConnectorError"):
            connect_error = True
    if connect_error:
        return CellFailure("Could not connect to the model server.", retryable=True)
    return None


async def reserve_budget(model: ModelSpec, messages: list[dict[str, str]], max_tokens: int, ttl_s: float = 900.0):
    """ORBENCH_BUDGET_USD: admit a paid call (None when free/no budget) or fail the
    cell; at most one round trip to a shared ledger. `ttl_s`: the call's overall
    limit, after which a reservation left by a dead process lapses."""
    try:
        return await budget.reserve_async(model, sum(len(m.get("content") or "") for m in messages), max_tokens, ttl_s)
    except budget.BudgetExceeded as exc:
        raise CellFailure(str(exc)) from None
