"""Judge choices: `keyword` (offline), the "paper" presets, or any model.

The paper presets reproduce OR-Bench's response checker: its judge models
(GPT-4 Turbo 2024-04-09 through OpenAI, Llama-3-70b-chat through Together),
temperature 0, the reason first and the class last in double square brackets
(`verdicts.PAPER_JUDGE`). A preset is chosen by name wherever a judge is
(`--judge paper`, `--judge paper:together`, `ORBENCH_JUDGE`, the page's judge
menu); it resolves to a `ModelSpec` named after the preset, so verdicts say
`llm:paper` or `llm:paper:together`. Without its API key a preset still
resolves, carrying an `error` that names the variable to set.

`auto:<judge>` (`--judge auto:paper`, `auto:gpt-4o-mini`) keeps the offline
verdict where the classifier is sure and asks the judge only where it is not
(`needs_judge`); verdicts the judge decided say `llm:<judge>`.

Light on purpose (no LiteLLM): the UI builds its judge menu from here.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

from ..types import ModelSpec
from . import DEFAULT_JUDGE, PAPER_JUDGE, JudgePrompt

KEYWORD = "keyword"
"""The offline classifier alone: no judge call."""
AUTO = "auto:"
"""`auto:<judge>`: the offline classifier, and the LLM judge `<judge>` only for
the answers it is unsure of (`Verdict.confidence` below `AUTO_CONFIDENCE`)."""
AUTO_CONFIDENCE = 0.6
"""Below this confidence the auto mode asks its judge, unless
`ORBENCH_AUTO_CONFIDENCE` says otherwise. Out of fold, each source alike, it
asks about 9% of answers, a third of them wrong, and so reaches 37% of the
classifier's wrong verdicts, but only 6-10% of those on the tiny embedded
models' answers, whose misses look sure; at 0.84 (where the page's badge turns
solid) it asks about 71% and reaches 94% (docs/judges.md)."""
ENV_AUTO_CONFIDENCE = "ORBENCH_AUTO_CONFIDENCE"


def auto_confidence(env: Mapping[str, str] | None = None) -> float:
    """The confidence below which `auto:<judge>` asks its judge: the
    `ORBENCH_AUTO_CONFIDENCE` setting, else AUTO_CONFIDENCE. A ValueError with
    one line for a setting that is not above 0 and at most 1: at 0 it would ask
    about nothing (that is `keyword`), above 1 about everything (that is
    `--judge <judge>`), and a typo should not silently mean either."""
    raw = ((os.environ if env is None else env).get(ENV_AUTO_CONFIDENCE) or "").strip()
    if not raw:
        return AUTO_CONFIDENCE
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value <= 1:
        raise ValueError(
            f"{ENV_AUTO_CONFIDENCE} must be a confidence above 0 and at most 1 (auto: asks its judge below it; "
            f"default {AUTO_CONFIDENCE:g}), got {raw!r}"
        )
    return value


def auto_judge(name: str | None) -> str | None:
    """The judge an `auto:<judge>` choice asks when unsure, else None."""
    value = (name or "").strip()
    if value[: len(AUTO)].lower() == AUTO and value[len(AUTO) :].strip():
        return value[len(AUTO) :].strip()
    return None


def needs_judge(choice: str | None, confidence: float, env: Mapping[str, str] | None = None) -> str | None:
    """The judge to ask about an answer of this confidence under `choice`, or
    None (the offline verdict stands): `keyword` never asks, a judge always,
    `auto:<judge>` only below `auto_confidence` (checked with the choice, by
    `check_judge`, before a run starts)."""
    value = (choice or "").strip()
    if not value or value.lower() == KEYWORD:
        return None
    inner = auto_judge(value)
    if inner is None:
        return value
    return inner if confidence < auto_confidence(env) else None


@dataclass(frozen=True, slots=True)
class JudgePreset:
    name: str
    label: str
    litellm_model: str
    key_vars: tuple[str, ...]
    """Any one of these environment variables holds the provider key."""
    provider: str
    price_like: str | None = None
    """LiteLLM's cost-map entry to price the model by when the map has no entry
    of its own (Together's models are priced by size bucket)."""


PAPER_PRESETS: tuple[JudgePreset, ...] = (
    JudgePreset(
        "paper",
        "OR-Bench paper judge: GPT-4 Turbo 2024-04-09 (OpenAI)",
        "openai/gpt-4-turbo-2024-04-09",
        ("OPENAI_API_KEY",),
        "OpenAI",
    ),
    JudgePreset(
        "paper:together",
        "OR-Bench paper judge: Llama-3-70b-chat (Together)",
        "together_ai/meta-llama/Llama-3-70b-chat-hf",
        ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_API_KEY"),
        "Together",
        price_like="together-ai-41.1b-80b",
    ),
)
_ALIASES = {"paper:openai": "paper", "paper:gpt-4-turbo": "paper", "paper:llama-3-70b": "paper:together"}
_BY_NAME = {p.name: p for p in PAPER_PRESETS}


class JudgeChoiceError(ValueError):
    """A judge name that cannot work; the message says what to do (one line)."""


def find_preset(name: str) -> JudgePreset | None:
    """The paper preset called `name` (or one of its aliases), else None."""
    key = (name or "").strip().lower()
    return _BY_NAME.get(_ALIASES.get(key, key))


def is_preset_name(name: str) -> bool:
    """`paper` or `paper:<anything>`: names the presets own (a typo is an error, not a model)."""
    key = (name or "").strip().lower()
    return key == "paper" or key.startswith("paper:")


def _key(preset: JudgePreset, env: Mapping[str, str]) -> str | None:
    return next((env[v] for v in preset.key_vars if env.get(v)), None)


def missing_key_message(preset: JudgePreset) -> str:
    others = f" (or {', '.join(preset.key_vars[1:])})" if len(preset.key_vars) > 1 else ""
    return (
        f"The {preset.name} judge ({preset.litellm_model.split('/', 1)[1]} via {preset.provider}) needs "
        f"{preset.key_vars[0]}{others}; set it, or choose the keyword judge."
    )


def preset_spec(name: str, env: Mapping[str, str] | None = None) -> ModelSpec | None:
    """The judge model of a paper preset, or None when `name` is no preset.
    Without the provider key the spec carries an `error` naming the variable."""
    preset = find_preset(name)
    if preset is None:
        return None
    env = os.environ if env is None else env
    key = _key(preset, env)
    return ModelSpec(
        name=preset.name,
        litellm_model=preset.litellm_model,
        label=preset.label,
        api_key=key,
        error=None if key else missing_key_message(preset),
    )


def check_judge(name: str | None, env: Mapping[str, str] | None = None) -> str:
    """The judge to use (`keyword`, a preset's name, or a model name), or a
    JudgeChoiceError whose one-line message says what to set or type."""
    value = (name or "").strip() or KEYWORD
    if value.lower() == KEYWORD:
        return KEYWORD
    if value[: len(AUTO)].lower() == AUTO:
        inner = auto_judge(value)
        if inner is None or inner.lower() == KEYWORD or auto_judge(inner) is not None:
            raise JudgeChoiceError(f"{value!r}: auto takes a judge model, e.g. auto:paper or auto:gpt-4o-mini.")
        try:
            auto_confidence(env)
        except ValueError as exc:
            raise JudgeChoiceError(str(exc)) from None
        return AUTO + check_judge(inner, env)
    if not is_preset_name(value):
        return value
    spec = preset_spec(value, env)
    if spec is None:
        choices = ", ".join(p.name for p in PAPER_PRESETS)
        raise JudgeChoiceError(f"Unknown paper judge {value!r}; choose one of {choices}.")
    if spec.error:
        raise JudgeChoiceError(spec.error)
    return spec.name


def prompt_for(spec: ModelSpec) -> JudgePrompt:
    """How to ask this judge model: the paper set-up for a paper preset, else the default."""
    return PAPER_JUDGE if find_preset(spec.name) is not None else DEFAULT_JUDGE


def register_price(spec: ModelSpec, litellm) -> None:
    """Give a preset's model its price in LiteLLM's cost map when the map has
    none of its own. LiteLLM prices Together's chat models by size bucket when
    it prices a whole response, but `cost_per_token` (which the cost column and
    the daily spend cap use) only knows mapped names; the price is copied from
    the bucket's entry of the same map, so both agree."""
    preset = find_preset(spec.name)
    if preset is None or preset.price_like is None or preset.litellm_model in litellm.model_cost:
        return
    bucket = litellm.model_cost.get(preset.price_like)
    if bucket:
        provider = preset.litellm_model.split("/", 1)[0]
        litellm.model_cost[preset.litellm_model] = {
            "input_cost_per_token": bucket["input_cost_per_token"],
            "output_cost_per_token": bucket["output_cost_per_token"],
            "litellm_provider": provider,
            "mode": "chat",
        }


def judge_choices(model_names: list[str], env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(label, value) pairs for a judge menu: keyword, the paper presets whose
    key is set, then the catalog's models; each judge also in its auto form
    (the judge only where the offline classifier is unsure)."""
    env = os.environ if env is None else env
    judges = [(p.label, p.name) for p in PAPER_PRESETS if _key(p, env)]
    judges += [(f"LLM judge: {name}", name) for name in model_names]
    choices = [("Offline classifier (keyword, free)", KEYWORD)]
    for label, value in judges:
        choices.append((label, value))
        choices.append((f"Auto: offline, {label} only when unsure", AUTO + value))
    return choices
