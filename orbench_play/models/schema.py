"""Checks an owner's LiteLLM `model_list` YAML before the catalog reads it.

The catalog trusts the owner's file for *where* models are, not for its
shape: a typo such as `max_parallel_requests: lots`, `1.0e+400` or
`model_info: 7` must become one line naming the file, the entry and the
field (the page starts and shows it in its banner; the CLI exits 2), never a
traceback at start-up or a crash in the middle of a run.

This layer only validates; `models.load_model_list` parses what passed. Every
field the catalog reads is checked here; a new numeric key gets a row in
`RANGED_FIELDS`. Everything else under `litellm_params` is passed to LiteLLM
as is, so it must be plain data: text, finite numbers, booleans, null, and
lists or mappings (with text keys) of those. YAML dates, NaN and infinities
are refused, and so are structures larger than `MAX_NODES` values (YAML
aliases can make a small file expand into a huge one).
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

from ..types import MAX_TOKENS_CEILING, TOKEN_TIMEOUT_CEILING_S

MAX_NODES = 10_000
MAX_NAME_CHARS = 200

RANGED_FIELDS: dict[str, tuple[type, float, float]] = {
    "max_parallel_requests": (int, 1, 1024),
    "max_tokens": (int, 1, MAX_TOKENS_CEILING),
    "timeout": (float, 0.001, 86_400),
    "stream_timeout": (float, 0.001, 86_400),
    "timeout_per_token": (float, 0, TOKEN_TIMEOUT_CEILING_S),
}
"""Numeric keys the catalog reads (from `litellm_params` or `model_info`): type, minimum, maximum."""

_TEXT_FIELDS = ("api_key", "api_base", "base_url")
"""`litellm_params` keys the catalog reads as text or null (an `os.environ/NAME` reference is text too)."""


class ModelListProblem(ValueError):
    """What is wrong and where: `where` names the entry and field, `str()` the problem."""

    def __init__(self, where: str, problem: str):
        super().__init__(problem)
        self.where = where


_SECRET_WORDS = re.compile(
    r"key|token|secret|passw|pwd|auth|credential|header|cookie|session|signature|private|"
    r"url|base|endpoint|proxy|host|dsn|uri",
    re.IGNORECASE,
)
"""Words in a field's name that mark it as secret-bearing (keys, tokens, passwords,
headers, and URLs, which may carry credentials): its value is never quoted."""


def secret_field(where: str) -> bool:
    """Whether `where` (`litellm_params.api_key[0]`, `model_info.extra_headers.X`) is
    inside a field that may hold a secret."""
    return any(_SECRET_WORDS.search(part) for part in re.split(r"[.\[\]]", where) if part)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _outline(value: Any) -> str:
    """A value in a place that should hold a structure (an entry, `litellm_params`):
    a number, true/false or null as itself; text, lists and mappings by their type
    alone, since a mis-indented secret lands here."""
    if value is None or isinstance(value, bool) or _is_number(value):
        return repr(value)
    return _type_name(value)


def _shown(value: Any, where: str = "") -> str:
    """`value` as an error message may show it: in a secret-bearing field only its
    type ("a list"), else its repr cut to 40 characters; text that looks like a URL
    with credentials is never quoted either."""
    if secret_field(where) or (isinstance(value, str) and "@" in value and "://" in value):
        return _type_name(value)
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_name(value: Any, where: str, what: str) -> str:
    """Text (or a whole number) that is not empty, not huge and has no control or bidi-override characters."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise ModelListProblem(where, f"{what} must be non-empty text, got {_shown(value, where)}")
    if len(value) > MAX_NAME_CHARS:
        raise ModelListProblem(where, f"{what} is longer than {MAX_NAME_CHARS} characters")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in value):
        raise ModelListProblem(
            where, f"{what} {_shown(value, where)} contains control or invisible formatting characters"
        )
    return value.strip()


def check_ranged(key: str, value: Any, where: str) -> None:
    kind, low, high = RANGED_FIELDS[key]
    whole = kind is int
    ok = _is_number(value) and math.isfinite(value) and low <= value <= high and (not whole or value == int(value))
    if not ok:
        noun = "a whole number" if whole else "a number"
        raise ModelListProblem(where, f"must be {noun} from {low:g} to {high:g}, got {_shown(value, where)}")


def check_plain_data(value: Any, where: str, budget: list[int]) -> None:
    """JSON-like data with finite numbers, within the node budget."""
    budget[0] -= 1
    if budget[0] < 0:
        raise ModelListProblem(where, f"is larger than {MAX_NODES:,} values (YAML aliases?)")
    if value is None or isinstance(value, str | bool):
        return
    secret = secret_field(where)
    if _is_number(value):
        if isinstance(value, float) and not math.isfinite(value):
            raise ModelListProblem(where, f"must be a finite number, got {_shown(value, where)}")
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            # inside a secret-bearing field the place stays the field's name: its keys may be secrets too
            check_plain_data(item, where if secret else f"{where}[{i}]", budget)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ModelListProblem(where, f"has a key that is not text: {_shown(key, where)}")
            check_plain_data(item, where if secret else f"{where}.{key}", budget)
        return
    shown = _type_name(value) if secret else f"{type(value).__name__} {_shown(value, where)}"
    raise ModelListProblem(where, f"must be text, a number, true/false, a list or a mapping, got {shown}")


def _is_text_or_null(key: str, value: Any) -> bool:
    """A key may be left out (null) or, for the endpoint, must not be empty text."""
    if value is None:
        return True
    return isinstance(value, str) and (key == "api_key" or bool(value.strip()))


def _check_mapping_fields(mapping: dict, prefix: str, budget: list[int]) -> None:
    for key, value in mapping.items():
        if not isinstance(key, str):
            raise ModelListProblem(prefix, f"has a key that is not text: {_shown(key, prefix)}")
        where = f"{prefix}.{key}"
        if key in RANGED_FIELDS:
            check_ranged(key, value, where)
        elif key in _TEXT_FIELDS and prefix == "litellm_params" and not _is_text_or_null(key, value):
            raise ModelListProblem(where, f"must be text, got {_shown(value, where)}")
        check_plain_data(value, where, budget)


def check_entry(entry: Any, budget: list[int]) -> str:
    """One `model_list` item; returns its model name."""
    if not isinstance(entry, dict):
        raise ModelListProblem("", f"must be a mapping with model_name and litellm_params, got {_outline(entry)}")
    if "model_name" not in entry:
        raise ModelListProblem("model_name", "is missing (needs `model_name` and a `litellm_params` mapping)")
    name = check_name(entry["model_name"], "model_name", "the name")
    params = entry.get("litellm_params")
    if not isinstance(params, dict):
        raise ModelListProblem("litellm_params", f"must be a mapping with at least `model`, got {_outline(params)}")
    if "model" not in params:
        raise ModelListProblem("litellm_params.model", "is missing (the LiteLLM model string)")
    check_name(params["model"], "litellm_params.model", "the model string")
    _check_mapping_fields(params, "litellm_params", budget)
    info = entry.get("model_info")
    if info is not None:
        if not isinstance(info, dict):
            raise ModelListProblem("model_info", f"must be a mapping, got {_outline(info)}")
        if "label" in info:
            check_name(info["label"], "model_info.label", "the label")
        _check_mapping_fields(info, "model_info", budget)
    return name


def check_model_list(raw: Any) -> None:
    """Raise ModelListProblem for the first thing in a loaded YAML document the catalog cannot use."""
    if not isinstance(raw, dict):
        raise ModelListProblem("", f"must be a mapping with a top-level `model_list:` list, got {_outline(raw)}")
    entries = raw.get("model_list")
    if not isinstance(entries, list):
        raise ModelListProblem(
            "model_list", f"must be a list of models (LiteLLM Router format), got {_outline(entries)}"
        )
    budget = [MAX_NODES]
    for index, entry in enumerate(entries, start=1):
        label = f"model_list entry {index}"
        if isinstance(entry, dict) and isinstance(entry.get("model_name"), str) and entry["model_name"].strip():
            label += f" ({repr(entry['model_name'].strip()[:40])[1:-1]})"
        try:
            check_entry(entry, budget)
        except ModelListProblem as problem:
            raise ModelListProblem(f"{label}, {problem.where}" if problem.where else label, str(problem)) from None
