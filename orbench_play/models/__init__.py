"""The models a user can pick: the catalog, the owner's model_list checks, and the
embedded models with their servers.

Modules: `catalog` (what a user can pick and how each pick reaches LiteLLM: the
embedded models, the owner's `model_list` YAML, key-gated presets, bare LiteLLM
strings, custom endpoints), `schema` (the owner's `model_list` checked before the
catalog reads it), `embedded` (the embedded demo models served by llama.cpp in this
process; `python -m orbench_play.models.embedded` serves one alone).

`from orbench_play.models import load_catalog` (and the catalog's other public
names) is how the rest of the code uses it; the embedded servers are
`orbench_play.models.embedded`.

May import: `types`, `runtime`, `cache` (the folder Qwen's joined file lives in),
`verdicts` (judge presets). Never the engine, the UI or the CLI.
"""

from .catalog import (
    PRESETS,
    Catalog,
    CatalogError,
    Preset,
    bare_model,
    custom_endpoint,
    embedded_spec,
    listed_price,
    load_catalog,
    load_model_list,
    local_spec,
    local_specs,
    missing_embedded_hints,
    provider_key_env,
    reasons,
    stream_settings,
    unset_provider_key,
    with_api_base,
)

__all__ = [
    "PRESETS",
    "Catalog",
    "CatalogError",
    "Preset",
    "bare_model",
    "custom_endpoint",
    "embedded_spec",
    "listed_price",
    "load_catalog",
    "load_model_list",
    "local_spec",
    "local_specs",
    "missing_embedded_hints",
    "provider_key_env",
    "reasons",
    "stream_settings",
    "unset_provider_key",
    "with_api_base",
]
