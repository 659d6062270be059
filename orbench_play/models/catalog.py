"""The model catalog: what a user can pick, and how each pick reaches LiteLLM.

Four sources, in the order they are listed: the embedded local model, entries
from a LiteLLM Router `model_list` YAML (owner-configured, so trusted), presets
that appear only when their provider key is in the environment, and — at
resolve time — any bare LiteLLM model string or a custom OpenAI-compatible
endpoint. Nothing here calls a provider; a misconfigured entry carries an
`error` that the engine reports per cell instead of crashing the run.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import math
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..types import ModelSpec
from .schema import ModelListProblem, check_model_list

log = logging.getLogger(__name__)


class CatalogError(Exception):
    """A model config that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True, slots=True)
class Preset:
    env_var: str
    name: str
    litellm_model: str
    label: str


PRESETS: tuple[Preset, ...] = (
    Preset("OPENAI_API_KEY", "gpt-4o-mini", "openai/gpt-4o-mini", "GPT-4o mini (OpenAI)"),
    Preset("OPENAI_API_KEY", "gpt-4.1-mini", "openai/gpt-4.1-mini", "GPT-4.1 mini (OpenAI)"),
    Preset(
        "ANTHROPIC_API_KEY", "claude-3-5-haiku", "anthropic/claude-3-5-haiku-latest", "Claude 3.5 Haiku (Anthropic)"
    ),
    Preset("ANTHROPIC_API_KEY", "claude-sonnet-4", "anthropic/claude-sonnet-4-20250514", "Claude Sonnet 4 (Anthropic)"),
    Preset("GEMINI_API_KEY", "gemini-2.0-flash", "gemini/gemini-2.0-flash", "Gemini 2.0 Flash (Google)"),
    Preset("GROQ_API_KEY", "groq-llama-3.1-8b", "groq/llama-3.1-8b-instant", "Llama 3.1 8B (Groq)"),
    Preset(
        "TOGETHERAI_API_KEY",
        "together-llama-3.3-70b",
        "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo",
        "Llama 3.3 70B (Together)",
    ),
    Preset(
        "TOGETHER_API_KEY",
        "together-llama-3.3-70b",
        "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo",
        "Llama 3.3 70B (Together)",
    ),
    Preset("MISTRAL_API_KEY", "mistral-small", "mistral/mistral-small-latest", "Mistral Small (Mistral)"),
    Preset(
        "OPENROUTER_API_KEY",
        "openrouter-llama-3.1-8b",
        "openrouter/meta-llama/llama-3.1-8b-instruct",
        "Llama 3.1 8B (OpenRouter)",
    ),
    Preset(
        "HF_TOKEN", "hf-llama-3.1-8b", "huggingface/meta-llama/Llama-3.1-8B-Instruct", "Llama 3.1 8B (Hugging Face)"
    ),
)
"""One cheap, well-known chat model per provider; they appear only with the key set."""

_ENV_REF = re.compile(r"^os\.environ/([A-Za-z_][A-Za-z0-9_]*)$")
_KEY_ENV_FOR_PROVIDER = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "groq": "GROQ_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "huggingface": "HF_TOKEN",
}


@dataclass(slots=True)
class Catalog:
    """The models on offer, by name, in display order."""

    entries: dict[str, ModelSpec] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def names(self) -> list[str]:
        return list(self.entries)

    def choices(self) -> list[tuple[str, str]]:
        """(label, name) pairs for a dropdown."""
        return [(spec.display, name) for name, spec in self.entries.items()]

    def resolve(self, name: str) -> ModelSpec:
        """A catalog entry, or a bare LiteLLM model string taken as is."""
        name = name.strip()
        if not name:
            raise CatalogError("Empty model name.")
        if name in self.entries:
            return self.entries[name]
        from . import embedded

        if name in embedded.MODELS:  # an embedded model that is not installed: say how to install it
            return embedded_spec(name)
        from ..verdicts.presets import is_preset_name, preset_spec

        if is_preset_name(name):
            # a judge preset ("paper", "paper:together"): the engine resolves judges here too
            spec = preset_spec(name)
            if spec is None:
                raise CatalogError(f"Unknown paper judge {name!r}; choose paper or paper:together.")
            return spec
        return bare_model(name)


@functools.cache
def _model_map() -> dict[str, Any]:
    """LiteLLM's model map as the package ships it (the offline copy LiteLLM
    itself reads with LITELLM_LOCAL_MODEL_COST_MAP): read from the file, so
    that knowing which models reason does not cost `import litellm` (~7 s)."""
    spec = importlib.util.find_spec("litellm")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / "model_prices_and_context_window_backup.json"
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("could not read LiteLLM's model map at %s: %s", path, exc)
            continue
        if isinstance(found, dict):
            return found
    return {}


def _map_entry(litellm_model: str) -> dict[str, Any] | None:
    """LiteLLM's model map entry of a model, by its full name or by its name without
    the provider prefix when the map files it under that provider."""
    table = _model_map()
    entry = table.get(litellm_model)
    if not isinstance(entry, dict) and "/" in litellm_model:
        provider, rest = litellm_model.split("/", 1)
        entry = table.get(rest)
        if isinstance(entry, dict) and entry.get("litellm_provider") != provider:
            entry = None
    return entry if isinstance(entry, dict) else None


def reasons(litellm_model: str) -> bool:
    """Whether LiteLLM's model map says the model reasons before it answers (`supports_reasoning`)."""
    entry = _map_entry(litellm_model)
    return bool(entry is not None and entry.get("supports_reasoning") is True)


def listed_price(spec: ModelSpec) -> tuple[float, float] | None:
    """(input, output) dollars per token that LiteLLM's model map lists for `spec`, read
    without importing LiteLLM; (0, 0) for the embedded models; None when the map has no
    price, or for a model behind its own base URL (whose cells the cost column counts
    as $0: its price is its owner's to know)."""
    if spec.is_local:
        return 0.0, 0.0
    if spec.api_base:
        return None
    entry = _map_entry(spec.litellm_model)
    if entry is None:
        return None
    try:
        prices = float(entry.get("input_cost_per_token") or 0), float(entry.get("output_cost_per_token") or 0)
    except (TypeError, ValueError):
        return None
    return prices if all(math.isfinite(p) and p >= 0 for p in prices) and any(prices) else None


def bare_model(name: str) -> ModelSpec:
    """Any LiteLLM model string (`groq/llama-3.1-8b-instant`, `gpt-4o`...).

    Whether it exists is the provider's call: a wrong name becomes a clear
    per-cell error from the engine, not a refusal to start.
    """
    return ModelSpec(name=name, litellm_model=name, label=name, reasons=reasons(name))


_KEY_ALIASES = {
    "TOGETHERAI_API_KEY": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_API_KEY"),
    "HF_TOKEN": ("HF_TOKEN", "HUGGINGFACE_API_KEY"),
}


def unset_provider_key(litellm_model: str, env: Mapping[str, str] | None = None) -> str | None:
    """The key variable of a `provider/model` string's provider when none of its names
    is set (`GROQ_API_KEY` for `groq/…`); None when it is set, or the provider is not
    one we know (a bare name's provider is LiteLLM's guess, so it gets None too)."""
    env = os.environ if env is None else env
    if "/" not in litellm_model:
        return None
    key = _KEY_ENV_FOR_PROVIDER.get(litellm_model.split("/", 1)[0])
    if key is None or any(env.get(k) for k in _KEY_ALIASES.get(key, (key,))):
        return None
    return key


MAX_MODEL_ID_CHARS = 200


def model_id_problem(model_id: str) -> str:
    """Why `model_id` cannot name a model ("" when it can): control characters (CR,
    ESC…), invisible formatting and bidi overrides, line or paragraph separators, or
    more than MAX_MODEL_ID_CHARS characters. Such an id would travel into exports,
    dataset cards and the terminal."""
    if len(model_id) > MAX_MODEL_ID_CHARS:
        return f"is longer than {MAX_MODEL_ID_CHARS} characters"
    bad = sorted({c for c in model_id if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")})
    if bad:
        shown = ", ".join(f"U+{ord(c):04X}" for c in bad[:5])
        return f"has control or invisible formatting characters ({shown})"
    return ""


def custom_endpoint(base_url: str, model_id: str, api_key: str | None = None) -> ModelSpec:
    """A model behind any OpenAI-compatible server, for spot-checking a new model."""
    base_url = (base_url or "").strip().rstrip("/")
    model_id = (model_id or "").strip()
    parsed = urlparse(base_url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        shown = "(with a user name or password, not shown)" if "@" in base_url else repr(base_url[:100])
        raise CatalogError(f"Custom endpoint URL {shown} is not an http(s) URL like https://host:8000/v1.")
    if not model_id:
        raise CatalogError("Custom endpoint needs a model id (the name the server expects).")
    problem = model_id_problem(model_id)
    if problem:
        raise CatalogError(f"Custom endpoint model id {problem}.")
    try:
        port = parsed.port
    except ValueError:  # "Port out of range 0-65535", or not a number
        raise CatalogError("Custom endpoint URL has a port that is not a number from 1 to 65535.") from None
    host = parsed.hostname + (f":{port}" if port else "")
    return ModelSpec(
        name=f"custom/{model_id}@{host}",
        litellm_model=f"openai/{model_id}",
        label=f"{model_id} @ {host} (custom endpoint)",
        api_base=base_url,
        # The OpenAI client insists on some key; servers without auth ignore it.
        api_key=(api_key or "").strip() or "none",
    )


def embedded_spec(name: str) -> ModelSpec:
    """The catalog entry of one embedded model (see `embedded.MODELS`); when it is not
    installed, the entry carries the install hint as its error, so its cells say what to do."""
    from . import embedded

    model = embedded.get(name)
    return ModelSpec(
        name=model.name,
        litellm_model=f"openai/{model.served_id}",
        label=model.label,
        api_key="none",
        # a run's own temperature wins (`engine.calls.completion_kwargs` sets it after these)
        extra=(("temperature", model.temperature),) if model.temperature is not None else (),
        max_concurrency=embedded.slots(model.name),
        is_local=True,
        max_tokens=model.max_tokens,
        timeout_s=model.timeout_s,
        idle_timeout_s=model.idle_timeout_s,
        token_timeout_s=model.token_timeout_s,
        error=None if embedded.is_available(model.name) else model.install_hint,
    )


def local_specs() -> list[ModelSpec]:
    """The embedded demo models that are installed, in catalog order."""
    from . import embedded

    return [embedded_spec(name) for name in embedded.MODELS if embedded.is_available(name)]


def local_spec(name: str | None = None) -> ModelSpec | None:
    """One embedded model (default: SmolLM2), when its packages are installed."""
    from . import embedded

    name = name or embedded.LOCAL_MODEL_NAME
    return embedded_spec(name) if embedded.is_available(name) else None


def missing_embedded_hints() -> list[str]:
    """Install hints of the embedded models that are missing, when at least one is
    installed (an install without any, e.g. no `local` extra, is deliberate)."""
    from . import embedded

    missing = [m for m in embedded.MODELS.values() if not embedded.is_available(m.name)]
    if len(missing) == len(embedded.MODELS):
        return []
    return [m.install_hint for m in missing]


def _resolve_env_refs(value: Any, env: Mapping[str, str], missing: list[str]) -> Any:
    if isinstance(value, str):
        match = _ENV_REF.match(value.strip())
        if match:
            var = match.group(1)
            if var not in env:
                missing.append(var)
                return None
            return env[var]
    return value


def load_model_list(
    path: str | os.PathLike[str], env: Mapping[str, str] | None = None
) -> tuple[list[ModelSpec], list[str]]:
    """Entries of a LiteLLM Router `model_list` YAML as ModelSpecs, plus warnings."""
    import yaml

    env = os.environ if env is None else env
    file = Path(path)
    try:
        raw = yaml.safe_load(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CatalogError(f"Model config {file} does not exist.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"Model config {file} cannot be read: {exc}.") from None
    except yaml.YAMLError as exc:
        raise CatalogError(f"Model config {file} is not valid YAML: {str(exc).splitlines()[0]}.") from None
    except RecursionError:
        raise CatalogError(f"Model config {file} is nested too deeply to read.") from None
    except (ValueError, TypeError) as exc:  # e.g. an impossible date such as 2024-02-30
        raise CatalogError(
            f"Model config {file} cannot be parsed: {(str(exc).splitlines() or [''])[0][:120]}."
        ) from None
    try:
        check_model_list(raw)
    except ModelListProblem as problem:
        raise CatalogError(f"{file}{', ' + problem.where if problem.where else ''}: {problem}.") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("model_list"), list):
        raise CatalogError(f"Model config {file} must have a top-level `model_list:` list (LiteLLM Router format).")

    specs: list[ModelSpec] = []
    warnings: list[str] = []
    for index, entry in enumerate(raw["model_list"], start=1):
        where = f"{file}, model_list entry {index}"
        if not isinstance(entry, dict) or not isinstance(entry.get("litellm_params"), dict):
            raise CatalogError(f"{where}: needs `model_name` and a `litellm_params` mapping.")
        name = str(entry.get("model_name") or "").strip()
        params = dict(entry["litellm_params"])
        model = str(params.pop("model", "") or "").strip()
        if not name or not model:
            raise CatalogError(f"{where}: needs `model_name` and `litellm_params.model`.")
        missing: list[str] = []
        params = {k: _resolve_env_refs(v, env, missing) for k, v in params.items()}
        settings = stream_settings(params, entry.get("model_info"), where)
        api_key = params.pop("api_key", None)
        api_base = params.pop("api_base", None) or params.pop("base_url", None)
        parallel = params.pop("max_parallel_requests", None) or (entry.get("model_info") or {}).get(
            "max_parallel_requests"
        )
        for router_only in ("rpm", "tpm", "order", "weight"):
            params.pop(router_only, None)
        error = None
        if missing:
            error = f"Model {name}: environment variable {', '.join(sorted(set(missing)))} is not set."
            warnings.append(error)
        info = entry.get("model_info") or {}
        label = str(info.get("label") or name)
        said = info.get("supports_reasoning")
        if said is not None and not isinstance(said, bool):
            raise CatalogError(f"{where}: model_info.supports_reasoning must be true or false, got {said!r}.")
        specs.append(
            ModelSpec(
                name=name,
                litellm_model=model,
                label=label,
                api_base=api_base,
                api_key=api_key,
                extra=tuple(sorted((str(k), v) for k, v in params.items() if v is not None)),
                max_concurrency=int(parallel) if parallel else 8,
                owner_configured=True,
                error=error,
                reasons=reasons(model) if said is None else said,
                **settings,
            )
        )
    return specs, warnings


_STREAM_SETTINGS = (
    # (where, key, ModelSpec field, whole number, zero allowed)
    ("litellm_params", "max_tokens", "max_tokens", True, False),
    ("litellm_params", "timeout", "timeout_s", False, False),
    ("litellm_params", "stream_timeout", "idle_timeout_s", False, False),
    ("model_info", "timeout_per_token", "token_timeout_s", False, True),
)


def stream_settings(params: dict[str, Any], model_info: Any, where: str) -> dict[str, Any]:
    """A model_list entry's own max tokens and time limits, as ModelSpec fields.

    `litellm_params.max_tokens` is the model's default max tokens (a run may
    ask for another number); `litellm_params.timeout` its first-chunk limit and
    the base of its overall limit; `litellm_params.stream_timeout` the longest
    silence between two chunks; `model_info.timeout_per_token` the overall
    limit's allowance per requested token (see `timeouts`). They are taken out
    of `params`: the engine passes its own values to LiteLLM.
    """
    info = model_info if isinstance(model_info, dict) else {}
    found: dict[str, Any] = {}
    for section, key, field_name, whole, zero in _STREAM_SETTINGS:
        source = params if section == "litellm_params" else info
        raw = source.pop(key, None) if source is params else source.get(key)
        if raw is None:
            continue
        try:
            value = float(raw)
        except (TypeError, ValueError):
            value = math.nan
        low_ok = value >= 0 if zero else value > 0
        if isinstance(raw, bool) or not math.isfinite(value) or not low_ok or (whole and value != int(value)):
            kind = "a whole number" if whole else "a number of seconds"
            bound = "0 or more" if zero else "above 0"
            raise CatalogError(f"{where}: {section}.{key} must be {kind}, {bound}, got {raw!r}.")
        found[field_name] = int(value) if whole else value
    return found


def load_catalog(
    config_path: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    *,
    include_local: bool = True,
) -> Catalog:
    """Build the catalog. `config_path` defaults to ORBENCH_MODELS.

    A broken config is a CatalogError (the CLI turns it into exit 2; the UI
    into a banner), because silently dropping the owner's models would mislead.
    """
    env = os.environ if env is None else env
    catalog = Catalog()
    if include_local:
        for spec in local_specs():
            catalog.entries[spec.name] = spec
        catalog.warnings.extend(missing_embedded_hints())
    path = config_path or env.get("ORBENCH_MODELS")
    if path:
        specs, warnings = load_model_list(path, env)
        catalog.warnings.extend(warnings)
        for spec in specs:
            catalog.entries[spec.name] = spec
    for preset in PRESETS:
        if env.get(preset.env_var) and preset.name not in catalog.entries:
            catalog.entries[preset.name] = ModelSpec(
                name=preset.name,
                litellm_model=preset.litellm_model,
                label=preset.label,
                reasons=reasons(preset.litellm_model),
            )
    return catalog


def with_api_base(spec: ModelSpec, api_base: str) -> ModelSpec:
    """The local model's address is only known once its server is up."""
    return replace(spec, api_base=api_base)


def provider_key_env(litellm_model: str) -> str | None:
    """The env var a provider's key usually lives in (for friendlier auth errors)."""
    provider = litellm_model.split("/", 1)[0] if "/" in litellm_model else "openai"
    return _KEY_ENV_FOR_PROVIDER.get(provider)
