"""The optional LLM judge: one call per finished answer, cached under its own key.

The judge is a model call like any other (endpoint guard in public mode, daily
spend cap, the embedded model's server), so it goes through the same helpers
as the engine's cells; the prompt and the parser live in `verdicts`.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace

from .. import budget
from ..cache import AnswerCache, judge_key
from ..text.repair import repair_text
from ..types import ModelSpec, Verdict
from ..verdicts.judge import KEY_NONCE, new_nonce
from ..verdicts.presets import needs_judge, prompt_for, register_price
from .failures import describe_failure, reserve_budget
from .llm import COSTS, litellm_module

_JUDGE_TIMEOUT_S = 60.0


async def judge_answer(
    spec: ModelSpec,
    prompt: str,
    response: str,
    fallback: Verdict,
    *,
    cache: AnswerCache | None = None,
    timeout_s: float = _JUDGE_TIMEOUT_S,
) -> Verdict:
    """One LLM-judge verdict, cached under its own key; falls back to the
    offline verdict, saying why in its rationale, when the judge cannot be
    asked (e.g. its API key is missing), fails or answers off-format.

    The judge set-up (prompt, parameters, parser, version) follows the spec: a
    paper preset asks as OR-Bench's response checker did, any other model gets
    the default judge prompt. The version is part of the cache key.

    The messages sent fence the answer with a fresh random nonce, so the
    cache key cannot hash them: it hashes the same messages built with a
    fixed nonce, plus the raw request and answer, so one answer has one key
    and a verdict is asked for once. Only a verdict that parsed is cached."""
    setup = prompt_for(spec)
    if spec.error:
        return replace(fallback, rationale=f"judge unavailable: {spec.error}")
    messages = setup.messages(prompt, response, new_nonce())
    key = judge_key(spec, setup.messages(prompt, response, KEY_NONCE), setup.version, texts=(prompt, response))
    if cache is not None:
        hit = await cache.lookup_judge(key)
        if hit:
            return Verdict(hit["label"], f"llm:{spec.name}", rationale=hit.get("rationale", ""))
    kwargs: dict = dict(spec.extra)
    kwargs.update(setup.params)
    kwargs.update(model=spec.litellm_model, messages=messages, timeout=timeout_s, num_retries=2)
    client = hold = None
    cost = 0.0
    try:
        # The judge is a model call like any other: same endpoint guard in public
        # mode, same daily spend cap, and the embedded model needs its server.
        api_base = spec.api_base
        if spec.is_local:
            from ..models import embedded

            api_base = await embedded.ensure_server_async(spec.name)
        if api_base:
            kwargs["api_base"] = api_base
        if spec.api_key:
            kwargs["api_key"] = spec.api_key
        if api_base and not spec.is_local:
            from .. import guards

            client = await guards.endpoint_client(spec)
            if client is not None:
                kwargs["client"] = client
        register_price(spec, litellm_module())
        hold = await reserve_budget(spec, messages, int(setup.params.get("max_tokens", 96)), timeout_s)
        async with asyncio.timeout(timeout_s):
            reply = await litellm_module().acompletion(**kwargs)
        text = repair_text(reply.choices[0].message.content or "")
        usage = getattr(reply, "usage", None)
        cost = COSTS.cost(spec, getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        why = describe_failure(exc, spec, timeout_s).message
        return replace(fallback, rationale=f"judge failed: {why}")
    finally:
        budget.settle(hold, cost)
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()
    label = setup.parse(text)
    if label is None:
        return replace(fallback, rationale=f"judge answered off-format: {text[:80]!r}")
    rationale = text.strip()[:300]
    if cache is not None:
        cache.put_judge(key, label, rationale)
    return Verdict(label, f"llm:{spec.name}", rationale=rationale)


def _default_judge_resolver(name: str) -> ModelSpec:
    from ..models import load_catalog

    return load_catalog(include_local=True).resolve(name)


JUDGE_FAILED = " (judge failed)"
"""Appended to the offline `verdict_source` when the LLM judge's verdict fell back to it."""


def judge_asked(choice: str | None, offline: Verdict) -> bool:
    """Whether a run judging by `choice` asks the LLM judge about an answer whose
    offline verdict is `offline`: never for the provider layer (empty or filtered
    answers are certain), and under `auto:<judge>` only when the offline verdict
    is unsure. Only an answer the judge was asked about can say the judge failed."""
    return offline.source != "provider" and needs_judge(choice, offline.confidence) is not None


def judged_source(verdict: Verdict) -> tuple[str, str]:
    """(verdict_source, judge_error) of a verdict from a run with an LLM judge.

    A judge's own verdict has source `llm:<model>`, and the provider layer
    (empty or filtered answers) is never sent to the judge; any other verdict
    is the offline one standing in for a judge that failed, was unavailable or
    answered off-format, and its rationale says why. That fallback is recorded,
    not hidden: `classifier (judge failed)` and the reason."""
    if verdict.source == "provider" or verdict.source.startswith("llm:"):
        return verdict.source, ""
    return verdict.source + JUDGE_FAILED, verdict.rationale or "the judge gave no verdict"
