"""Content-addressed disk cache of finished cells and judge verdicts.

Why our own cache: LiteLLM's disk cache is gone and its cache-hit path pulls in
`soundfile`. Why content-addressed: the key is a hash of everything that can
change an answer, so a changed system prompt or temperature is a new entry.
Who may read an entry: the owner's models and the embedded model are shared by
every visitor; a visitor's custom endpoint is keyed by a keyed hash of its
credential, so only whoever holds that credential replays its answers
(`scope.py`). API keys themselves never touch disk.

Only complete, successful streams are stored: errors, cancelled and cut
streams are never written, which is what makes "re-run the same command"
resume exactly the missing cells. An answer stopped once its verdict settled
(`RunConfig.settle`) is stored too, but under a key of its own
(`settled_key`) and marked `settled`: a request for a whole answer never
replays a partial one, and a settling run finds its own answers again. The cache holds to its size limit: an entry
larger than 1/64 of it is refused, and every write that takes the cache over
the limit culls it back under (diskcache alone evicts at most ten entries per
write, so many small entries let a few large ones push it far past its limit). The offline verdict is stored with the
classifier version that gave it and recomputed on replay only when the
classifier changed; LLM judge verdicts are stored under keys of their own
because they cost a call.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from .. import verdicts
from ..text.repair import repair_text
from ..text.thoughts import CLOSE, split_text
from ..types import GenerationParams, ModelSpec, Verdict
from .scope import cache_identity

log = logging.getLogger(__name__)

CACHE_VERSION = 1
"""Bump when the stored value's shape changes: old entries simply stop matching."""

DEFAULT_SIZE_LIMIT_MB = 1024
ENTRY_SHARE = 64
"""An entry may take at most 1/ENTRY_SHARE of the cache's size limit (16 MiB of the default 1 GiB)."""
MIN_ENTRY_BYTES = 64 * 1024


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


_ROLE_CONTENT = frozenset(("role", "content"))
_json_string = json.encoder.encode_basestring
"""What `json.dumps(..., ensure_ascii=False)` writes for a string (the C encoder)."""


def _canonical_messages(messages: list[dict[str, str]]) -> str:
    """`_canonical(messages)` for the usual chat messages (a role and a string
    content each), assembled from the encoded strings: the same text, without
    json.dumps' encoder set-up and key sorting for every cell of a run, which
    was a fifth of a cached replay's cost. Anything else goes to `_canonical`."""
    parts = []
    for message in messages:
        if type(message) is not dict or message.keys() != _ROLE_CONTENT:
            return _canonical(messages)
        role, content = message["role"], message["content"]
        if type(role) is not str or type(content) is not str:
            return _canonical(messages)
        parts.append(f'{{"content":{_json_string(content)},"role":{_json_string(role)}}}')
    return "[" + ",".join(parts) + "]"


def _digest(payload: dict[str, Any]) -> str:
    return hashlib.sha256(_canonical(payload).encode("utf-8")).hexdigest()


def _key_params(params: GenerationParams, model: ModelSpec) -> dict[str, Any]:
    """The settings as they reach this model: "each model's own max tokens"
    is keyed by the number it resolves to, so it shares entries with runs that
    asked for that number."""
    return {**params.as_dict(), "max_tokens": params.max_tokens_for(model)}


def cell_key(
    model: ModelSpec,
    messages: list[dict[str, str]],
    params: GenerationParams,
    repeat: int = 0,
) -> str:
    """The cache key of one answer. Never includes `model.api_key`, only, for a
    visitor's endpoint, a keyed hash of it (`credential_scope`)."""
    return "cell:" + _digest(
        {
            "v": CACHE_VERSION,
            "model": cache_identity(model),
            "messages": messages,
            "params": _key_params(params, model),
            "repeat": repeat,
        }
    )


def settled_key(whole_key: str) -> str:
    """The key of a settled (partial) answer to the request whose whole answer is
    `whole_key`: another namespace, carrying the settle rule's version, so a rule
    change asks again rather than replaying answers it would have stopped elsewhere."""
    from ..verdicts.settle import SETTLE_VERSION

    payload = f"{whole_key}|settle-v{SETTLE_VERSION}"
    return "settled:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CellKeys:
    """`cell_key` for many cells of one run, without re-encoding the parts that
    do not change from cell to cell (model identity, params): the same
    canonical JSON, assembled from cached pieces, so the keys are identical."""

    def __init__(self, params: GenerationParams):
        self._params = params
        self._models: dict[str, tuple[str, str]] = {}

    def key(self, model: ModelSpec, messages: list[dict[str, str]], repeat: int = 0) -> str:
        pieces = self._models.get(model.name)
        if pieces is None:
            pieces = self._models[model.name] = (
                _canonical(cache_identity(model)),
                _canonical(_key_params(self._params, model)),
            )
        identity, params = pieces
        blob = (
            f'{{"messages":{_canonical_messages(messages)},"model":{identity},"params":{params},'
            f'"repeat":{int(repeat)},"v":{CACHE_VERSION}}}'
        )
        return "cell:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


def judge_key(
    judge: ModelSpec, judge_messages: list[dict[str, str]], version: str = "", texts: tuple[str, ...] = ()
) -> str:
    """The cache key of one LLM-judge verdict. The judge prompt text and the
    judge version (bumped when the parser changes) are part of it, so either
    change invalidates old verdicts; `texts` (the request and the answer as
    they were, before the prompt fenced and cut them) keep two answers that
    the prompt would show alike on keys of their own."""
    payload = {"v": CACHE_VERSION, "judge": cache_identity(judge), "messages": judge_messages, "version": version}
    if texts:
        payload["texts"] = list(texts)
    return "judge:" + _digest(payload)


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    """What a finished cell leaves behind: enough to replay it exactly."""

    response: str
    finish_reason: str | None
    completion_tokens: int | None
    cost_usd: float
    latency_s: float | None
    ttft_s: float | None
    verdict: str | None = None
    verdict_source: str | None = None
    verdict_version: str | None = None
    """The offline verdict and the classifier version that gave it: replay reuses
    it only while the classifier is unchanged, else recomputes it."""
    reasoning: str = ""
    """A reasoning model's thoughts; `response` is the answer only."""
    reasoning_tokens: int | None = None
    ttfa_s: float | None = None
    verdict_confidence: float | None = None
    """How sure the offline verdict is (`Verdict.confidence`): `auto:<judge>` asks by it."""
    verdict_why: str = ""
    """The signals the offline verdict rests on, in a few words (a badge's tooltip)."""
    settled: bool = False
    """Stopped once its verdict settled: `response` is what had arrived (stored under
    `settled_key`, never under the whole answer's key)."""
    settled_at_tokens: int | None = None
    """Output tokens that had arrived when a settled answer was stopped."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "response": self.response,
            "reasoning": self.reasoning,
            "reasoning_tokens": self.reasoning_tokens,
            "ttfa_s": self.ttfa_s,
            "finish_reason": self.finish_reason,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
            "latency_s": self.latency_s,
            "ttft_s": self.ttft_s,
            "verdict": self.verdict,
            "verdict_source": self.verdict_source,
            "verdict_version": self.verdict_version,
            "verdict_confidence": self.verdict_confidence,
            "verdict_why": self.verdict_why,
            "settled": self.settled,
            "settled_at_tokens": self.settled_at_tokens,
        }


# --- the offline verdict stored with an answer ---------------------------------------


@functools.cache
def classifier_version() -> str:
    """A digest of the offline classifier's code and weights: a cached verdict is
    reused only while recomputing it would give the same answer. Every module
    of the `verdicts` package counts, so a change to any rule refreshes it."""
    package = Path(verdicts.__file__).parent
    digest = hashlib.sha256()
    for part in [*sorted(package.glob("*.py")), *sorted((package.parent / "assets").glob("verdict*"))]:
        digest.update(part.name.encode("utf-8") + b"\0" + part.read_bytes())
    return digest.hexdigest()[:16]


def with_current_verdict(answer: CachedAnswer, prompt: str = "") -> CachedAnswer:
    """The answer carrying today's offline verdict (provider signal, then the
    classifier, which reads the answer against its `prompt`), computed only
    when it has none or one from an older classifier. An entry's key holds its
    prompt, so the stored verdict is that prompt's."""
    if answer.verdict and answer.verdict_version == classifier_version() and answer.verdict_confidence is not None:
        return answer
    verdict = verdicts.LiveVerdict().finish(answer.response, answer.finish_reason, prompt=prompt)
    return replace(
        answer,
        verdict=verdict.label,
        verdict_source=verdict.source,
        verdict_version=classifier_version(),
        verdict_confidence=verdict.confidence,
        verdict_why=verdicts.explain(verdict, answer.response, prompt),
    )


def offline_verdict(answer: CachedAnswer, prompt: str = "") -> Verdict:
    """The offline verdict of an answer; the stored one while it is current."""
    answer = with_current_verdict(answer, prompt)
    confidence = answer.verdict_confidence if answer.verdict_confidence is not None else 1.0
    return Verdict(
        answer.verdict or "", answer.verdict_source or "", rationale=answer.verdict_why, confidence=confidence
    )


def entry_limit(size_limit_bytes: int) -> int:
    """The bytes of text one entry may hold in a cache of this size (both stores)."""
    return max(MIN_ENTRY_BYTES, size_limit_bytes // ENTRY_SHARE)


def fits(answer: CachedAnswer, limit: int) -> bool:
    """Whether an answer's text (answer and thoughts) fits in an entry; logged when not."""
    size = len(answer.response.encode("utf-8", "surrogatepass")) + len(
        answer.reasoning.encode("utf-8", "surrogatepass")
    )
    if size > limit:
        log.info("Not caching an answer of %d bytes (an entry may hold %d).", size, limit)
        return False
    return True


def decode_answer(value: Any) -> tuple[CachedAnswer | None, bool]:
    """A stored value as an answer (None: a miss, or an entry of another shape),
    and whether its text had to be repaired or its thoughts told apart from its
    answer (then the caller writes it back)."""
    if not isinstance(value, dict):
        return None, False
    try:
        answer = CachedAnswer(**value)
    except TypeError:
        return None, False  # an entry of an older shape: treat as a miss
    if not isinstance(answer.response, str) or not isinstance(answer.reasoning, str):
        return None, False
    if answer.settled is not True and answer.settled is not False:
        return None, False
    changed = False
    repaired = repair_text(answer.response)
    if repaired is not answer.response:
        answer, changed = replace(answer, response=repaired, verdict=None, verdict_version=None), True
    if CLOSE in answer.response and not answer.reasoning:
        # written before thoughts were told apart from the answer: the verdict read them too
        thoughts, response = split_text(answer.response)
        if thoughts:
            answer = replace(answer, response=response, reasoning=thoughts, verdict=None, verdict_version=None)
            changed = True
    return answer, changed


class AnswerCache(Protocol):
    """What the engine needs from a cache, whichever store is behind it (the
    disk here, Redis in `redis_store`): many reads in one go, writes that never
    make a cell wait, and a way to wait for those writes at the end of a run.
    Both stores fail open: a broken store misses and drops writes, with a warning."""

    @property
    def warning(self) -> str | None: ...

    @property
    def enabled(self) -> bool: ...

    async def prepare(self) -> None: ...

    async def get_answers(self, keys: Sequence[str]) -> dict[str, CachedAnswer]: ...

    def put_answer(self, key: str, answer: CachedAnswer) -> None: ...

    async def lookup_judge(self, key: str) -> dict[str, str] | None: ...

    def put_judge(self, key: str, label: str, rationale: str) -> None: ...

    async def drain(self) -> None: ...


class ResultCache:
    """A thin, failure-tolerant wrapper over `diskcache.Cache`.

    Any disk error turns the cache off for the rest of the process with one
    warning, rather than failing a run: a demo must go on without its cache.
    """

    def __init__(self, directory: str | os.PathLike[str], size_limit_mb: int | None = None):
        import diskcache  # cheap, but keep module import free of disk access

        self.directory = Path(directory)
        limit = size_limit_mb or int(os.environ.get("ORBENCH_CACHE_SIZE_MB", DEFAULT_SIZE_LIMIT_MB))
        self.size_limit = limit * 1024 * 1024
        self.entry_limit = entry_limit(self.size_limit)
        """Bytes of text an entry may hold; a larger one is not stored."""
        self.warning: str | None = None
        self._cache: Any = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._cache = diskcache.Cache(
                str(self.directory),
                size_limit=limit * 1024 * 1024,
                eviction_policy="least-recently-stored",
            )
            # Touch the database so a corrupt file is found now, not mid-run.
            self._cache.get("__probe__")
        except Exception as exc:  # corrupt sqlite file, permissions, full disk...
            self._disable(f"could not open the cache at {self.directory} ({exc.__class__.__name__}: {exc})")

    @property
    def enabled(self) -> bool:
        return self._cache is not None

    def _disable(self, why: str) -> None:
        self.warning = f"Cache disabled: {why}; continuing without it."
        log.warning(self.warning)
        if self._cache is not None:
            with contextlib.suppress(Exception):  # closing a broken cache may fail too; it is dropped anyway
                self._cache.close()
        self._cache = None

    def get_answer(self, key: str) -> CachedAnswer | None:
        """The stored answer, its text repaired if an older version stored text
        that is not valid Unicode (a lone UTF-16 surrogate would break every
        replay, export and page that shows it)."""
        answer, repaired = decode_answer(self._get(key))
        if repaired and answer is not None:
            self.put_answer(key, answer)
        return answer

    def put_answer(self, key: str, answer: CachedAnswer) -> None:
        """Store a finished answer, unless it is larger than an entry may be (it
        is then simply not cached: the next run asks the model again)."""
        if fits(answer, self.entry_limit):
            self._set(key, answer.to_dict())

    def get_judge(self, key: str) -> dict[str, str] | None:
        value = self._get(key)
        return value if isinstance(value, dict) else None

    def put_judge(self, key: str, label: str, rationale: str) -> None:
        self._set(key, {"label": label, "rationale": rationale})

    # -- the engine's interface (`AnswerCache`): the same for every store ------------

    async def prepare(self) -> None:
        """Nothing to fetch before keys are computed: the secret is on this disk."""

    async def get_answers(self, keys: Sequence[str]) -> dict[str, CachedAnswer]:
        """The stored answers among `keys` (a local disk read each: no network)."""
        found = {}
        for key in keys:
            answer = self.get_answer(key)
            if answer is not None:
                found[key] = answer
        return found

    async def lookup_judge(self, key: str) -> dict[str, str] | None:
        return self.get_judge(key)

    async def drain(self) -> None:
        """Writes are done when `put_*` returns: nothing is pending."""

    def __contains__(self, key: str) -> bool:
        if self._cache is None:
            return False
        try:
            return key in self._cache
        except Exception as exc:
            self._disable(f"read failed ({exc})")
            return False

    def __len__(self) -> int:
        if self._cache is None:
            return 0
        try:
            return len(self._cache)
        except Exception:
            return 0

    def _get(self, key: str) -> Any:
        if self._cache is None:
            return None
        try:
            return self._cache.get(key)
        except Exception as exc:
            self._disable(f"read failed ({exc})")
            return None

    def _set(self, key: str, value: Any) -> None:
        if self._cache is None:
            return
        try:
            self._cache.set(key, value)
            if self._cache.volume() > self.size_limit:
                self._cache.cull()
        except Exception as exc:
            self._disable(f"write failed ({exc})")

    def clear(self) -> None:
        if self._cache is not None:
            self._cache.clear()

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
