"""The next run's size and cost, shown beside Run before it is pressed (issue 47).

Cells are prompts × models × repeats, the prompts N per category of each chosen
split (every OR-Bench category holds at least the page's 20, so the count is
exact); a prompt set's sample is counted once it is drawn. The cost is an upper
bound from LiteLLM's listed prices: every answer at its max tokens, each prompt
at a generous length, so a run never costs more than it says (a price the map
does not list is said to be unknown, not taken as free).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .safe_html import safe_text

PROMPT_TOKENS = 120
"""A generous prompt length in tokens (OR-Bench's prompts average about 30), plus chat overhead."""


@dataclass(frozen=True)
class ModelCost:
    """One chosen model: its name as shown, its (input, output) price per token (None:
    unknown), the max tokens of each answer, whether it runs here."""

    name: str
    price: tuple[float, float] | None
    max_tokens: int
    local: bool = False


def money(usd: float) -> str:
    return f"${usd:,.2f}"


def render_run_size(
    prompts: int | None, models: Sequence[ModelCost] = (), *, repeats: int = 1, per_category: int = 1,
    prompt_set: str = "", system_chars: int = 0, limits: int | None = None,
) -> str:  # fmt: skip
    """`#run_size`'s HTML: "Next run: 40 cells (20 prompts × 2 models) · up to $0.02 …"."""
    if prompts is None or not models:
        return '<div class="run-size" data-cells="">Next run: choose models and prompts.</div>'
    cells = prompts * len(models) * repeats
    parts = [
        f"{prompts:,} prompt{'s' if prompts != 1 else ''}",
        f"{len(models)} model{'s' if len(models) != 1 else ''}",
    ]
    if repeats > 1:
        parts.append(f"{repeats} repeats")
    text = f"Next run: {cells:,} cell{'s' if cells != 1 else ''} ({' × '.join(parts)})"
    if prompt_set:
        text += f", plus the prompt set's {per_category} per category for each model"
    priced = [m for m in models if m.price is not None and not m.local and any(m.price)]
    unknown = [m.name for m in models if m.price is None]
    asked = prompts * repeats
    if priced and asked:
        in_tokens = PROMPT_TOKENS + system_chars // 4
        cost = sum(asked * (in_tokens * m.price[0] + m.max_tokens * m.price[1]) for m in priced if m.price)
        bound = f"up to {money(cost)}" if cost >= 0.01 else "under $0.01"
        text += f" · {bound} even if every answer reaches its max tokens"
        if prompt_set:
            text += " (the prompt set's cells on top)"
    elif not unknown and all(m.local for m in models):
        text += " · no cost: the models run here"
    if unknown:
        named = ", ".join(unknown) if len(unknown) <= 2 else f"{len(unknown)} of the models"
        text += f" · no listed price for {named}"
    over = limits is not None and cells > limits
    if over:
        text += f" · more than this demo's {limits} cells per run"
    state = ' data-over="1"' if over else ""
    return f'<div class="run-size" data-cells="{cells}"{state}>{safe_text(text)}.</div>'
