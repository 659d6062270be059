"""The nouns every part of orbench-play shares.

Kept free of heavy imports (no LiteLLM, no Gradio, no pandas) so that any module,
including the UI at cold start, can import them for free.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any, Literal

SPLITS: tuple[str, ...] = ("hard-1k", "toxic", "80k")
"""OR-Bench splits by their short name. `toxic` is the control set; the others are benign."""

BENIGN_SPLITS: frozenset[str] = frozenset({"hard-1k", "80k"})

DEFAULT_SPLITS: tuple[str, ...] = ("hard-1k", "toxic")
"""What a run draws from unless told otherwise: OR-Bench's benign/toxic pair, so the
first scoreboard has both rates and the mini-score. Both splits ship with the package."""

CATEGORIES: tuple[str, ...] = (
    "deception",
    "harassment",
    "harmful",
    "hate",
    "illegal",
    "privacy",
    "self-harm",
    "sexual",
    "unethical",
    "violence",
)

VerdictLabel = Literal["direct_answer", "direct_refusal", "indirect_refusal", "error"]
CLASS_LABELS: tuple[str, ...] = ("direct_answer", "direct_refusal", "indirect_refusal")
"""OR-Bench's three classes (defined in `verdicts.classes`): what a person or a judge may call an answer."""
VERDICTS: tuple[str, ...] = (*CLASS_LABELS, "error")
REFUSALS: frozenset[str] = frozenset({"direct_refusal", "indirect_refusal"})

RESULT_COLUMNS: tuple[str, ...] = (
    "split",
    "row_id",
    "category",
    "prompt",
    "model",
    "response",
    "verdict",
    "verdict_source",
    "error",
    "latency_s",
    "ttft_s",
    "completion_tokens",
    "cost_usd",
    "cached",
)
"""The contract column order of every CSV/JSONL export. Only append, never reorder."""

EXTRA_COLUMNS: tuple[str, ...] = (
    "system_prompt_id",
    "params",
    "repeat",
    "attempts",
    "retry_wait_s",
    "judge_error",
    "reasoning",
    "reasoning_tokens",
    "ttfa_s",
    "turn",
    "conversation_id",
    "follow_up",
    "expected",
    "p_refusal",
    "sure",
    "settled",
    "settled_at_tokens",
    "saved_tokens",
    "saved_cost_usd",
)
"""Appended after RESULT_COLUMNS: how the model was asked (spot-check workflow),
which of the k repeats of a cell this row is, how many attempts the cell took
and how long the engine waited between them (429/5xx retries), why the LLM
judge's verdict fell back to the offline one (empty when it did not), then a
reasoning model's thoughts (never part of `response`, never judged), the
tokens the provider says went into them, and the time to the first token of
the answer itself (`ttft_s` counts thoughts too); then which turn of the
cell's conversation the row is (1: the OR-Bench prompt itself), the id
shared by every turn of that conversation (the first turn's cell id), and
the follow-up message the turn answers (empty at turn 1); a prompt set's expected
behaviour of the row (`benign`, `should-refuse` or empty; `data.prompt_sets`);
then how sure the verdict is: `p_refusal`, the calibrated probability that the
answer is a refusal of either kind, and `sure` (false: the page shows the verdict
as unsure; both empty for a row without a verdict, `scoring.sureness`); then
whether the answer was stopped once its verdict settled (`RunConfig.settle`), the
output tokens that had arrived when it stopped, and what settling saved: at most the
tokens of max tokens that were not generated, and what they would have cost at the
model's output price (0 where it has none)."""

DEFAULT_MAX_TOKENS = 512
"""Max tokens per answer for a model that has no default of its own."""
REASONING_MAX_TOKENS = 4096
"""The same for a model that reasons before it answers (LiteLLM's model map, or
the model_list's `model_info.supports_reasoning`): its thoughts count against
max tokens, and 512 often ends it before its answer begins."""
TOKEN_TIMEOUT_CEILING_S = 3_600.0
"""The most seconds per max token anything accepts as the overall limit's allowance
(`--token-timeout`, ORBENCH_TOKEN_TIMEOUT_S, the model_list's `timeout_per_token`):
1e308 would turn the overall limit off."""
MAX_TOKENS_CEILING = 131_072
"""The most max tokens per answer anything accepts (CLI, model_list; the page's slider
stops lower): 128 Ki, the largest output a hosted model offers today. It bounds what a
stream may send (32 characters a token, `engine.bounds`) and how long a cell may take
(the timeout plus the per-token allowance × max tokens: at the default 1 s a token,
about 36 h rather than the 3,000 years `--max-tokens 99999999999` used to allow)."""
MAX_RETRIES_CEILING = 10
"""The most retries of one cell after a 429, 5xx or lost connection: with backoff and
`Retry-After` waits, ten already take minutes; more only hides a provider that is down."""
REASONING_EFFORTS: tuple[str, ...] = ("minimal", "low", "medium", "high")
"""Values of the reasoning-effort setting (LiteLLM's `reasoning_effort`)."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """One OR-Bench row. `row_id` is `<split>:<index in the split file>`, stable
    across runs and machines because it comes from the file order, not the sample."""

    row_id: str
    split: str
    category: str
    text: str
    expected: str = ""
    """A prompt set's expected behaviour (`benign` or `should-refuse`, see
    `data.prompt_sets`); empty for OR-Bench, whose split says it."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """A refusal judgement. `final=False` marks a provisional verdict made from a
    streaming prefix; the UI shows it but scoring only counts final ones."""

    label: str
    source: str
    final: bool = True
    rationale: str = ""
    confidence: float = 1.0
    """How sure the layer that decided is, from 0 (a coin toss) to 1. The
    offline classifier's is calibrated on labelled answers (docs/verdicts.md);
    the judge mode `auto:<judge>` asks the LLM judge only below a threshold."""
    p_refusal: float | None = None
    """The calibrated probability that the answer is a refusal of either kind
    (direct or indirect). None from a layer that gives none (old cache entries,
    an older classifier): `scoring.sureness` then derives one, in one place."""
    sure: bool | None = None
    """Whether the verdict is sure enough to show without an "unsure" badge
    (None: derived by `scoring.sureness`, like `p_refusal`)."""

    @property
    def is_refusal(self) -> bool:
        return self.label in REFUSALS


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """How to reach one model through LiteLLM.

    `name` is what users type and see in columns (`local/smollm2-135m`,
    `gpt-4o-mini`, `custom/my-model@host:8000`). `api_key` is deliberately kept
    out of repr and out of `identity()` so it never reaches a cache key, log or export.
    """

    name: str
    litellm_model: str
    label: str = ""
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False, compare=False)
    extra: tuple[tuple[str, Any], ...] = ()
    """Further LiteLLM kwargs from a model_list entry (sorted key/value pairs)."""
    max_concurrency: int = 8
    is_local: bool = False
    """The embedded model: its api_base is only known once the server has started."""
    owner_configured: bool = False
    """From ORBENCH_MODELS/--config: trusted by the owner, so exempt from the public-mode
    endpoint and provider checks (never from the per-run cell cap or the rate limit)."""
    error: str | None = None
    """Set when the catalog knows this entry cannot work (e.g. its key env var is
    missing); the engine reports it per cell instead of calling the provider."""
    max_tokens: int | None = None
    """This model's default max tokens per answer (None: DEFAULT_MAX_TOKENS, or
    REASONING_MAX_TOKENS for a model that reasons), used when a run does not set
    its own (`GenerationParams.max_tokens` is None)."""
    reasons: bool = False
    """The model thinks before it answers (LiteLLM's model map says so, or the model_list)."""
    timeout_s: float | None = None
    idle_timeout_s: float | None = None
    token_timeout_s: float | None = None
    """This model's time limits (see `timeouts`); None: the run's, else the environment's, else the defaults."""
    lookup_share: str | None = field(default=None, repr=False, compare=False)
    """A visitor's custom endpoint: the address of the visitor who added it, whose share
    of the DNS threads a run's re-check of it takes (`guards.lookups`); never stored."""

    def identity(self) -> dict[str, Any]:
        """Everything about the model that can change its answer, minus secrets."""
        return {
            "litellm_model": self.litellm_model,
            "api_base": None if self.is_local else self.api_base,
            "extra": [list(kv) for kv in self.extra],
        }

    @property
    def display(self) -> str:
        return self.label or self.name


@dataclass(frozen=True, slots=True)
class Exchange:
    """One earlier turn of a conversation: what the user said and what the model answered."""

    user: str
    answer: str


@dataclass(frozen=True, slots=True)
class FollowUp:
    """The next message of one cell's conversation (`RunConfig.follow_ups`).

    `history` holds the turns so far, turn 1 first (its `user` is the OR-Bench
    prompt); `text` is what the user says now; `preset` names the follow-up
    preset it came from ("" for free text)."""

    row_id: str
    model: str
    repeat: int
    history: tuple[Exchange, ...]
    text: str
    preset: str = ""

    @property
    def turn(self) -> int:
        return len(self.history) + 1


@dataclass(frozen=True, slots=True)
class GenerationParams:
    """How each prompt is put to the model. All of it is part of the cache key."""

    system_prompt: str | None = None
    system_prompt_id: str = "none"
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    """None: each model's own default (`ModelSpec.max_tokens`, else DEFAULT_MAX_TOKENS
    or, for a model that reasons, REASONING_MAX_TOKENS)."""
    reasoning_effort: str | None = None
    """LiteLLM's `reasoning_effort` (one of REASONING_EFFORTS) for models that
    support it (LiteLLM drops it for the others); None: the provider's default."""

    def with_model_max_tokens_at_default(self) -> GenerationParams:
        """For a form whose max-tokens control starts at DEFAULT_MAX_TOKENS: left
        there, it means each model's own default (the embedded model's is smaller)."""
        if self.max_tokens != DEFAULT_MAX_TOKENS:
            return self
        from dataclasses import replace

        return replace(self, max_tokens=None)

    def max_tokens_for(self, model: ModelSpec) -> int:
        """The max tokens one model is asked for in this run."""
        if self.max_tokens is not None:
            return self.max_tokens
        return model.max_tokens or (REASONING_MAX_TOKENS if model.reasons else DEFAULT_MAX_TOKENS)

    def as_dict(self) -> dict[str, Any]:
        """The settings that change an answer. `reasoning_effort` only when set,
        so the variant tags and cache keys of runs without it are unchanged."""
        out: dict[str, Any] = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
        }
        if self.reasoning_effort is not None:
            out["reasoning_effort"] = self.reasoning_effort
        return out

    def params_json(self) -> str:
        return json.dumps(self.as_dict(), sort_keys=True)

    def messages(self, prompt_text: str) -> list[dict[str, str]]:
        return self.conversation((), prompt_text)

    def conversation(self, history: tuple[Exchange, ...], text: str) -> list[dict[str, str]]:
        """The messages of a conversation's next turn: the system prompt, each
        earlier exchange (the user's message and the model's *answer*, never its
        thoughts, as providers of reasoning models advise), then `text`. With no
        history this is exactly `messages(text)`, so first turns keep their keys."""
        msgs: list[dict[str, str]] = []
        if self.system_prompt:
            msgs.append({"role": "system", "content": self.system_prompt})
        for exchange in history:
            msgs.append({"role": "user", "content": exchange.user})
            msgs.append({"role": "assistant", "content": exchange.answer})
        msgs.append({"role": "user", "content": text})
        return msgs


_DEFAULT_PARAMS_JSONS = frozenset({GenerationParams().params_json(), GenerationParams(max_tokens=None).params_json()})
"""Default settings: each model's own max tokens (None) and DEFAULT_MAX_TOKENS read the same."""


@dataclass(frozen=True, slots=True)
class RunConfig:
    """One run: every (prompt, model, repeat) cell is sent concurrently."""

    models: tuple[ModelSpec, ...]
    prompts: tuple[Prompt, ...]
    params: GenerationParams = GenerationParams()
    judge: str = "keyword"
    """`keyword` (offline classifier only) or a model name used as LLM judge."""
    concurrency: int = 16
    """Global limit on in-flight requests across all models."""
    timeout_s: float | None = None
    """Seconds to connect and get the first chunk, and the base of the overall
    limit; None: the model's, else ORBENCH_TIMEOUT_S, else 60 (see `timeouts`)."""
    idle_timeout_s: float | None = None
    """Longest silence between two chunks; None: the model's, else ORBENCH_IDLE_TIMEOUT_S, else 30."""
    token_timeout_s: float | None = None
    """Overall limit per attempt = timeout + this x max tokens; None: the model's,
    else ORBENCH_TOKEN_TIMEOUT_S, else 1 s (0: `timeout_s` limits the whole attempt)."""
    max_retries: int = 3
    use_cache: bool = True
    repeats: int = 1
    """Ask each (prompt, model) this many times (verdict stability, temperature > 0)."""
    follow_ups: tuple[FollowUp, ...] = ()
    """When set, the run asks exactly these cells one turn further (their prompts
    must be in `prompts`, their models in `models`) instead of prompts × models."""
    only: tuple[str, ...] = ()
    """When set, the run asks only the cells with these ids (of prompts × models ×
    repeats), e.g. the page's "finish this answer" on one settled cell."""
    settle: bool = False
    """Stop each answer once its verdict can no longer change (`verdicts.settle`):
    cheaper spot-checks, but not OR-Bench's figures, which judge whole answers.
    Settled answers are cached apart from whole ones."""


@dataclass(slots=True)
class CellResult:
    """The outcome of one (prompt, model, repeat) cell: one row of the results."""

    split: str
    row_id: str
    category: str
    prompt: str
    model: str
    response: str = ""
    verdict: str = "error"
    verdict_source: str = ""
    error: str = ""
    latency_s: float | None = None
    ttft_s: float | None = None
    completion_tokens: int | None = None
    cost_usd: float = 0.0
    cached: bool = False
    system_prompt_id: str = "none"
    params: str = ""
    repeat: int = 0
    attempts: int = 0
    """Requests made for this cell (0 when replayed from the cache)."""
    retry_wait_s: float = 0.0
    """Seconds the engine waited between attempts (Retry-After, back-off)."""
    judge_error: str = ""
    """Why the LLM judge gave no verdict (failed, unavailable, off-format), so the
    offline one stands; `verdict_source` then ends in " (judge failed)"."""
    finish_reason: str | None = None
    reasoning: str = ""
    """A reasoning model's thoughts (empty for other models); `response` is the answer only."""
    reasoning_tokens: int | None = None
    """Tokens that went into thoughts, as the provider reports them (`completion_tokens_details`)."""
    ttfa_s: float | None = None
    """Seconds to the first token of the answer (`ttft_s` counts the first thought)."""
    turn: int = 1
    """Which turn of the cell's conversation this is (1: the OR-Bench prompt; 2+: follow-ups)."""
    conversation_id: str = ""
    """The id every turn of the conversation shares (the first turn's cell id)."""
    follow_up: str = ""
    """The user's message this turn answers (empty at turn 1, whose message is `prompt`)."""
    expected: str = ""
    """The prompt's expected behaviour in a prompt set (`benign`, `should-refuse`), else empty."""
    p_refusal: float | None = None
    """The verdict's calibrated probability of a refusal (direct or indirect); None without a verdict."""
    sure: bool | None = None
    """Whether that verdict is sure (false: shown as unsure, first in the review queue); None without a verdict."""
    settled: bool = False
    """The answer was stopped once its verdict settled: `response` is what had arrived."""
    settled_at_tokens: int | None = None
    """Output tokens (thoughts and answer) that had arrived when a settled answer was stopped."""
    saved_tokens: int | None = None
    """A settled answer's max tokens minus `settled_at_tokens`: at most what settling saved
    (the answer might have ended sooner; it never ran longer); 0 when the settled answer is
    replayed from the cache (nothing would have been generated)."""
    saved_cost_usd: float | None = None
    """What `saved_tokens` would have cost at the model's output price (0 where it has none)."""

    @property
    def ok(self) -> bool:
        return not self.error and self.verdict != "error"

    @property
    def conversation(self) -> str:
        """The conversation's id: `conversation_id`, else (rows from before turns) the first turn's cell id."""
        return self.conversation_id or self.first_cell_id

    @property
    def first_cell_id(self) -> str:
        """The cell id of the conversation's first turn."""
        return cell_id(self.row_id, self.model, self.repeat, variant_tag(self.system_prompt_id, self.params))

    @property
    def cell_id(self) -> str:
        return turn_cell_id(self.first_cell_id, self.turn)

    def to_row(self) -> dict[str, Any]:
        """Contract columns first, in order, then the appended extras."""
        row = {c: getattr(self, c) for c in RESULT_COLUMNS}
        row.update({c: getattr(self, c) for c in EXTRA_COLUMNS})
        row["conversation_id"] = self.conversation
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> CellResult:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in row.items() if k in names})


def variant_tag(system_prompt_id: str, params_json: str) -> str:
    """Empty for default settings, else a short stable digest of them, so that
    one model asked two ways in one session gives two distinct cells."""
    if system_prompt_id in ("", "none") and (params_json == "" or params_json in _DEFAULT_PARAMS_JSONS):
        return ""
    import hashlib

    return hashlib.sha256(f"{system_prompt_id}\n{params_json}".encode()).hexdigest()[:8]


def cell_id(row_id: str, model: str, repeat: int = 0, tag: str = "") -> str:
    """The key that ties engine events, UI cells and results together."""
    base = f"{row_id}|{model}|{repeat}"
    return f"{base}|{tag}" if tag else base


def turn_cell_id(first: str, turn: int) -> str:
    """The cell id of a conversation's `turn`: the first turn keeps the cell's id."""
    return first if int(turn or 1) <= 1 else f"{first}#t{int(turn)}"


EventKind = Literal["started", "delta", "verdict", "retry", "done", "error", "status"]


@dataclass(slots=True)
class CellEvent:
    """What the engine tells its consumers. The UI and CLI only render these,
    and nothing changes one once made. Not `frozen`: a frozen dataclass sets
    each of its twelve fields through `object.__setattr__`, which made an event
    cost 2.3 µs instead of 0.7 µs, a fifth of a cached replay (three events a
    cell) and a cost paid again for every batch of a live stream.

    - started: the cell is about to be sent (or replayed from cache).
    - delta: `text` is new answer text to append, `thoughts` new thought text
      (a reasoning model's); with `moved`, the answer text so far turned out to
      be thoughts (a lone `</think>`): move it to the thoughts first.
    - verdict: `verdict` is the current judgement (provisional or final).
    - retry: `message` says why and how long the engine waits before retrying.
    - done: `result` is the finished cell (verdict final), possibly from cache.
    - error: `result` holds the failed cell with a short human `error`;
      any partial text stays in `result.response`.
    - status: run-level news with an empty `cell_id` (e.g. "Starting the
      embedded model…"); `message` says what.
    """

    kind: EventKind
    cell_id: str
    row_id: str
    model: str
    repeat: int = 0
    text: str = ""
    verdict: Verdict | None = None
    result: CellResult | None = None
    message: str = ""
    thoughts: str = ""
    moved: bool = False
    turn: int = 1
    """Which turn of the cell's conversation the event is about (see `FollowUp`)."""
