"""LiteLLM, imported once and lazily, and what every call through it shares.

`import litellm` costs ~7 s here, so nothing imports it at module level; the
first caller pays, and `warm_up()` lets the UI pay before its first visitor.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math

from ..types import ModelSpec


@functools.cache
def litellm_module():
    """Import LiteLLM once, lazily, with everything switched off that costs
    time per call and is of no use here (telemetry, debug banners, callbacks)."""
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    litellm.drop_params = True  # e.g. top_p on providers that reject it
    litellm.turn_off_message_logging = True
    logging.getLogger("LiteLLM").setLevel(logging.WARNING)
    return litellm


def warm_up() -> None:
    """Pay LiteLLM's import and first-call set-up (1-2 s of CPU) now, off the
    event loop, so the first visitor's run does not stall everyone else's.

    The call goes to a loopback port where nothing listens, so it fails at once
    and sends nothing anywhere.
    """
    litellm = litellm_module()

    async def failing_call() -> None:
        with contextlib.suppress(Exception):
            response = await litellm.acompletion(
                model="openai/warm-up",
                api_base="http://127.0.0.1:9/v1",
                api_key="none",
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
                max_retries=0,
                num_retries=0,
                timeout=3,
            )
            async for _ in response:
                pass

    asyncio.run(failing_call())


class _CostBook:
    """LiteLLM's cost data, looked up once per model (unknown models cost 0)."""

    def __init__(self) -> None:
        self._unknown: set[str] = set()

    def cost(self, spec: ModelSpec, prompt_tokens: int | None, completion_tokens: int | None) -> float:
        if spec.is_local or spec.api_base or spec.litellm_model in self._unknown:
            return 0.0
        if not prompt_tokens and not completion_tokens:
            return 0.0
        try:
            p, c = litellm_module().cost_per_token(
                model=spec.litellm_model, prompt_tokens=prompt_tokens or 0, completion_tokens=completion_tokens or 0
            )
            return float(p + c)
        except Exception:
            self._unknown.add(spec.litellm_model)
            return 0.0

    def streamed(
        self, spec: ModelSpec, prompt_chars: int, prompt_tokens: int | None, completion_tokens: int | None, chars: int
    ) -> float:
        """What an attempt that got as far as a stream costs, finished or not: the
        usage when the provider sent it, else an estimate (4 characters a token,
        plus chat overhead for the prompt). Providers bill streamed tokens even
        when the client hangs up, so Stop must not make a call free."""
        return self.cost(
            spec,
            prompt_tokens or math.ceil(prompt_chars / 4) + 16,
            completion_tokens or math.ceil(chars / 4),
        )


COSTS = _CostBook()
