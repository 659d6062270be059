"""Placing the plot's model labels: inside the plot area, clear of each other.

Pure geometry in the SVG's own units, so it is tested without a browser (and
the browser test checks the result with real font metrics). Text width is
estimated a little generously for the bold 11-unit font the plot uses; the
cost of a generous estimate is only a label placed one slot further away.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

FONT = 11.0
CHAR_W = 0.64 * FONT
"""Average advance of a bold sans-serif character, a little on the wide side."""
ASCENT, DESCENT = 0.8 * FONT, 0.25 * FONT
MAX_LABEL_CHARS = 22
GAP = 8.0
"""Distance from a point to the nearest edge of its label."""


@dataclass(frozen=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Box, pad: float = 1.0) -> bool:
        return not (
            self.x1 + pad <= other.x0
            or other.x1 + pad <= self.x0
            or self.y1 + pad <= other.y0
            or other.y1 + pad <= self.y0
        )

    def inside(self, area: Box) -> bool:
        return self.x0 >= area.x0 and self.x1 <= area.x1 and self.y0 >= area.y0 and self.y1 <= area.y1


@dataclass(frozen=True)
class Label:
    """Where to draw one label: text anchored at (x, y) (`anchor` as SVG's
    text-anchor), its estimated box, and whether it needs a leader line."""

    text: str
    x: float
    y: float
    anchor: str
    box: Box
    leader: bool = False


def short_name(name: str, limit: int = MAX_LABEL_CHARS) -> str:
    """The label's text: the name, cut with an ellipsis past `limit` characters
    (the full name is in the point's tooltip and the legend)."""
    return name if len(name) <= limit else name[: limit - 1].rstrip() + "…"


def text_width(text: str) -> float:
    return len(text) * CHAR_W + 2


def box_for(text: str, x: float, y: float, anchor: str) -> Box:
    """The estimated box of `text` drawn with its baseline at y."""
    w = text_width(text)
    x0 = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
    return Box(x0, y - ASCENT, x0 + w, y + DESCENT)


def _fits(box: Box, area: Box, taken: Iterable[Box]) -> bool:
    return box.inside(area) and not any(box.overlaps(t) for t in taken)


def _first_fit(
    text: str, spots: Iterable[tuple[float, float, str, bool]], area: Box, taken: Sequence[Box]
) -> Label | None:
    for x, y, anchor, leader in spots:
        box = box_for(text, x, y, anchor)
        if _fits(box, area, taken):
            return Label(text, x, y, anchor, box, leader)
    return None


def _clamped(text: str, x: float, y: float, anchor: str, area: Box) -> Label:
    """Last resort: the preferred spot, pushed inside the plot area (may overlap)."""
    box = box_for(text, x, y, anchor)
    dx = max(0.0, area.x0 - box.x0) - max(0.0, box.x1 - area.x1)
    dy = max(0.0, area.y0 - box.y0) - max(0.0, box.y1 - area.y1)
    return Label(text, x + dx, y + dy, anchor, box_for(text, x + dx, y + dy, anchor))


def point_label(text: str, cx: float, cy: float, area: Box, taken: Sequence[Box]) -> Label:
    """A label next to the point (cx, cy): right, left, above or below it, then
    further out with a leader line, always inside `area` and clear of `taken`."""
    up, down = cy - GAP, cy + GAP + ASCENT
    near = [
        (cx + GAP, up, "start", False),
        (cx + GAP, down, "start", False),
        (cx - GAP, up, "end", False),
        (cx - GAP, down, "end", False),
        (cx, cy - GAP - 4, "middle", False),
        (cx, cy + GAP + 4 + ASCENT, "middle", False),
    ]
    far = []
    for step in range(1, 12):
        d = 14.0 * step
        far += [
            (cx + GAP, up - d, "start", True),
            (cx + GAP, down + d, "start", True),
            (cx - GAP, up - d, "end", True),
            (cx - GAP, down + d, "end", True),
        ]
    return _first_fit(text, near + far, area, taken) or _clamped(text, cx + GAP, up, "start", area)


def vline_label(text: str, cx: float, area: Box, taken: Sequence[Box]) -> Label:
    """A label for a vertical line at x=cx (a model with benign answers only):
    beside the line, from the top of the plot down."""
    spots = []
    for step in range(30):
        y = area.y0 + ASCENT + 2 + 14.0 * step
        spots += [(cx + 4, y, "start", False), (cx - 4, y, "end", False)]
    return _first_fit(text, spots, area, taken) or _clamped(text, cx + 4, area.y0 + ASCENT + 2, "start", area)


def hline_label(text: str, cy: float, area: Box, taken: Sequence[Box]) -> Label:
    """A label for a horizontal line at y=cy (a model with toxic answers only):
    just above or below the line, from the left of the plot to the right."""
    spots = []
    width = text_width(text)
    for step in range(40):
        x = area.x0 + 4 + 12.0 * step
        if x + width > area.x1:
            break
        spots += [(x, cy - 4, "start", False), (x, cy + 4 + ASCENT, "start", False)]
    return _first_fit(text, spots, area, taken) or _clamped(text, area.x0 + 4, cy - 4, "start", area)


def marker_box(cx: float, cy: float, r: float = 6.0) -> Box:
    return Box(cx - r, cy - r, cx + r, cy + r)
