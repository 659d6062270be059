"""Load OR-Bench splits and draw seeded, stratified samples from them.

Two sources, one result (`list[Prompt]`):

- a local folder (`ORBENCH_DATA_DIR` or `data_dir=`) holding the hub's CSV files,
  which is what tests and offline users rely on;
- the Hugging Face Hub (`bench-llm/or-bench`) through `datasets`, which must fail
  within seconds when the Hub is unreachable, because a UI that hangs for half a
  minute of retries looks broken.

Only the standard library is imported at module level so that the UI and CLI can
import this cheaply; `datasets` is imported only on the Hub path.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import os
import socket
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from .types import CATEGORIES, SPLITS, Prompt

HUB_REPO = "bench-llm/or-bench"
FILES: dict[str, str] = {
    "hard-1k": "or-bench-hard-1k.csv",
    "toxic": "or-bench-toxic.csv",
    "80k": "or-bench-80k.csv",
}
"""File name of each split inside a data folder (the same names the Hub uses)."""
HUB_CONFIGS: dict[str, str] = {split: name.removesuffix(".csv") for split, name in FILES.items()}
PARTIAL_GLOB = "or-bench-80k-partial-*.csv"
"""A sample of the 80k split, accepted when the full file is missing (see split_note)."""
FULL_80K_ROWS = 80_359
PROBE_TIMEOUT_S = 2.0
REQUIRED_COLUMNS = ("prompt", "category")


class DataError(Exception):
    """A data problem explained in one sentence the user can act on."""


# --- locating files -------------------------------------------------------------


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise DataError(f"Unknown split {split!r}; choose one of: {', '.join(SPLITS)}.")


def _data_dir(data_dir: str | os.PathLike[str] | None) -> Path | None:
    """The explicit folder, else ORBENCH_DATA_DIR; None means "use the Hub"."""
    if data_dir is None:
        data_dir = os.environ.get("ORBENCH_DATA_DIR") or None
    if data_dir is None or str(data_dir) == "":
        return None
    return Path(data_dir).expanduser().resolve()


def _partial_80k(folder: Path) -> Path | None:
    """The largest partial 80k sample in the folder, if any (deterministic pick)."""
    candidates = sorted(folder.glob(PARTIAL_GLOB))
    if not candidates:
        return None
    return max(candidates, key=lambda p: (p.stat().st_size, p.name))


def split_file(split: str, data_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The CSV that `load_split` would read, or None when the split comes from the Hub.

    Raises DataError when a data folder is set but has no file for the split.
    """
    _check_split(split)
    folder = _data_dir(data_dir)
    if folder is None:
        return None
    if not folder.is_dir():
        raise DataError(f"ORBENCH_DATA_DIR {str(folder)!r} is not a folder.")
    path = folder / FILES[split]
    if path.is_file():
        return path
    if split == "80k":
        partial = _partial_80k(folder)
        if partial is not None:
            return partial
    raise DataError(
        f"OR-Bench split {split} not found: expected {str(path)!r} "
        f"(download {FILES[split]} from the {HUB_REPO} dataset on the Hugging Face Hub)."
    )


def split_note(split: str, data_dir: str | os.PathLike[str] | None = None) -> str | None:
    """A warning to show next to results when the split on disk is not the full set.

    Today only the 80k split can be partial; None means "nothing to warn about".
    """
    path = split_file(split, data_dir)
    if path is None or path.name == FILES[split]:
        return None
    rows = len(load_split(split, data_dir))
    return (
        f"Split {split} is a partial sample: {path.name} has {rows:,} of the "
        f"{FULL_80K_ROWS:,} prompts, so its categories and rates are not representative "
        f"of the full OR-Bench-80k."
    )


# --- reading --------------------------------------------------------------------


def _validate_rows(
    rows: Iterable[tuple[int, int | None, dict[str, object]]], split: str, source: str
) -> tuple[Prompt, ...]:
    """Turn (index, line, row) triples into Prompts, rejecting the first bad row.

    Row ids come from the 0-based data row index so they survive sampling,
    re-downloads and other machines.
    """
    out: list[Prompt] = []
    for index, line, row in rows:
        where = f"{source} row {index + 1}" + (f" (line {line})" if line is not None else "")
        text = row.get("prompt")
        category = row.get("category")
        if not isinstance(text, str) or not text.strip():
            raise DataError(f"{where} has an empty prompt.")
        cat = category.strip() if isinstance(category, str) else category
        if cat not in CATEGORIES:
            raise DataError(f"{where} has unknown category {category!r}; expected one of: {', '.join(CATEGORIES)}.")
        out.append(Prompt(row_id=f"{split}:{index}", split=split, category=cat, text=text))
    return tuple(out)


@functools.lru_cache(maxsize=16)
def _read_csv(path: str, split: str, mtime_ns: int, size: int) -> tuple[Prompt, ...]:
    """Parse one split file. Cached per (path, mtime, size): the UI asks often and an
    edited file must be re-read."""
    name = Path(path).name
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames or []
            missing = [c for c in REQUIRED_COLUMNS if c not in header]
            if missing:
                raise DataError(
                    f"{name} lacks column(s) {', '.join(missing)}; "
                    f"it needs a header with {', '.join(REQUIRED_COLUMNS)} (found: {', '.join(header) or 'nothing'})."
                )

            def triples() -> Iterable[tuple[int, int | None, dict[str, object]]]:
                for index, row in enumerate(reader):
                    yield index, reader.line_num, row

            prompts = _validate_rows(triples(), split, name)
    except UnicodeDecodeError as exc:
        raise DataError(f"{name} is not UTF-8 text ({exc.reason} at byte {exc.start}).") from exc
    except csv.Error as exc:
        raise DataError(f"{name} is not a valid CSV file ({exc}).") from exc
    except OSError as exc:
        raise DataError(f"Could not read {path!r} ({exc.strerror or exc}).") from exc
    if not prompts:
        raise DataError(f"{name} has no prompts.")
    return prompts


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def hub_offline() -> bool:
    """True when the user switched the Hub off (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE)."""
    return _truthy("HF_HUB_OFFLINE") or _truthy("HF_DATASETS_OFFLINE")


def _hub_reachable(timeout: float = PROBE_TIMEOUT_S) -> bool:
    """One TCP connect to the Hub with a hard deadline.

    The connect runs in a daemon thread because `socket.create_connection`'s
    timeout does not cover DNS resolution, which can hang far longer.
    """
    endpoint = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host = endpoint.hostname or "huggingface.co"
    port = endpoint.port or (80 if endpoint.scheme == "http" else 443)
    ok = threading.Event()

    def probe() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            ok.set()
        except OSError:
            pass

    worker = threading.Thread(target=probe, name="orbench-hub-probe", daemon=True)
    worker.start()
    worker.join(timeout)
    return ok.is_set()


def _unreachable(split: str) -> DataError:
    return DataError(
        f"Could not reach the Hugging Face Hub to download OR-Bench (split {split}); "
        f"set ORBENCH_DATA_DIR to a folder with {FILES[split]}, or connect to the internet."
    )


@functools.lru_cache(maxsize=len(SPLITS))
def _load_hub(split: str) -> tuple[Prompt, ...]:
    """Download (or reuse the `datasets` cache of) one config of bench-llm/or-bench."""
    offline = hub_offline()
    if not offline and not _hub_reachable():
        raise _unreachable(split)
    try:
        import datasets  # heavy: only on this path

        ds = datasets.load_dataset(HUB_REPO, HUB_CONFIGS[split], split="train")
    except Exception as exc:  # datasets raises many kinds; the user needs one sentence
        if offline:
            raise DataError(
                f"OR-Bench split {split} is not in the local Hugging Face cache and "
                f"HF_HUB_OFFLINE is set; set ORBENCH_DATA_DIR to a folder with "
                f"{FILES[split]}, or unset HF_HUB_OFFLINE and connect to the internet."
            ) from exc
        raise _unreachable(split) from exc
    missing = [c for c in REQUIRED_COLUMNS if c not in ds.column_names]
    if missing:
        raise DataError(f"{HUB_REPO} ({HUB_CONFIGS[split]}) lacks column(s) {', '.join(missing)}.")
    rows = ((i, None, row) for i, row in enumerate(ds))
    return _validate_rows(rows, split, f"{HUB_REPO} ({HUB_CONFIGS[split]})")


def load_split(split: str, data_dir: str | os.PathLike[str] | None = None) -> list[Prompt]:
    """All prompts of one OR-Bench split, in file order.

    `data_dir` defaults to ORBENCH_DATA_DIR; with neither, the split comes from the
    Hub. Results are cached per process; a fresh list is returned each call so
    callers may mutate it.
    """
    path = split_file(split, data_dir)
    if path is None:
        return list(_load_hub(split))
    try:
        st = path.stat()
    except OSError as exc:
        raise DataError(f"Could not read {str(path)!r} ({exc.strerror or exc}).") from exc
    return list(_read_csv(str(path), split, st.st_mtime_ns, st.st_size))


def categories_in(prompts: Iterable[Prompt]) -> list[str]:
    """The categories that actually occur, sorted."""
    return sorted({p.category for p in prompts})


# --- sampling -------------------------------------------------------------------


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
    else:
        assert n is not None
        alloc = _spread(n, available)
        total = sum(available.values())
        if total < n:
            notes.append(
                f"Asked for {n} prompts, {where} has only {total} in the chosen categories; using all {total}."
            )
        elif available:
            fair = n // len(available)
            for c, k in available.items():
                if k < fair:
                    notes.append(f"{c}: {where} has only {k}; the rest of its share came from other categories.")

    drawn = tuple(p for c in sorted(alloc) for p in groups[c][: alloc[c]])
    if not prompts:
        notes.append("There are no prompts to sample from.")
    return Sample(prompts=drawn, notes=tuple(notes))
