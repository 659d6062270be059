"""The shape of a benchmark figure, the printed table and `bench-results.json`.

Every figure is a `Figure`: a measured `value` in `unit`, the `floor` it is
compared with (same unit, measured back to back in the same process or on the
same machine), and `ratio = value / floor` (so for times, 1.0 is "no overhead").
For throughput figures the ratio is written the way its target is stated and
`detail["ratio_means"]` says how to read it. `detail` always names the floor,
carries the raw numbers of both sides and the command that produced them.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Figure:
    name: str
    value: float | None
    unit: str
    floor: float | None = None
    ratio: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": _clean(self.value),
            "unit": self.unit,
            "floor": _clean(self.floor),
            "ratio": _clean(self.ratio),
            "detail": self.detail,
        }


def _clean(x: float | None) -> float | None:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return round(float(x), 6)


def ratio(value: float | None, floor: float | None) -> float | None:
    if value is None or not floor:
        return None
    return value / floor


def skipped(name: str, unit: str, reason: str, command: str) -> Figure:
    """A figure that could not be measured here: reported, never a failure."""
    return Figure(name, None, unit, None, None, {"skipped": reason, "command": command})


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    with contextlib.suppress(OSError):  # no load average on this platform
        info["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    return info


def write_json(figures: list[Figure], path: str | os.PathLike[str]) -> None:
    """`bench-results.json`: a list of figure objects (machine info rides in each detail)."""
    Path(path).write_text(json.dumps([f.to_dict() for f in figures], indent=2) + "\n")


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    ax = abs(x)
    if ax == 0:
        return "0"
    if ax >= 1000:
        return f"{x:,.0f}"
    if ax >= 100:
        return f"{x:.0f}"
    if ax >= 10:
        return f"{x:.1f}"
    if ax >= 1:
        return f"{x:.2f}"
    if ax >= 0.01:
        return f"{x:.3f}"
    return f"{x:.2g}"


def _status(f: Figure) -> str:
    d = f.detail
    if "skipped" in d:
        return "skipped: " + str(d["skipped"])[:70]
    target = d.get("target", "")
    met = d.get("meets_target")
    if met is None:
        return target
    return f"{'ok' if met else 'MISSED'} ({target})" if target else ("ok" if met else "MISSED")


def table(figures: list[Figure]) -> str:
    """A Markdown table (prints fine in a terminal, pastes into the README)."""
    rows = [("figure", "value", "unit", "floor", "ratio", "floor is", "target")]
    for f in figures:
        rows.append(
            (
                f.name,
                _fmt(f.value),
                f.unit,
                _fmt(f.floor),
                _fmt(f.ratio),
                str(f.detail.get("floor_name", "-")),
                _status(f),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |")
        if n == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)
