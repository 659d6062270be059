"""What went wrong with a cell, in words the user can act on.

Every exception LiteLLM (or the network under it) can raise is mapped to a
`CellFailure`: a short message for the cell and whether trying again could help.
"""

from __future__ import annotations

import asyncio

from . import budget
from .llm import litellm_module
from .types import ModelSpec


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
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return CellFailure(f"Timed out after {timeout_s:g} s.")
    litellm = litellm_module()
    status = getattr(exc, "status_code", None)
    detail = str(getattr(exc, "message", "") or exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
    if isinstance(exc, litellm.Timeout):
        return CellFailure(f"Timed out after {timeout_s:g} s.")
    unreachable = _connection_failure(exc)
    if unreachable is not None:  # LiteLLM reports these as 500 "Connection error."
        return unreachable
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return CellFailure("Rate limited by the provider (429).", retryable=True, retry_after=_retry_after(exc))
    if isinstance(exc, litellm.AuthenticationError) or status == 401:
        from .models import provider_key_env

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


def _connection_failure(exc: BaseException) -> CellFailure | None:
    """A failure to reach the server at all (DNS, refused, reset before any
    answer), found anywhere in the exception's cause chain."""
    import socket

    seen: set[int] = set()
    cause: BaseException | None = exc
    connect_error = False
    from .guards import GuardError

    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
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
        cause = cause.__cause__ or cause.__context__
    if connect_error:
        return CellFailure("Could not connect to the model server.", retryable=True)
    return None


def reserve_budget(model: ModelSpec, messages: list[dict[str, str]], max_tokens: int):
    """ORBENCH_BUDGET_USD: admit a paid call (None when free/no budget) or fail the cell."""
    try:
        return budget.reserve(model, sum(len(m.get("content") or "") for m in messages), max_tokens)
    except budget.BudgetExceeded as exc:
        raise CellFailure(str(exc)) from None
