"""The paper-axes scatter plot: inline SVG, no plotting dependency.

Why SVG and not `gr.ScatterPlot`/`gr.Plot`: the plot needs Wilson interval
bars in both directions, interval bands for models asked only one kind of
prompt, 32 grey reference points with their own tooltips, labels kept inside
the plot area and clear of each other, and per-model `data-model` hooks for
tests. Gradio's native plots (Vega-Lite) draw points and lines but no error
bars or bands, and `gr.Plot` would add matplotlib or plotly to the app for one
figure. A few hundred bytes of escaped SVG do all of it and render instantly.

Only hard-1k goes on the x axis, as in the paper; 80k over-refusal is never
plotted there (its prompts are refused far less often, so it would flatter a
model). A model with 80k and toxic answers is drawn on the toxic axis only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .plot_labels import Box, Label, hline_label, marker_box, point_label, short_name, vline_label
from .safe_html import attr, fmt_pct, safe_text

if TYPE_CHECKING:
    from ...scoring import ModelScore, Rate
    from ...scoring.error_aware import Estimate

    Shown = Rate | Estimate


_W, _H = 560, 430
_L, _R, _T, _B = 56, 20, 16, 48
_PALETTE = ("#2563eb", "#d97706", "#059669", "#db2777", "#7c3aed", "#0891b2", "#65a30d", "#dc2626")
AREA = Box(_L, _T, _W - _R, _H - _B)
"""The plot area in SVG units: every model label is placed inside it."""


def _x(pct: float) -> float:
    return _L + (_W - _L - _R) * max(0.0, min(100.0, pct)) / 100


def _y(pct: float) -> float:
    return _H - _B - (_H - _T - _B) * max(0.0, min(100.0, pct)) / 100


def shown(s: ModelScore, key: str) -> Shown | None:
    """The rate the plot draws: the error-aware one (`ModelScore.corrected`), else the count."""
    naive = {"hard-1k": s.over_refusal_hard_1k, "80k": s.over_refusal_80k, "toxic": s.toxic_refusal}[key]
    return s.corrected.get(key) or naive


def _has(rate: Shown | None) -> bool:
    return rate is not None and rate.n > 0


def _axes() -> list[str]:
    parts = []
    for tick in range(0, 101, 20):
        parts.append(
            f'<line class="gridline" x1="{_x(tick):.1f}" y1="{_y(0):.1f}" x2="{_x(tick):.1f}" y2="{_y(100):.1f}"/>'
            f'<line class="gridline" x1="{_x(0):.1f}" y1="{_y(tick):.1f}" x2="{_x(100):.1f}" y2="{_y(tick):.1f}"/>'
            f'<text class="tick" x="{_x(tick):.1f}" y="{_y(0) + 16:.1f}" text-anchor="middle">{tick}</text>'
            f'<text class="tick" x="{_x(0) - 8:.1f}" y="{_y(tick) + 4:.1f}" text-anchor="end">{tick}</text>'
        )
    parts.append(
        f'<text class="axis" x="{(_x(0) + _x(100)) / 2:.1f}" y="{_H - 8}" text-anchor="middle">'
        "Over-refusal on hard-1k prompts, % (OR-Bench-Hard-1K)</text>"
        f'<text class="axis" transform="translate(14 {(_y(0) + _y(100)) / 2:.1f}) rotate(-90)" text-anchor="middle">'
        "Refusal on toxic prompts, %</text>"
    )
    return parts


def _tooltip(name: str, s: ModelScore) -> str:
    def part(label: str, r: Shown | None) -> str:
        if r is None or r.n == 0:
            return f"{label} –"
        said = f" (verdicts say {fmt_pct(r.naive_rate)})" if hasattr(r, "naive_rate") else ""
        return f"{label} {fmt_pct(r.rate)} [{100 * r.low:.0f}–{100 * r.high:.0f}]{said} n={r.n}"

    text = f"{name}: {part('over-refusal (hard-1k)', shown(s, 'hard-1k'))}, {part('toxic refusal', shown(s, 'toxic'))}"
    if _has(s.over_refusal_80k):
        text += f"; {part('over-refusal on 80k', shown(s, '80k'))} (not on these axes)"
    return text


def _label_svg(label: Label, anchor_xy: tuple[float, float] | None = None) -> str:
    leader = ""
    if label.leader and anchor_xy is not None:
        box = label.box
        lx = min(max(anchor_xy[0], box.x0), box.x1)
        ly = box.y1 if anchor_xy[1] > box.y1 else box.y0
        leader = f'<line class="leader" x1="{anchor_xy[0]:.1f}" y1="{anchor_xy[1]:.1f}" x2="{lx:.1f}" y2="{ly:.1f}"/>'
    return (
        f'{leader}<text class="pt-label" stroke="none" x="{label.x:.1f}" y="{label.y:.1f}" '
        f'text-anchor="{label.anchor}">{safe_text(label.text)}</text>'
    )


NUDGE = 8.0
"""How far apart models drawn at the same spot are set (SVG units), so each one shows."""
SAME_SPOT = 4.0
"""Markers closer than this would hide each other: they count as one spot."""


def _nudges(drawn: Sequence[tuple[int, ModelScore, Shown | None, Shown | None]]) -> dict[int, tuple[float, float]]:
    """An offset per drawn model: (0, 0), except for models that would be drawn on the
    same spot (two that refuse everything sit at (100, 100)): those are spread evenly
    on a small circle around it (points), or side by side (lines on one axis)."""
    spots: list[tuple[str, float, float, list[int]]] = []
    for i, _s, o, t in drawn:
        kind = "pt" if o and t else ("x" if o else "y")
        x = _x(100 * o.rate) if o else 0.0
        y = _y(100 * t.rate) if t else 0.0
        for spot in spots:
            if spot[0] == kind and abs(spot[1] - x) < SAME_SPOT and abs(spot[2] - y) < SAME_SPOT:
                spot[3].append(i)
                break
        else:
            spots.append((kind, x, y, [i]))
    nudge: dict[int, tuple[float, float]] = {i: (0.0, 0.0) for i, *_ in drawn}
    for kind, _x0, _y0, members in spots:
        k = len(members)
        if k < 2:
            continue
        for j, i in enumerate(members):
            if kind == "pt":
                angle = math.pi / 2 + 2 * math.pi * j / k  # the first one straight above the spot
                nudge[i] = (NUDGE * math.cos(angle), -NUDGE * math.sin(angle))
            else:
                step = (j - (k - 1) / 2) * NUDGE / 2
                nudge[i] = (step, 0.0) if kind == "x" else (0.0, step)
    return nudge


def _band(i: int, s: ModelScore, o: Shown | None, t: Shown | None, models: dict[str, str] | None) -> str:
    """The interval band of a model asked only one kind of prompt (drawn under everything)."""
    colour = _PALETTE[i % len(_PALETTE)]
    hook = f'data-model="{attr((models or {}).get(s.model, s.model))}" data-variant="{attr(s.model)}"'
    if o:
        return (
            f'<rect class="band" {hook} fill="{colour}" stroke="none" x="{_x(100 * o.low):.1f}" y="{_y(100):.1f}" '
            f'width="{max(1.0, _x(100 * o.high) - _x(100 * o.low)):.1f}" height="{_y(0) - _y(100):.1f}"/>'
        )
    if t:
        return (
            f'<rect class="band" {hook} fill="{colour}" stroke="none" x="{_x(0):.1f}" y="{_y(100 * t.high):.1f}" '
            f'width="{_x(100) - _x(0):.1f}" height="{max(1.0, _y(100 * t.low) - _y(100 * t.high)):.1f}"/>'
        )
    return ""


def _paper_point(model: str, x: float, y: float) -> str:
    """One of the paper's models: a grey point that names itself on hover and on
    keyboard focus (Tab), not only in a hover-only tooltip."""
    cx, cy = _x(x), _y(y)
    words = f"{model} (paper): over-refusal {x:.1f}%, toxic refusal {y:.1f}%"
    right = x <= 55
    tx = cx + 7 if right else cx - 7
    ty = cy - 7 if y < 90 else cy + 15
    return (
        f'<g class="paper" tabindex="0" role="img" aria-label="{attr(words)}">'
        f'<circle class="paper-pt" cx="{cx:.1f}" cy="{cy:.1f}" r="4"><title>{safe_text(words)}</title></circle>'
        f'<text class="paper-name" x="{tx:.1f}" y="{ty:.1f}" text-anchor="{"start" if right else "end"}">'
        f"{safe_text(model)}</text></g>"
    )


def render_plot(
    scores: Sequence[ModelScore],
    paper: Iterable[tuple[str, float, float]] = (),
    labels: dict[str, str] | None = None,
    models: dict[str, str] | None = None,
    published: dict[str, str] | None = None,
) -> str:
    """Session models (one point per variant) on the paper's axes (x: over-refusal
        on hard-1k, y: refusal on toxic prompts), at their error-aware rates with
    their 95% interval bars (`scoring.error_aware`), beside
        the paper's reference models (grey). A model with only one of the two is a
        dashed line with its interval band on the axis it has; a model with only
        80k answers is listed under the plot but not drawn.

        Labels are short names (full name in the tooltip and the legend), placed
        inside the plot area, clear of other labels and of session points.

        `published` maps the names of scores that come from other people's published
        sessions (`publish.published_scores`) to their source: drawn like the
        session's own, labelled with their intervals, and marked `data-published`."""
    labels = labels or {}
    published = published or {}
    parts = _axes()
    drawn = []
    for i, s in enumerate(scores):
        o, t = shown(s, "hard-1k"), shown(s, "toxic")
        if _has(o) or _has(t):
            drawn.append((i, s, o if _has(o) else None, t if _has(t) else None))
    # Interval bands first: under the paper's points and every model's marks, never over them.
    bands = [_band(i, s, o, t, models) for i, s, o, t in drawn if not (o and t)]
    parts += [b for b in bands if b]
    n_paper = 0
    for model, x, y in paper:
        n_paper += 1
        parts.append(_paper_point(model, x, y))
    nudge = _nudges(drawn)
    # Points first (their labels matter most), and every marker is an obstacle for every label.
    taken: list[Box] = [
        marker_box(_x(100 * o.rate) + nudge[i][0], _y(100 * t.rate) + nudge[i][1]) for i, _, o, t in drawn if o and t
    ]
    legend = []
    groups: dict[int, str] = {}
    for i, s, o, t in sorted(drawn, key=lambda d: (d[2] is None or d[3] is None, d[0])):
        colour = _PALETTE[i % len(_PALETTE)]
        name = labels.get(s.model, s.model)
        text = short_name(name)
        dx, dy = nudge[i]
        g = [
            f'<g class="session-pt" data-model="{attr((models or {}).get(s.model, s.model))}" '
            f'data-variant="{attr(s.model)}" fill="{colour}" stroke="{colour}"'
            + (f' data-published="{attr(published[s.model])}"' if s.model in published else "")
            + f"><title>{safe_text(_tooltip(name, s))}</title>"
        ]
        if o and t:
            cx, cy = _x(100 * o.rate) + dx, _y(100 * t.rate) + dy
            label = point_label(text, cx, cy, AREA, taken)
            g.append(
                f'<line class="ebar" x1="{_x(100 * o.low) + dx:.1f}" y1="{cy:.1f}" x2="{_x(100 * o.high) + dx:.1f}" '
                f'y2="{cy:.1f}"/><line class="ebar" x1="{cx:.1f}" y1="{_y(100 * t.low) + dy:.1f}" x2="{cx:.1f}" '
                f'y2="{_y(100 * t.high) + dy:.1f}"/><circle cx="{cx:.1f}" cy="{cy:.1f}" r="6"/>'
                f"{_label_svg(label, (cx, cy))}"
            )
        elif o:
            cx = _x(100 * o.rate) + dx
            label = vline_label(text, cx, AREA, taken)
            g.append(f'<line class="only" x1="{cx:.1f}" y1="{_y(0):.1f}" x2="{cx:.1f}" y2="{_y(100):.1f}"/>')
            g.append(_label_svg(label))
        elif t:
            cy = _y(100 * t.rate) + dy
            label = hline_label(text, cy, AREA, taken)
            g.append(f'<line class="only" x1="{_x(0):.1f}" y1="{cy:.1f}" x2="{_x(100):.1f}" y2="{cy:.1f}"/>')
            g.append(_label_svg(label))
        taken.append(label.box)
        g.append("</g>")
        groups[i] = "".join(g)
    parts += [groups[i] for i in sorted(groups)]
    for i, s in enumerate(scores):
        name = labels.get(s.model, s.model)
        has_x, has_y, broad = _has(s.over_refusal_hard_1k), _has(s.toxic_refusal), _has(s.over_refusal_80k)
        if has_x and has_y:
            kind = ""
        elif has_x:
            kind = " (hard-1k only)"
        elif has_y:
            kind = " (toxic only" + ("; its 80k over-refusal is not on these axes)" if broad else ")")
        elif broad:
            kind = " (80k only: not on these axes, whose x is hard-1k)"
        else:
            continue
        colour = "#9ca3af" if not (has_x or has_y) else _PALETTE[i % len(_PALETTE)]
        legend.append(
            f'<span class="lg-item"><span class="lg" style="color:{colour}">●</span> {safe_text(name + kind)}</span>'
        )
    legend.append(
        f'<span class="lg-item"><span class="lg paper">●</span> {n_paper} models from the OR-Bench paper</span>'
    )
    caption = (
        "Points: the rates corrected for verdict error; bars: their 95% intervals, which count the verdicts' "
        "mistakes as well as sampling (the scoreboard says what the verdicts alone say). "
        "Up and to the left is better (refuses toxic, answers benign). "
        "x is over-refusal on hard-1k, as in the paper; 80k answers are scored apart and never plotted here. "
        "A model asked only one kind of prompt shows as a dashed line with its interval band. "
        "Models at the same spot are drawn side by side around it. "
        "Hover a point, or reach the paper's with Tab, for its name and numbers."
    )
    return (
        f'<div class="plot-inner"><svg class="orplot" viewBox="0 0 {_W} {_H}" role="group" '
        f'aria-label="Session models and paper models on over-refusal vs toxic refusal axes">{"".join(parts)}</svg>'
        f'<div class="legend">{" ".join(legend)}</div><div class="caption">{caption}</div></div>'
    )
