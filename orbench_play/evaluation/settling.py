"""Settling early, measured: each labelled answer replayed word by word, as a
stream would bring it, through the live verdict and the settle judgement
(`verdicts.settle`), and stopped where it settles.

Per source:

- **against the whole answer**: of the answers that settled, the share whose
  settled verdict (the final reading of the text that had arrived) is the
  whole answer's verdict, answer vs refusal and in three classes (targets
  ≥ 99% and ≥ 98%);
- **against people's labels**: agreement of the verdicts a settling run keeps
  (settled where it settled, whole elsewhere) with the labels, beside the
  whole answers' own agreement, over every clear row (binary) and every row
  read in OR-Bench's classes (three classes); the settled figure may be no
  worse by more than `LABEL_SLACK`;
- **saved**: the share of each answer's output not generated, in characters
  (tokens are about 4 characters: the share is the same), median per answer
  over all answers and over the settled ones, and over all output together.

The engine judges coalesced pieces every 50 ms rather than each word, and
keeps what arrives until the stream closes, so it stops a little later than
the replay; `make bench` reports the same figures on the embedded models' real
streams.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..types import REFUSALS
from .data import LabelledRow
from .harness import _pct

_WORDS = re.compile(r"\s*\S+\s*")

TARGET_BINARY = 0.99
TARGET_CLASSES = 0.98
LABEL_SLACK = 0.005
"""Settled verdicts may agree with people by at most half a point less than whole ones."""


@dataclass(slots=True)
class SettleFigures:
    """One source's settle figures (see the module docstring)."""

    answers: int = 0
    settled: int = 0
    same_binary: int = 0
    same_classes: int = 0
    labelled: int = 0
    """Clear rows: the label counts for the binary figure."""
    labelled_classes: int = 0
    """Rows read in OR-Bench's three classes (not coarse)."""
    label_binary_whole: int = 0
    label_binary_settled: int = 0
    label_classes_whole: int = 0
    label_classes_settled: int = 0
    saved_chars: int = 0
    total_chars: int = 0
    shares: list[float] = field(default_factory=list)
    """Per answer, the share of it not generated (0 for answers that ran to their end)."""

    def add(self, other: SettleFigures) -> None:
        for name in self.__slots__:
            value = getattr(other, name)
            if isinstance(value, list):
                getattr(self, name).extend(value)
            else:
                setattr(self, name, getattr(self, name) + value)

    @property
    def binary(self) -> float | None:
        return self.same_binary / self.settled if self.settled else None

    @property
    def classes(self) -> float | None:
        return self.same_classes / self.settled if self.settled else None

    def label_delta(self, binary: bool = True) -> float | None:
        """Settled minus whole agreement with the labels (negative: settling did worse)."""
        if binary:
            n, settled, whole = self.labelled, self.label_binary_settled, self.label_binary_whole
        else:
            n, settled, whole = self.labelled_classes, self.label_classes_settled, self.label_classes_whole
        return (settled - whole) / n if n else None

    @property
    def median_saved(self) -> float | None:
        return statistics.median(self.shares) if self.shares else None

    @property
    def median_saved_settled(self) -> float | None:
        mine = [s for s in self.shares if s > 0]
        return statistics.median(mine) if mine else None

    @property
    def saved_share(self) -> float | None:
        return self.saved_chars / self.total_chars if self.total_chars else None

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("shares")
        out.update(
            binary=self.binary,
            classes=self.classes,
            label_delta_binary=self.label_delta(True),
            label_delta_classes=self.label_delta(False),
            median_saved=self.median_saved,
            median_saved_settled=self.median_saved_settled,
            saved_share=self.saved_share,
        )
        return out


def replay(response: str, prompt: str) -> tuple[str, str, int | None]:
    """Stream `response` word by word through a live verdict and a settle watch:
    (the whole answer's final label, the label a settling run keeps, the
    characters that had arrived when it settled or None)."""
    from ..verdicts import LiveVerdict
    from ..verdicts.settle import SettleWatch

    live = LiveVerdict(prompt)
    watch = SettleWatch(prompt)
    settled = None
    for word in _WORDS.findall(response):
        live.feed(word)
        settled = watch.feed(word, live.label)
        if settled is not None:
            break
    whole = live.finish(response, "stop", prompt=prompt).label
    if settled is None:
        return whole, whole, None
    return whole, settled.verdict.label, watch.chars


def settle_figures(rows: Sequence[LabelledRow]) -> SettleFigures:
    """The settle figures of `rows` (one source, or any group)."""
    f = SettleFigures()
    for row in rows:
        whole, kept, at = replay(row.response, row.prompt)
        size = len(row.response)
        f.answers += 1
        f.total_chars += size
        if at is None:
            f.shares.append(0.0)
        else:
            f.settled += 1
            f.same_binary += (kept in REFUSALS) == (whole in REFUSALS)
            f.same_classes += kept == whole
            saved = max(0, size - at)
            f.saved_chars += saved
            f.shares.append(saved / size if size else 0.0)
        if row.clear:
            f.labelled += 1
            truth = row.label in REFUSALS
            f.label_binary_whole += (whole in REFUSALS) == truth
            f.label_binary_settled += (kept in REFUSALS) == truth
            if not row.coarse:
                f.labelled_classes += 1
                f.label_classes_whole += whole == row.label
                f.label_classes_settled += kept == row.label
    return f


def by_source(rows: Sequence[LabelledRow]) -> dict[str, SettleFigures]:
    groups: dict[str, list[LabelledRow]] = {}
    for row in rows:
        groups.setdefault(row.source, []).append(row)
    return {source: settle_figures(group) for source, group in groups.items()}


def _points(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.2f}"


def format_settle(title: str, figures: dict[str, SettleFigures]) -> str:
    lines = [title]
    lines.append(
        f"{'source':<30}{'n':>6}{'settled':>8}{'=whole':>8}{'3-class':>8}{'labels Δ':>9}{'Δ 3cl':>7}"
        f"{'saved med':>10}{'…settled':>9}{'all':>7}"
    )
    for name, f in figures.items():
        lines.append(
            f"{name[:29]:<30}{f.answers:>6}{f.settled:>8}{_pct(f.binary):>8}{_pct(f.classes):>8}"
            f"{_points(f.label_delta(True)):>9}{_points(f.label_delta(False)):>7}"
            f"{_pct(f.median_saved):>10}{_pct(f.median_saved_settled):>9}{_pct(f.saved_share):>7}"
        )
    lines.append(
        "  =whole / 3-class: settled verdict = the whole answer's, of the answers that settled (answer vs refusal, "
        "three classes); labels Δ: agreement with people's labels, settled run minus whole answers, in points "
        "(binary over clear rows, Δ 3cl over rows read in three classes); saved: share of output not generated "
        "(median per answer over all answers, over settled ones, and of all output)."
    )
    return "\n".join(lines)


def target_rows(figures: dict[str, SettleFigures], prefix: str) -> list[tuple[str, float | None, float]]:
    """(figure, value, target) for each source: agreement with the whole answer,
    and with people's labels relative to the whole answers (value 1 + delta, target 1 - slack)."""
    rows: list[tuple[str, float | None, float]] = []
    for name, f in figures.items():
        if not f.settled:
            continue
        rows.append((f"settled=whole, binary, {prefix}{name}", f.binary, TARGET_BINARY))
        rows.append((f"settled=whole, 3-class, {prefix}{name}", f.classes, TARGET_CLASSES))
        delta = f.label_delta(True)
        if delta is not None:
            rows.append((f"settled vs labels (1+Δ), {prefix}{name}", 1 + delta, 1 - LABEL_SLACK))
    return rows
