"""Door 2, the models a visitor names: a bare LiteLLM string must name an
allowed provider and carry no endpoint or parameters of its own; a custom
endpoint goes through door 1 (`endpoints`)."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping, Sequence

from ..types import ModelSpec
from .endpoints import Resolver, check_endpoint_url
from .mode import GuardError, public_mode

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


def allowed_providers(env: Mapping[str, str] | None = None) -> frozenset[str]:
    """DEFAULT_ALLOWED_PROVIDERS, or the comma list in ORBENCH_ALLOWED_PROVIDERS."""
    env = os.environ if env is None else env
    raw = (env.get("ORBENCH_ALLOWED_PROVIDERS") or "").strip()
    if not raw:
        return DEFAULT_ALLOWED_PROVIDERS
    return frozenset(p.strip().lower() for p in raw.split(",") if p.strip())


def check_model(
    spec: ModelSpec,
    *,
    public: bool | None = None,
    env: Mapping[str, str] | None = None,
    resolver: Resolver | None = None,
    visitor: str | None = None,
    for_run: bool = False,
    share: str | None = None,
) -> None:
    """Raise GuardError when a public demo must not run `spec`; no-op otherwise.
    `visitor` (who adds it), `for_run` (a run's check) and `share` (the visitor's
    address) choose whose DNS slots the look-up of a custom endpoint uses
    (`endpoints.check_endpoint_url`)."""
    if public is None:
        public = public_mode(env)
    if not public or spec.owner_configured or spec.is_local:
        return
    if spec.extra:  # api_base, base_url, extra_headers...: only the owner's model list may set them
        raise GuardError(
            "In the public demo, a model cannot bring its own LiteLLM parameters; add your server as a custom endpoint."
        )
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in spec.litellm_model):
        raise GuardError(
            "A model id may not hold control or invisible formatting characters (CR, ESC, bidi overrides)."
        )
    if spec.api_base:
        check_endpoint_url(spec.api_base, resolver=resolver, visitor=visitor, for_run=for_run, share=share)
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
    specs: Sequence[ModelSpec],
    *,
    public: bool | None = None,
    env: Mapping[str, str] | None = None,
    for_run: bool = True,
    share: str | None = None,
) -> None:
    """`check_model` for each, plus a non-empty list (by default as a run's check;
    `share`: the visitor whose share of the DNS threads the look-ups take)."""
    if not specs:
        raise GuardError("Pick at least one model.")
    for spec in specs:
        check_model(spec, public=public, env=env, for_run=for_run, share=share)
