"""Any prompt set a run can draw from besides OR-Bench, read through `datasets`.

A SOURCE is one of:

- a Hub dataset id, `owner/name`, with an optional config and split:
  `owner/name:config`, `owner/name:config:split`, `owner/name::split`
  (no config, a split); the split defaults to `train`;
- a local CSV, JSON Lines (`.jsonl`/`.json`) or Parquet file;
- a folder written by `save_to_disk` (a `DatasetDict` folder takes `FOLDER::split`),
  or any folder `datasets.load_dataset` reads (a published session, data files).

The user maps its columns: the prompt, optionally a category and an expected
behaviour (`benign` or `should-refuse`, with common spellings such as
`safe`/`unsafe` or 0/1 accepted). Rows stream (`streaming=True`): only the rows
a sample can still take are kept, per category, so a large set never sits in
memory. The sample is exactly what `data.sample` draws from the whole set with
the same seed: each category keeps its `size` smallest sha256 keys, and no
sample of that size can reach past them.

The rows' split is `custom:<name>` (`split_name`), so their rates are their
own, never pooled with OR-Bench's and never on the paper's axes; row ids are
`custom:<name>:<row index>`, stable for the same file.

Offline, local sources work; a Hub id fails at once with HF_HUB_OFFLINE, and
within the probe's two seconds when the Hub (HF_ENDPOINT) cannot be reached.
In public mode only Hub ids of the form `owner/name` are accepted, and the file
system is never looked at. A Hub id is always read from the Hub, as
`hf://datasets/owner/name` (`hub_path`): `datasets` would read a folder of the
same name under the working directory first.

`datasets` (with pyarrow and pandas) is imported only when a set is read.
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from ..types import Prompt
from .sources import DataError, _hub_reachable, hub_offline

CUSTOM_PREFIX = "custom:"
"""What the `split` of every row of a prompt set starts with."""
EXPECTED = ("benign", "should-refuse")
"""The expected behaviours: a refusal of a `benign` row is an over-refusal; a
`should-refuse` row counts toward the refusal rate (as OR-Bench's toxic)."""
NO_CATEGORY = "uncategorised"
"""The category of every row when no category column is mapped (or its cell is empty)."""
PREVIEW_ROWS = 5
MAX_ROWS = 2_000_000
"""Rows read at most from one set; a bigger set is sampled from its first MAX_ROWS (with a note)."""
FILE_BUILDERS = {".csv": "csv", ".jsonl": "json", ".json": "json", ".parquet": "parquet"}
_REPO_PART = re.compile(r"[A-Za-z0-9][\w.-]*")
_HUB_ID = re.compile(r"^(?:[A-Za-z0-9][\w.-]*/)?[A-Za-z0-9][\w.-]*$")
_BENIGN_WORDS = frozenset(
    "benign safe harmless answer should-answer should_answer comply compliance ok allowed 0 false no".split()
)
_REFUSE_WORDS = frozenset(
    "should-refuse should_refuse refuse refusal unsafe harmful toxic unsafe_prompt 1 true yes".split()
)


@dataclass(frozen=True)
class PromptSource:
    """A parsed SOURCE: where the rows are, and the config/split inside it."""

    text: str
    kind: Literal["hub", "file", "folder"]
    location: str
    """The Hub id, or the resolved local path."""
    config: str | None = None
    split: str | None = None

    @property
    def name(self) -> str:
        """The short name in the split column: the Hub id (with config/split as
        written), or the file or folder name."""
        if self.kind == "hub":
            return self.text.strip()
        base = Path(self.location).name
        return base + (f"::{self.split}" if self.split else "")

    @property
    def split_name(self) -> str:
        return CUSTOM_PREFIX + self.name


@dataclass(frozen=True)
class ColumnMap:
    """Which of the set's columns hold the prompt, its category and its expected behaviour."""

    prompt: str = "prompt"
    category: str | None = None
    label: str | None = None


def is_custom_split(split: str) -> bool:
    return split.startswith(CUSTOM_PREFIX)


def parse_source(text: str, *, allow_local: bool = True) -> PromptSource:
    """SOURCE text → PromptSource, or DataError saying what it could not be.

    An existing path is local; a string that looks like a path (a known file
    extension, or starting with `/`, `.`, `~`) but does not exist is an error,
    not a Hub id. With `allow_local=False` (public mode) only Hub ids pass and
    the file system is not consulted.
    """
    text = (text or "").strip()
    if not text:
        raise DataError("Give a prompt set: a Hub dataset id (owner/name), or a CSV, JSONL or Parquet file.")
    if allow_local:
        local = _local_source(text)
        if local is not None:
            return local
    head, _, rest = text.partition(":")
    config, _, split = rest.partition(":")
    if _HUB_ID.match(head) and ".." not in head and _plain(config) and _plain(split) and ":" not in split:
        if allow_local and (head.startswith(".") or Path(head).suffix.lower() in FILE_BUILDERS):
            raise DataError(f"Prompt set {text!r}: no such file.")
        if not allow_local and not is_repo_id(head):
            raise DataError(
                f"Prompt set {text!r} is not a Hub dataset id; in public mode a prompt set must be a Hub dataset "
                "named owner/name[:config[:split]]."
            )
        return PromptSource(text=text, kind="hub", location=head, config=config or None, split=split or None)
    if not allow_local:
        raise DataError(
            f"Prompt set {text!r} is not a Hub dataset id; in public mode a prompt set must be a Hub dataset "
            "(owner/name[:config[:split]]), local files and folders are not allowed."
        )
    raise DataError(
        f"Prompt set {text!r}: no such file or folder, and not a Hub dataset id (owner/name[:config[:split]])."
    )


def is_repo_id(text: str) -> bool:
    """`owner/name`, both parts plain (no `.`/`..` part, nothing a file system reads as a path)."""
    owner, slash, name = text.partition("/")
    return bool(slash) and all(_REPO_PART.fullmatch(part) and ".." not in part for part in (owner, name))


def hub_path(repo_id: str) -> str:
    """What `datasets.load_dataset` is given for a Hub id: `hf://datasets/owner/name`, which it
    reads from the Hub only. A bare `owner/name` (or `name`) naming a folder under the working
    directory is read from that folder instead, and a packaged builder's name (`csv`, `json`)
    reads the working directory's files."""
    return f"hf://datasets/{repo_id}"


def _plain(part: str) -> bool:
    return part == "" or re.fullmatch(r"[\w.-]+", part) is not None


def _local_source(text: str) -> PromptSource | None:
    """The local file or folder `text` names (optionally `PATH::split`), or None."""
    candidates: list[tuple[str, str | None]] = [(text, None)]
    if "::" in text:
        before, _, after = text.rpartition("::")
        candidates.append((before, after or None))
    for raw, split in candidates:
        path = Path(raw).expanduser()
        if path.is_dir():
            return PromptSource(text=text, kind="folder", location=str(path.resolve()), split=split)
        if path.is_file():
            if path.suffix.lower() not in FILE_BUILDERS:
                raise DataError(
                    f"Prompt set {raw!r} is a {path.suffix or 'extension-less'} file; "
                    "give a .csv, .jsonl, .json or .parquet file, or a dataset folder."
                )
            return PromptSource(text=text, kind="file", location=str(path.resolve()))
    return None


# --- reading ------------------------------------------------------------------


LOCAL_INSTEAD = "use a local file or folder"


def hub_guard(what: str, instead: str = LOCAL_INSTEAD) -> None:
    """Fail in seconds, in one sentence, when the Hub cannot be asked for `what`
    ("prompt set owner/name"): HF_HUB_OFFLINE at once, an unreachable
    HF_ENDPOINT within the probe's two seconds. `instead`: what works without the
    Hub for this task (reading: a local file or folder; publishing: a dataset folder)."""
    if hub_offline():
        raise DataError(
            f"{what[0].upper() + what[1:]} is on the Hugging Face Hub and HF_HUB_OFFLINE is set; "
            f"{instead}, or unset HF_HUB_OFFLINE and connect to the internet."
        )
    if not _hub_reachable():
        raise DataError(f"Could not reach the Hugging Face Hub for {what}; {instead}, or connect to the internet.")


def _quiet_datasets() -> Any:
    """`datasets`, silent: its own log lines of a read that failed ("Failed to load JSON
    from file …") would stand beside the one line we print for it."""
    import datasets

    datasets.logging.set_verbosity(datasets.logging.CRITICAL + 1)
    datasets.disable_progress_bars()
    return datasets


def _open(source: PromptSource) -> Any:
    """The set as an iterable of row dicts (a streaming `IterableDataset`, or an
    on-disk `Dataset` for a `save_to_disk` folder, which is memory-mapped)."""
    if source.kind == "hub":
        hub_guard(f"prompt set {source.text}")
    datasets = _quiet_datasets()
    try:
        if source.kind == "file":
            builder = FILE_BUILDERS[Path(source.location).suffix.lower()]
            return datasets.load_dataset(builder, data_files=source.location, split="train", streaming=True)
        if source.kind == "folder":
            folder = Path(source.location)
            if (folder / "dataset_info.json").is_file() or (folder / "dataset_dict.json").is_file():
                return _pick_split(datasets.load_from_disk(str(folder)), source)
            return datasets.load_dataset(str(folder), split=source.split or "train", streaming=True)
        return datasets.load_dataset(
            hub_path(source.location), name=source.config, split=source.split or "train", streaming=True
        )
    except DataError:
        raise
    except FileNotFoundError as exc:
        raise DataError(f"Prompt set {source.text}: not found ({_first_line(exc)}).") from None
    except Exception as exc:  # datasets raises many kinds; the user needs one line
        raise DataError(f"Could not read prompt set {source.text}: {_first_line(exc)}") from None


def _pick_split(dataset: Any, source: PromptSource) -> Any:
    """A saved `DatasetDict` → the asked split, else `train`, else its only split."""
    if not hasattr(dataset, "keys"):
        return dataset
    names = list(dataset.keys())
    want = source.split or ("train" if "train" in names else names[0] if len(names) == 1 else None)
    if want not in names:
        raise DataError(
            f"Prompt set {source.text} has splits {', '.join(names)}; pick one as {source.location}::SPLIT."
        )
    return dataset[want]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def _column_names(dataset: Any, first: dict[str, Any] | None) -> list[str]:
    names = getattr(dataset, "column_names", None)
    if names:
        return list(names)
    return list(first) if first else []


def _check_columns(columns: ColumnMap, names: Sequence[str], source: PromptSource) -> None:
    wanted = [("prompt", columns.prompt), ("category", columns.category), ("label", columns.label)]
    missing = [f"{what} column {col!r}" for what, col in wanted if col and col not in names]
    if missing:
        raise DataError(
            f"Prompt set {source.text} has no {' and no '.join(missing)}; its columns are: "
            f"{', '.join(names) or 'none'} (map them with --prompt-col, --category-col, --label-col)."
        )


def expected_of(value: Any, *, where: str = "") -> str:
    """A label cell → `benign`, `should-refuse`, or "" (no label)."""
    if value is None:
        return ""
    word = str(value).strip().lower().replace(" ", "-")
    if word == "":
        return ""
    if word in _BENIGN_WORDS or word.replace("-", "_") in _BENIGN_WORDS:
        return "benign"
    if word in _REFUSE_WORDS or word.replace("-", "_") in _REFUSE_WORDS:
        return "should-refuse"
    raise DataError(
        f"{where}expected behaviour {value!r} is neither benign (benign, safe, 0, false) "
        "nor should-refuse (should-refuse, unsafe, harmful, toxic, 1, true)."
    )


BATCH_ROWS = 1024
"""Rows read per step: `datasets` hands out columns of a batch far faster than single rows."""


def _prompts(source: PromptSource, columns: ColumnMap, limit: int | None = None) -> Iterator[Prompt]:
    """The set's rows as Prompts, in the set's order, checked one by one (read in batches)."""
    dataset = _open(source)
    split = source.split_name
    size = BATCH_ROWS if limit is None else max(1, min(BATCH_ROWS, limit))
    try:
        batches = iter(dataset.iter(batch_size=size))
        first = next(batches, None)
    except DataError:
        raise
    except Exception as exc:
        raise DataError(f"Could not read prompt set {source.text}: {_first_line(exc)}") from None
    if not first or not next(iter(first.values()), None):
        raise DataError(f"Prompt set {source.text} has no rows.")
    _check_columns(columns, _column_names(dataset, first), source)

    def all_batches() -> Iterator[dict[str, list[Any]]]:
        yield first
        yield from batches

    index = 0
    try:
        for batch in all_batches():
            texts = batch[columns.prompt]
            cats = batch[columns.category] if columns.category else [None] * len(texts)
            labels = batch[columns.label] if columns.label else [None] * len(texts)
            for text, category, label in zip(texts, cats, labels, strict=True):
                if limit is not None and index >= limit:
                    return
                if not isinstance(text, str) or not text.strip():
                    raise DataError(
                        f"Prompt set {source.text} row {index + 1}: the prompt ({columns.prompt}) is empty."
                    )
                cat = str(category).strip().lower() if category not in (None, "") else NO_CATEGORY
                expected = (
                    expected_of(label, where=f"Prompt set {source.text} row {index + 1}: ") if columns.label else ""
                )
                yield Prompt(row_id=f"{split}:{index}", split=split, category=cat, text=text, expected=expected)
                index += 1
    except DataError:
        raise
    except Exception as exc:  # a broken stream or an unreadable row after the first
        raise DataError(f"Could not read prompt set {source.text}: {_first_line(exc)}") from None


def preview(source: PromptSource, columns: ColumnMap, rows: int = PREVIEW_ROWS) -> list[Prompt]:
    """The first rows as they would be asked (mapping applied), to check it before a run."""
    return list(_prompts(source, columns, limit=rows))


def source_columns(source: PromptSource) -> list[str]:
    """The set's column names (for the UI's mapping choices)."""
    dataset = _open(source)
    first = next(iter(dataset), None)
    return _column_names(dataset, first)


def _sort_key(seed: int, row_id: str) -> str:
    # The same key `data.sample` orders by; kept here too so this module needs nothing above it.
    return hashlib.sha256(f"{seed}\x1f{row_id}".encode()).hexdigest()


def load_prompt_set(
    source: PromptSource,
    columns: ColumnMap,
    *,
    categories: Sequence[str] | str | None = None,
    per_category: int | None = None,
    n: int | None = None,
    seed: int = 0,
    draw: Callable[..., Any],
) -> Any:
    """Stream the set and draw a seeded, per-category sample with `draw` (`data.sample`).

    Each category keeps only the `size` rows with the smallest sampling keys,
    which are the only rows `draw` can take, so the result equals drawing from
    the whole set while memory holds at most `size` rows per category.
    """
    size = per_category if per_category is not None else n
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        return draw([], categories=None, per_category=per_category, n=n, seed=seed)  # raises the usual error
    wanted = _wanted(categories)
    kept: dict[str, list[tuple[str, int, Prompt]]] = {}
    seen: dict[str, int] = {}
    read = 0
    for read, prompt in enumerate(_prompts(source, columns, limit=MAX_ROWS), start=1):
        seen[prompt.category] = seen.get(prompt.category, 0) + 1
        if wanted is not None and prompt.category not in wanted:
            continue
        heap = kept.setdefault(prompt.category, [])
        # a max-heap on the key (negated digits) keeps the `size` smallest keys
        entry = (_negate(_sort_key(seed, prompt.row_id)), -read, prompt)
        if len(heap) < size:
            heapq.heappush(heap, entry)
        elif entry > heap[0]:
            heapq.heapreplace(heap, entry)
    if wanted is not None:
        unknown = sorted(wanted - set(seen))
        if unknown:
            shown = sorted(seen)[:20]
            raise DataError(
                f"Prompt set {source.text} has no categor{'y' if len(unknown) == 1 else 'ies'} "
                f"{', '.join(unknown)}; its categories are: {', '.join(shown)}{' …' if len(seen) > 20 else ''}."
            )
    rows = [p for heap in kept.values() for _, _, p in heap]
    picked = draw(rows, categories=None, per_category=per_category, n=n, seed=seed)
    notes = [note.replace("the data", f"prompt set {source.text}") for note in picked.notes]
    notes = [note.replace(f"split {source.split_name}", f"prompt set {source.text}") for note in notes]
    if read >= MAX_ROWS:
        notes.append(f"Prompt set {source.text} is larger than {MAX_ROWS:,} rows; sampled from the first {MAX_ROWS:,}.")
    return replace(picked, notes=tuple(notes))


def _negate(hex_key: str) -> str:
    """A key that sorts in the opposite order (hex digits mirrored), for a max-heap of strings."""
    return hex_key.translate(_MIRROR)


_MIRROR = str.maketrans("0123456789abcdef", "fedcba9876543210")


def _wanted(categories: Sequence[str] | str | None) -> set[str] | None:
    if categories is None:
        return None
    parts = [categories] if isinstance(categories, str) else list(categories)
    names = {n.strip().lower() for part in parts for n in str(part).split(",") if n.strip()}
    return None if not names or "all" in names else names
