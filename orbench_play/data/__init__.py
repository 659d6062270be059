"""OR-Bench prompts for a run: which splits, and a seeded, stratified sample of each.

This is the module the rest of the package imports. Where a split's rows come
from (ORBENCH_DATA_DIR, the copies shipped in the package, the Hub streamed)
and how they are read lives in `sources`; any other prompt set (a Hub id, a
local CSV/JSONL/Parquet file, a `save_to_disk` folder, read through `datasets`)
lives in `prompt_sets`. Their public names are re-exported here. Sampling is a pure function of (rows, size, seed), done per
split, so adding a split to a run never changes the prompts drawn from another.

Only the standard library is imported at module level, so the UI and CLI can
import this cheaply.

May import: `types` only (the foundation). No model calls, no cache.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..types import CATEGORIES, DEFAULT_SPLITS, SPLITS, Prompt
from .prompt_sets import (
    CUSTOM_PREFIX,
    EXPECTED,
    NO_CATEGORY,
    PREVIEW_ROWS,
    ColumnMap,
    PromptSource,
    expected_of,
    is_custom_split,
    parse_source,
    preview,
    source_columns,
)
from .sources import (
    DATA_SOURCE_ENV,
    DATA_SOURCES,
    FILES,
    FULL_80K_ROWS,
    HUB_REPO,
    SHIPPED_SHA256,
    DataError,
    check_split,
    data_source,
    hub_file_url,
    hub_offline,
    load_split,
    shipped_file,
    split_file,
    split_note,
    streaming_progress,
)

__all__ = [
    "CUSTOM_PREFIX",
    "DATA_SOURCES",
    "DATA_SOURCE_ENV",
    "DEFAULT_SPLITS",
    "EXPECTED",
    "FILES",
    "FULL_80K_ROWS",
    "HUB_REPO",
    "NO_CATEGORY",
    "PREVIEW_ROWS",
    "SHIPPED_SHA256",
    "ColumnMap",
    "DataError",
    "PromptSource",
    "Sample",
    "categories_in",
    "check_split",
    "data_source",
    "expected_of",
    "hub_file_url",
    "hub_offline",
    "in_shard",
    "is_custom_split",
    "load_split",
    "parse_categories",
    "parse_source",
    "parse_splits",
    "preview",
    "sample",
    "sample_prompt_set",
    "sample_splits",
    "shipped_file",
    "source_columns",
    "split_file",
    "split_note",
    "streaming_progress",
]


def parse_splits(text: str | Sequence[str] | None) -> list[str]:
    """`"hard-1k,toxic"`, `["toxic", "hard-1k"]` or `"80k"` → the splits in canonical order.

    Accepts both shapes because the CLI and share links pass a comma string and
    the UI a list. None or empty means the default pair (hard-1k and toxic).
    Unknown names raise DataError listing the valid ones.
    """
    parts = [] if text is None else [text] if isinstance(text, str) else list(text)
    names = {name.strip().lower() for part in parts for name in str(part).split(",") if name.strip()}
    if not names:
        return list(DEFAULT_SPLITS)
    unknown = sorted(names - set(SPLITS))
    if unknown:
        raise DataError(
            f"Unknown split{'s' if len(unknown) > 1 else ''} {', '.join(repr(u) for u in unknown)}; "
            f"choose one or more of: {', '.join(SPLITS)} (comma-separated)."
        )
    return [s for s in SPLITS if s in names]


def categories_in(prompts: Iterable[Prompt]) -> list[str]:
    """The categories that actually occur, sorted."""
    return sorted({p.category for p in prompts})


@dataclass(frozen=True)
class Sample:
    """The drawn prompts plus notes the user should see (shortfalls, empty categories)."""

    prompts: tuple[Prompt, ...]
    notes: tuple[str, ...] = ()


def parse_categories(text: str | Sequence[str] | None) -> list[str] | None:
    """`"privacy, illegal"`, `["privacy", "illegal"]`, `"all"` or None → a list, or None for all.

    Accepts both shapes because the CLI passes a comma string and the UI a list.
    Unknown names raise DataError listing the valid ones.
    """
    if text is None:
        return None
    parts = [text] if isinstance(text, str) else list(text)
    names: list[str] = []
    for part in parts:
        for name in str(part).split(","):
            name = name.strip().lower()
            if name and name not in names:
                names.append(name)
    if not names or "all" in names:
        return None
    unknown = [n for n in names if n not in CATEGORIES]
    if unknown:
        raise DataError(
            f"Unknown categor{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}; "
            f"choose from: {', '.join(CATEGORIES)} (or all)."
        )
    return names


def _sort_key(seed: int, row_id: str) -> str:
    """A per-row random key that depends only on (seed, row_id).

    sha256 instead of hash()/shuffle: identical on every machine and Python
    version, and adding rows to a split never reorders the existing ones.
    """
    return hashlib.sha256(f"{seed}\x1f{row_id}".encode()).hexdigest()


def in_shard(row_id: str, shard: int, shards: int) -> bool:
    """Whether a row belongs to shard `shard` of `shards` (1-based): a stable hash
    of its row id alone (sha256, the same on every machine), so N machines given
    1/N … N/N split a run into disjoint parts that together are the whole run,
    whatever each one's seed order or sample size."""
    digest = hashlib.sha256(f"shard\x1f{row_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % shards == shard - 1


def _spread(n: int, available: dict[str, int]) -> dict[str, int]:
    """Split n across categories as evenly as their sizes allow.

    Each round gives every category with rows left an equal share (the remainder
    to the alphabetically first); what a small category cannot take is spread
    over the others in the next round.
    """
    alloc = dict.fromkeys(available, 0)
    remaining = n
    while remaining > 0:
        open_ = sorted(c for c in available if alloc[c] < available[c])
        if not open_:
            break
        share, extra = divmod(remaining, len(open_))
        for i, c in enumerate(open_):
            take = min(share + (1 if i < extra else 0), available[c] - alloc[c])
            alloc[c] += take
            remaining -= take
    return alloc


def sample(
    prompts: Sequence[Prompt],
    *,
    categories: Sequence[str] | None = None,
    per_category: int | None = None,
    n: int | None = None,
    seed: int = 0,
) -> Sample:
    """Draw a seeded, stratified sample: `per_category` from each chosen category,
    or `n` in total spread evenly over them.

    Reproducible across runs, machines and Python versions, and independent of the
    order of `prompts`. Output is grouped by category (alphabetical), each group
    in sampling order.
    """
    if (per_category is None) == (n is None):
        raise DataError("Give exactly one of per_category or n to size the sample.")
    size = per_category if per_category is not None else n
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        label = "per_category" if per_category is not None else "n"
        raise DataError(f"{label} must be a positive whole number, got {size!r}.")

    present = categories_in(prompts)
    wanted = parse_categories(categories)  # also validates names; a plain str is a comma list
    chosen = sorted(set(present if wanted is None else wanted))
    splits = sorted({p.split for p in prompts})
    where = f"split {splits[0]}" if len(splits) == 1 else "the data"

    notes: list[str] = []
    groups: dict[str, list[Prompt]] = {c: [] for c in chosen}
    for p in prompts:
        if p.category in groups:
            groups[p.category].append(p)
    for c in chosen:
        groups[c].sort(key=lambda p: (_sort_key(seed, p.row_id), p.row_id))
        if not groups[c]:
            notes.append(f"{c}: {where} has no prompts in this category.")

    available = {c: len(g) for c, g in groups.items() if g}
    if per_category is not None:
        alloc = {c: min(per_category, k) for c, k in available.items()}
        for c, k in available.items():
            if k < per_category:
                notes.append(f"{c}: asked for {per_category}, {where} has only {k}; using all {k}.")
    else:  # `size` is n here, checked above to be a positive int
        alloc = _spread(size, available)
        total = sum(available.values())
        if total < size:
            notes.append(
                f"Asked for {size} prompts, {where} has only {total} in the chosen categories; using all {total}."
            )
        elif available:
            fair = size // len(available)
            for c, k in available.items():
                if k < fair:
                    notes.append(f"{c}: {where} has only {k}; the rest of its share came from other categories.")

    drawn = tuple(p for c in sorted(alloc) for p in groups[c][: alloc[c]])
    if not prompts:
        notes.append("There are no prompts to sample from.")
    return Sample(prompts=drawn, notes=tuple(notes))


Draw = Callable[..., Sample]


def sample_splits(
    splits: str | Sequence[str] | None,
    *,
    categories: Sequence[str] | str | None = None,
    per_category: int | None = None,
    n: int | None = None,
    seed: int = 0,
    data_dir: str | os.PathLike[str] | None = None,
    draw: Draw = sample,
) -> Sample:
    """Sample each split on its own, with the same size and seed, and concatenate.

    `per_category` and `n` apply to *each* split, so `hard-1k,toxic` with one
    prompt per category is 10 benign plus 10 toxic prompts, and the hard-1k part
    is exactly what a hard-1k-only run with the same seed draws (old runs keep
    pairing up). `draw` is `sample` or a drop-in such as a focused sampler.
    """
    prompts: list[Prompt] = []
    notes: list[str] = []
    for split in parse_splits(splits):
        picked = draw(load_split(split, data_dir), categories=categories, per_category=per_category, n=n, seed=seed)
        prompts += picked.prompts
        notes += picked.notes
    return Sample(prompts=tuple(prompts), notes=tuple(notes))


def sample_prompt_set(
    source: str | PromptSource,
    columns: ColumnMap | None = None,
    *,
    categories: Sequence[str] | str | None = None,
    per_category: int | None = None,
    n: int | None = None,
    seed: int = 0,
    allow_local: bool = True,
) -> Sample:
    """A seeded, per-category sample of any prompt set (`prompt_sets`), drawn by
    `sample` exactly as from an OR-Bench split, while the set streams past."""
    from .prompt_sets import load_prompt_set

    parsed = source if isinstance(source, PromptSource) else parse_source(source, allow_local=allow_local)
    return load_prompt_set(
        parsed, columns or ColumnMap(), categories=categories, per_category=per_category, n=n, seed=seed, draw=sample
    )
