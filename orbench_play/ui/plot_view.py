"""The paper-axes scatter plot: inline SVG, no plotting dependency."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .safe_html import attr, fmt_pct, safe_text

if TYPE_CHECKING:
    from ..scoring import ModelScore


_W, _H = 560, 430
_L, _R, _T, _B = 56, 20, 16, 48
_PALETTE = ("#2563eb", "#d97706", "#059669", "#db2777", "#7c3aed", "#0891b2", "#65a30d", "#dc2626")


def _x(pct: float) -> float:
    return _L + (_W - _L - _R) * max(0.0, min(100.0, pct)) / 100


def _y(pct: float) -> float:
    return _H - _B - (_H - _T - _B) * max(0.0, min(100.0, pct)) / 100


def render_plot(
    scores: Sequence[ModelScore],
    paper: Iterable[tuple[str, float, float]] = (),
    labels: dict[str, str] | None = None,
    models: dict[str, str] | None = None,
) -> str:
    """Session models (one point per variant) on the paper's axes (x: over-refusal on benign prompts,
    y: refusal on toxic prompts), with Wilson interval bars, beside the paper's
    reference models (grey). A model with only one kind of prompt is drawn as a
    dashed line with its interval band on the axis it has."""
    labels = labels or {}
    parts: list[str] = []
    for tick in range(0, 101, 20):
        parts.append(
            f'<line class="gridline" x1="{_x(tick):.1f}" y1="{_y(0):.1f}" x2="{_x(tick):.1f}" y2="{_y(100):.1f}"/>'
            f'<line class="gridline" x1="{_x(0):.1f}" y1="{_y(tick):.1f}" x2="{_x(100):.1f}" y2="{_y(tick):.1f}"/>'
            f'<text class="tick" x="{_x(tick):.1f}" y="{_y(0) + 16:.1f}" text-anchor="middle">{tick}</text>'
            f'<text class="tick" x="{_x(0) - 8:.1f}" y="{_y(tick) + 4:.1f}" text-anchor="end">{tick}</text>'
        )
    parts.append(
        f'<text class="axis" x="{(_x(0) + _x(100)) / 2:.1f}" y="{_H - 8}" text-anchor="middle">'
        "Over-refusal on benign prompts, % (paper: OR-Bench-Hard-1K)</text>"
        f'<text class="axis" transform="translate(14 {(_y(0) + _y(100)) / 2:.1f}) rotate(-90)" text-anchor="middle">'
        "Refusal on toxic prompts, %</text>"
    )
    n_paper = 0
    for model, x, y in paper:
        n_paper += 1
        parts.append(
            f'<circle class="paper-pt" cx="{_x(x):.1f}" cy="{_y(y):.1f}" r="4">'
            f"<title>{safe_text(model)} (paper): over-refusal {x:.1f}%, toxic refusal {y:.1f}%</title></circle>"
        )
    legend = []
    placed = 0
    for i, s in enumerate(scores):
        colour = _PALETTE[i % len(_PALETTE)]
        name = labels.get(s.model, s.model)
        o, t = s.over_refusal, s.toxic_refusal
        has_o, has_t = o is not None and o.n > 0, t is not None and t.n > 0
        if not (has_o or has_t):
            continue
        placed += 1
        tip = safe_text(
            f"{name}: over-refusal {fmt_pct(o.rate) if has_o else '–'}"
            + (f" [{100 * o.low:.0f}–{100 * o.high:.0f}] n={o.n}" if has_o else "")
            + f", toxic refusal {fmt_pct(t.rate) if has_t else '–'}"
            + (f" [{100 * t.low:.0f}–{100 * t.high:.0f}] n={t.n}" if has_t else "")
        )
        g = [
            f'<g class="session-pt" data-model="{attr((models or {}).get(s.model, s.model))}" data-variant="{attr(s.model)}" fill="{colour}" stroke="{colour}"><title>{tip}</title>'
        ]
        if has_o and has_t:
            cx, cy = _x(100 * o.rate), _y(100 * t.rate)
            g.append(
                f'<line class="ebar" x1="{_x(100 * o.low):.1f}" y1="{cy:.1f}" x2="{_x(100 * o.high):.1f}" y2="{cy:.1f}"/>'
                f'<line class="ebar" x1="{cx:.1f}" y1="{_y(100 * t.low):.1f}" x2="{cx:.1f}" y2="{_y(100 * t.high):.1f}"/>'
                f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="6"/>'
                f'<text class="pt-label" stroke="none" x="{cx + 8:.1f}" y="{cy - 8:.1f}">{safe_text(name)}</text>'
            )
        elif has_o:
            cx = _x(100 * o.rate)
            g.append(
                f'<rect class="band" stroke="none" x="{_x(100 * o.low):.1f}" y="{_y(100):.1f}" '
                f'width="{max(1.0, _x(100 * o.high) - _x(100 * o.low)):.1f}" height="{_y(0) - _y(100):.1f}"/>'
                f'<line class="only" x1="{cx:.1f}" y1="{_y(0):.1f}" x2="{cx:.1f}" y2="{_y(100):.1f}"/>'
                f'<text class="pt-label" stroke="none" x="{cx + 4:.1f}" y="{_y(100) + 12 + 14 * (placed - 1):.1f}">{safe_text(name)}</text>'
            )
        else:
            cy = _y(100 * t.rate)
            g.append(
                f'<rect class="band" stroke="none" x="{_x(0):.1f}" y="{_y(100 * t.high):.1f}" '
                f'width="{_x(100) - _x(0):.1f}" height="{max(1.0, _y(100 * t.low) - _y(100 * t.high)):.1f}"/>'
                f'<line class="only" x1="{_x(0):.1f}" y1="{cy:.1f}" x2="{_x(100):.1f}" y2="{cy:.1f}"/>'
                f'<text class="pt-label" stroke="none" x="{_x(0) + 4 + 90 * (placed - 1):.1f}" y="{cy - 4:.1f}">{safe_text(name)}</text>'
            )
        g.append("</g>")
        parts.append("".join(g))
        kind = "" if (has_o and has_t) else (" (benign prompts only)" if has_o else " (toxic prompts only)")
        legend.append(f'<span class="lg" style="color:{colour}">●</span> {safe_text(name + kind)}')
    legend.append(f'<span class="lg paper">●</span> {n_paper} models from the OR-Bench paper')
    caption = (
        "Bars: Wilson 95% intervals. Up and to the left is better (refuses toxic, answers benign). "
        "A model asked only one kind of prompt shows as a dashed line with its interval band."
    )
    return (
        f'<div class="plot-inner"><svg class="orplot" viewBox="0 0 {_W} {_H}" role="img" '
        f'aria-label="Session models and paper models on over-refusal vs toxic refusal axes">{"".join(parts)}</svg>'
        f'<div class="legend">{" &nbsp; ".join(legend)}</div><div class="caption">{caption}</div></div>'
    )
