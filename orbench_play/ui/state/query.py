"""The URL query form of a run set-up: `/?models=a,b&split=hard-1k,toxic&categories=privacy,illegal&n=2&seed=7`.

`split` lists one or more splits, comma-separated (the default pair is
`hard-1k,toxic`); links made before splits became a list (`split=hard-1k`)
still open as that one split.

After the contract's five keys come the optional generation settings, each only
when it differs from its default (so a default set-up gives exactly the
contract form): `preset` (a `SYSTEM_PROMPTS` key), `temperature`, `top_p`,
`max_tokens`, `repeats`, `focus=1`, `reasoning_effort` (one of
`REASONING_EFFORTS`), and `system` (a custom system prompt's text, which wins
over the preset; at most `MAX_SYSTEM_CHARS` characters, as in the form), and
`follow_up` (a follow-up preset key, `followups.PRESETS`, when not the default
"clarify": what the follow-up boxes start on), and `settle=1` / `settle=0` (the
settle switch, when it differs from its default for the link's models: on for
the embedded demo models only).
Then the verdicts' judge and the prompt set, each only when set: `judge` (a
name from the page's *Verdicts by* menu, when not the app's default; the page
checks it is offered here), `prompts` (a prompt set's Hub id, written as the
CLI's `--prompts` takes it), `prompt_col` (when not `prompt`), `category_col`
and `label_col`. A prompt set that is a local file or folder is never in a
link (it is on the sharer's disk), nor are custom endpoints: their key stays in
the visitor's session; the page names what a link leaves out under it.

`parse_query` never raises: a bad value falls back to the default with a warning
the page shows, because a shared link with a typo should still open.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from urllib.parse import quote

from ...asking.prompts import SYSTEM_PROMPTS
from ...types import CATEGORIES, DEFAULT_MAX_TOKENS, DEFAULT_SPLITS, REASONING_EFFORTS, SPLITS

MAX_MODELS = 6
MAX_PER_CATEGORY = 20
MAX_SEED = 2**31 - 1
DEFAULT_PRESET = "none"
MIN_MAX_TOKENS, MAX_MAX_TOKENS = 32, 8192
"""The range of the page's max-tokens slider (reasoning models' thoughts count against it)."""
MAX_REPEATS = 5
MAX_TEMPERATURE = 2.0
MIN_TOP_P = 0.01
"""top_p must be above 0; a link's top_p <= 0 is clamped up to this."""
MAX_SYSTEM_CHARS = 4000
"""The longest custom system prompt, in the form and in a link (`forms.MAX_PROMPT_CHARS`)."""
DEFAULT_FOLLOW_UP = "clarify"
"""`followups.DEFAULT_PRESET`, the follow-up preset a link leaves out."""
DEFAULT_PROMPT_COL = "prompt"
MAX_NAME_CHARS = 300
"""The longest judge name, prompt-set source or column name a link may carry."""
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass
class Setup:
    models: list[str] = field(default_factory=list)
    split: list[str] = field(default_factory=lambda: list(DEFAULT_SPLITS))
    """One or more of SPLITS, in SPLITS order (a comma string is accepted and split)."""
    categories: list[str] = field(default_factory=list)
    """Empty means all categories."""
    n: int = 1
    seed: int = 0
    preset: str = DEFAULT_PRESET
    """A `SYSTEM_PROMPTS` key."""
    temperature: float | None = None
    """None: the provider's default (0 is a real setting)."""
    top_p: float | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    repeats: int = 1
    focus: bool = False
    system: str = ""
    """A custom system prompt (empty: the preset's)."""
    reasoning_effort: str = ""
    """One of REASONING_EFFORTS, or "" for the provider's default."""
    follow_up: str = DEFAULT_FOLLOW_UP
    """The follow-up preset the follow-up boxes start on (a `followups.PRESETS` key)."""
    settle: bool | None = None
    """The settle switch; None: its default for the models (`handlers.base.settle_default`)."""
    judge: str = ""
    """Who decides verdicts (the *Verdicts by* menu's value); empty: the app's default."""
    prompts: str = ""
    """A prompt set's source (a Hub id in a link; a local path only in a session's own set-up)."""
    prompt_col: str = DEFAULT_PROMPT_COL
    category_col: str = ""
    label_col: str = ""

    def __post_init__(self) -> None:
        self.split = split_names(self.split)


def _int(value: str, lo: int, hi: int, name: str, default: int, warnings: list[str]) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        warnings.append(f"Ignored {name}={value!r} in the link: not a whole number.")
        return default
    if not lo <= number <= hi:
        clamped = max(lo, min(hi, number))
        warnings.append(f"{name}={number} in the link is out of range; using {clamped}.")
        return clamped
    return number


def _float(value: str, lo: float, hi: float, name: str, default: float | None, warnings: list[str]) -> float | None:
    text = str(value).strip()
    if not text:  # `temperature=`: the provider's default
        return None
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if math.isnan(number):
        warnings.append(f"Ignored {name}={value!r} in the link: not a number.")
        return default
    if not lo <= number <= hi:
        clamped = max(lo, min(hi, number))
        warnings.append(f"{name}={text} in the link is out of range; using {clamped:g}.")
        return clamped
    return number


def number_text(value: float) -> str:
    """Shortest text that reads back as the same float: 0.7, 1, 0.05."""
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


def _split_list(value: str) -> list[str]:
    out: list[str] = []
    for part in str(value).split(","):
        part = part.strip()
        if part and part not in out:
            out.append(part)
    return out


def split_names(value: str | Sequence[str] | None) -> list[str]:
    """`"toxic,hard-1k"` or `["toxic", "hard-1k"]` → `["hard-1k", "toxic"]`: the known
    splits in SPLITS order, then anything else as given (callers validate)."""
    parts = [] if value is None else [value] if isinstance(value, str) else list(value)
    names = [n.lower() for part in parts for n in _split_list(str(part))]
    return [s for s in SPLITS if s in names] + [n for n in dict.fromkeys(names) if n not in SPLITS]


def parse_query(params: Mapping[str, str], default: Setup | None = None) -> tuple[Setup, list[str]]:
    """Query parameters → (set-up, warnings). Unknown keys are ignored."""
    base = default or Setup()
    setup = replace(base, models=list(base.models), split=list(base.split), categories=list(base.categories))
    warnings: list[str] = []
    if "models" in params:
        names = _split_list(params["models"])
        if len(names) > MAX_MODELS:
            warnings.append(f"The link names {len(names)} models; using the first {MAX_MODELS}.")
            names = names[:MAX_MODELS]
        setup.models = names
    if "split" in params:
        names = split_names(str(params["split"]))
        known = [n for n in names if n in SPLITS]
        unknown = [n for n in names if n not in SPLITS]
        if unknown or not known:
            using = "" if known else f"; using {','.join(setup.split)}"
            warnings.append(
                f"Ignored unknown split{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(repr(n) for n in unknown) or '(none given)'} in the link{using}."
            )
        if known:
            setup.split = known
    if "categories" in params:
        cats = [c.lower() for c in _split_list(params["categories"])]
        if "all" in cats or not cats:
            setup.categories = []
        else:
            bad = [c for c in cats if c not in CATEGORIES]
            if bad:
                warnings.append(
                    f"Ignored unknown categor{'y' if len(bad) == 1 else 'ies'} in the link: {', '.join(bad)}."
                )
            setup.categories = [c for c in cats if c in CATEGORIES]
    if "n" in params:
        setup.n = _int(params["n"], 1, MAX_PER_CATEGORY, "n", setup.n, warnings)
    if "seed" in params:
        setup.seed = _int(params["seed"], 0, MAX_SEED, "seed", setup.seed, warnings)
    if "preset" in params:
        preset = str(params["preset"]).strip().lower()
        if preset in SYSTEM_PROMPTS:
            setup.preset = preset
        else:
            warnings.append(
                f"Unknown system prompt preset {preset!r} in the link; using {setup.preset} "
                f"(one of {', '.join(SYSTEM_PROMPTS)})."
            )
    if "temperature" in params:
        setup.temperature = _float(
            params["temperature"], 0.0, MAX_TEMPERATURE, "temperature", setup.temperature, warnings
        )
    if "top_p" in params:
        setup.top_p = _float(params["top_p"], MIN_TOP_P, 1.0, "top_p", setup.top_p, warnings)
    if "max_tokens" in params:
        setup.max_tokens = _int(
            params["max_tokens"], MIN_MAX_TOKENS, MAX_MAX_TOKENS, "max_tokens", setup.max_tokens, warnings
        )
    if "repeats" in params:
        setup.repeats = _int(params["repeats"], 1, MAX_REPEATS, "repeats", setup.repeats, warnings)
    if "focus" in params:
        flag = str(params["focus"]).strip().lower()
        if flag in _TRUE or flag in _FALSE:
            setup.focus = flag in _TRUE
        else:
            warnings.append(f"Ignored focus={params['focus']!r} in the link: use focus=1 or focus=0.")
    if "system" in params:
        text = str(params["system"]).strip()
        if len(text) > MAX_SYSTEM_CHARS:
            warnings.append(
                f"Ignored the link's system prompt: it has {len(text):,} characters, the limit is {MAX_SYSTEM_CHARS:,}."
            )
        else:
            setup.system = text
    if "reasoning_effort" in params:
        effort = str(params["reasoning_effort"]).strip().lower()
        if effort in REASONING_EFFORTS or not effort:
            setup.reasoning_effort = effort
        else:
            warnings.append(
                f"Ignored reasoning_effort={params['reasoning_effort']!r} in the link: use one of "
                f"{', '.join(REASONING_EFFORTS)}."
            )
    if "settle" in params:
        flag = str(params["settle"]).strip().lower()
        if flag in _TRUE or flag in _FALSE:
            setup.settle = flag in _TRUE
        else:
            warnings.append(f"Ignored settle={params['settle']!r} in the link: use settle=1 or settle=0.")
    if "judge" in params:
        name = _plain_text(params["judge"], "judge", warnings)
        if name is not None:
            setup.judge = name
    if "prompts" in params:
        source = _plain_text(params["prompts"], "prompts", warnings)
        if source is not None:
            setup.prompts = source
    for column_key in ("prompt_col", "category_col", "label_col"):
        if column_key in params:
            column = _plain_text(params[column_key], column_key, warnings)
            if column is not None:
                setattr(setup, column_key, column or (DEFAULT_PROMPT_COL if column_key == "prompt_col" else ""))
    if "follow_up" in params:
        from ...asking.followups import preset_key

        key = preset_key(str(params["follow_up"]))
        if key is None:
            warnings.append(f"Ignored follow_up={params['follow_up']!r} in the link: use clarify, again or why.")
        else:
            setup.follow_up = key
    return setup, warnings


def _plain_text(value: str, name: str, warnings: list[str]) -> str | None:
    """A link's name-like value (judge, prompt set, column): trimmed, one line, at most
    MAX_NAME_CHARS; None (with a warning) when it is not that."""
    text = str(value).strip()
    if len(text) > MAX_NAME_CHARS or any(ord(c) < 32 or ord(c) == 127 for c in text):
        warnings.append(f"Ignored {name}= in the link: not a name of at most {MAX_NAME_CHARS} characters on one line.")
        return None
    return text


def to_query(
    models: Sequence[str], split: str | Sequence[str], categories: Sequence[str] | None, n: int, seed: int, *,
    preset: str | None = DEFAULT_PRESET, temperature: float | None = None, top_p: float | None = None,
    max_tokens: int | None = DEFAULT_MAX_TOKENS, repeats: int | None = 1, focus: bool = False, system: str = "",
    reasoning_effort: str | None = None, follow_up: str | None = None, settle: bool | None = None,
    judge: str | None = None, prompts: str | None = None, prompt_col: str | None = None,
    category_col: str | None = None, label_col: str | None = None,
) -> str:  # fmt: skip
    """The shareable query string (starting with `?`): the contract's keys in its
    order, then each generation setting that differs from its default. A custom
    `system` prompt (which wins over the preset, so pass `preset=None` with it)
    goes last, cut to MAX_SYSTEM_CHARS as the form would refuse more;
    None/NaN temperature or top_p means the provider's default; `settle`, `judge`
    and `prompts` are written when given (the caller gives them only when they are
    not the default, and a prompt set only when a link can carry it), the columns
    only with a prompt set and when not their default."""
    safe = "/@:._-~"
    cats = list(categories or [])
    parts = [
        "models=" + ",".join(quote(m, safe=safe) for m in models),
        "split=" + ",".join(quote(s, safe=safe) for s in split_names(split)),
        "categories=" + (",".join(quote(c, safe=safe) for c in cats) if cats else "all"),
        f"n={int(n)}",
        f"seed={int(seed)}",
    ]
    if preset and preset != DEFAULT_PRESET:
        parts.append("preset=" + quote(preset, safe=safe))
    for key, value in (("temperature", temperature), ("top_p", top_p)):
        if value is not None and not math.isnan(float(value)):
            parts.append(f"{key}={number_text(value)}")
    if max_tokens is not None and int(max_tokens) != DEFAULT_MAX_TOKENS:
        parts.append(f"max_tokens={int(max_tokens)}")
    if repeats is not None and int(repeats) != 1:
        parts.append(f"repeats={int(repeats)}")
    if focus:
        parts.append("focus=1")
    if reasoning_effort in REASONING_EFFORTS:
        parts.append(f"reasoning_effort={reasoning_effort}")
    if follow_up and follow_up != DEFAULT_FOLLOW_UP:
        parts.append("follow_up=" + quote(follow_up, safe=safe))
    if settle is not None:
        parts.append(f"settle={int(bool(settle))}")
    if judge:
        parts.append("judge=" + quote(judge[:MAX_NAME_CHARS], safe=safe))
    if prompts:
        parts.append("prompts=" + quote(prompts[:MAX_NAME_CHARS], safe=safe))
        columns = (("prompt_col", prompt_col, DEFAULT_PROMPT_COL), ("category_col", category_col, ""))
        for name, column, default in (*columns, ("label_col", label_col, "")):
            if column and column != default:
                parts.append(f"{name}=" + quote(column[:MAX_NAME_CHARS], safe=safe))
    text = (system or "").strip()
    if text:
        parts.append("system=" + quote(text[:MAX_SYSTEM_CHARS], safe=""))
    return "?" + "&".join(parts)
