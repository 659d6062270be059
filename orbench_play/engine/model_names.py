"""Whether LiteLLM can tell which provider serves a model, asked before a run.

A model string LiteLLM cannot place (`slow20`, `relenter`) used to reach every
cell of a run and come back as the provider's raw "LLM Provider NOT provided"
text, although nothing was ever sent. LiteLLM's own resolution
(`get_llm_provider`, the same code `acompletion` runs first) answers the
question in microseconds once LiteLLM is imported, so the page and the CLI ask
it before any cell is made and say in one line what is wrong and how to write
the name.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from ..types import ModelSpec
from .llm import litellm_module

EXAMPLES = "groq/llama-3.1-8b-instant, anthropic/claude-3-5-haiku-latest"


def provider_known(spec: ModelSpec) -> bool:
    """True when LiteLLM can route `spec` (its provider prefix, a model it knows by
    name, or its base URL), or when the spec is not LiteLLM's to route (the
    embedded models; an entry the catalog already knows cannot work reports that
    itself, per cell)."""
    if spec.is_local or spec.error:
        return True
    provider = dict(spec.extra).get("custom_llm_provider")
    try:
        litellm_module().get_llm_provider(
            spec.litellm_model,
            custom_llm_provider=provider if isinstance(provider, str) else None,
            api_base=spec.api_base,
        )
    except Exception:  # LiteLLM raises BadRequestError ("LLM Provider NOT provided") and kin
        return False
    return True


def unknown_model_line(spec: ModelSpec, known: Iterable[str] = (), *, how: str = "") -> str:
    """One line for a model LiteLLM cannot place: what is wrong, then how to write it.
    `known`: the catalog's names (a close one is suggested); `how`: the front's own
    way to add a model (the page's form, the CLI's --config)."""
    close = difflib.get_close_matches(spec.name, list(known), n=1, cutoff=0.6) or difflib.get_close_matches(
        spec.name, _mapped_names(), n=1, cutoff=0.85
    )
    hint = f"Did you mean {close[0]}? " if close else ""
    if spec.owner_configured:
        return (
            f"The model list's entry {spec.name!r} names the model {spec.litellm_model!r}, whose provider LiteLLM "
            f"cannot tell: write it as provider/model in its litellm_params (openai/NAME with api_base for an "
            f"OpenAI-compatible server)."
        )
    ways = f"pick a catalog name, or {how}" if how else "or pick a catalog name"
    return (
        f"Unknown model {spec.name!r}: it is not a catalog name and LiteLLM cannot tell which provider serves it. "
        f"{hint}Write it as provider/model (e.g. {EXAMPLES}), {ways}."
    )


def _mapped_names() -> list[str]:
    """The chat models LiteLLM's model map knows (for "did you mean"), or none."""
    try:
        table = litellm_module().model_cost
    except Exception:
        return []
    return [name for name, entry in table.items() if isinstance(entry, dict) and entry.get("mode") == "chat"]


def first_unknown(specs: Sequence[ModelSpec], known: Iterable[str] = (), *, how: str = "") -> str | None:
    """The line for the first model of `specs` LiteLLM cannot place, or None when it can place them all."""
    names = list(known)
    for spec in specs:
        if not provider_known(spec):
            return unknown_model_line(spec, names, how=how)
    return None
