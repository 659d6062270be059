"""Where the prompts of an OR-Bench split come from, and reading them.

Resolution order, first match wins:

1. a folder (`ORBENCH_DATA_DIR`, or `data_dir=`) holding the Hub's CSV files;
   it overrides everything, which is what tests and pinned set-ups rely on;
2. the copies of hard-1k and toxic this package ships (`assets/data/`), so a
   fresh install has real prompts offline and at once;
3. the Hugging Face Hub (`bench-llm/or-bench`): 80k always, and hard-1k/toxic
   too when `ORBENCH_DATA_SOURCE=hub` asks for a fresh copy. The CSV is
   *streamed*: one HTTP GET of the Hub's file, read in pieces and parsed row by
   row as it arrives (progress in `streaming_progress`), kept in memory for the
   process and never written to disk.
   The Hub path must fail within seconds when the Hub is unreachable, because a
   UI that hangs for half a minute of retries looks broken.

Only the standard library is imported at module level so that the UI and CLI
can import this cheaply; `httpx` is imported only on the Hub path.
"""

from __future__ import annotations

import csv
import functools
import os
import socket
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from urllib.parse import urlparse

from ..types import CATEGORIES, SPLITS, Prompt

HUB_REPO = "bench-llm/or-bench"
HUB_REVISION = "main"
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
HUB_TIMEOUT = 30.0
"""Seconds the Hub stream may stall (connect, or between two pieces) before it counts as broken."""
REQUIRED_COLUMNS = ("prompt", "category")

SHIPPED_DIR = Path(__file__).resolve().parents[1] / "assets" / "data"
SHIPPED_SHA256: dict[str, str] = {
    "hard-1k": "a6952eb067cd473f2d681aa0425c2e77beaeab067794d7883e37c590427f4d51",
    "toxic": "976c17b3c273270456037c2bb7be0a9792a0a24b3c3dd13032da3506d922f559",
}
"""sha256 of the shipped copies (CC BY 4.0, see assets/data/README.md); a test keeps
them byte-identical to the team's reference copies."""

DATA_SOURCE_ENV = "ORBENCH_DATA_SOURCE"
DATA_SOURCES = ("shipped", "hub")
"""`shipped` (default): hard-1k and toxic from the package, 80k from the Hub;
`hub`: every split streamed from the Hub (a refresh of the shipped copies)."""


class DataError(Exception):
    """A data problem explained in one sentence the user can act on."""


# --- locating files -------------------------------------------------------------


def check_split(split: str) -> None:
    if split not in SPLITS:
        raise DataError(f"Unknown split {split!r}; choose one of: {', '.join(SPLITS)}.")


def _data_dir(data_dir: str | os.PathLike[str] | None) -> Path | None:
    """The explicit folder, else ORBENCH_DATA_DIR; None means "no folder"."""
    if data_dir is None:
        data_dir = os.environ.get("ORBENCH_DATA_DIR") or None
    if data_dir is None or str(data_dir) == "":
        return None
    return Path(data_dir).expanduser().resolve()


def data_source() -> str:
    """`shipped` or `hub`, from ORBENCH_DATA_SOURCE (default `shipped`)."""
    value = (os.environ.get(DATA_SOURCE_ENV) or "shipped").strip().lower()
    if value not in DATA_SOURCES:
        raise DataError(
            f"{DATA_SOURCE_ENV}={value!r} is not one of: shipped (the default: hard-1k and toxic from the "
            "package, 80k from the Hub), hub (every split streamed from the Hub)."
        )
    return value


def shipped_file(split: str) -> Path | None:
    """The package's copy of a split, or None for a split that is not shipped (80k)."""
    return SHIPPED_DIR / FILES[split] if split in SHIPPED_SHA256 else None


def _partial_80k(folder: Path) -> Path | None:
    """The largest partial 80k sample in the folder, if any (deterministic pick)."""
    candidates = sorted(folder.glob(PARTIAL_GLOB))
    if not candidates:
        return None
    return max(candidates, key=lambda p: (p.stat().st_size, p.name))


def _folder_file(split: str, folder: Path) -> Path:
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


def split_file(split: str, data_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The CSV that `load_split` would read, or None when the split streams from the Hub.

    Raises DataError when a data folder is set but has no file for the split.
    """
    check_split(split)
    folder = _data_dir(data_dir)
    if folder is not None:
        return _folder_file(split, folder)
    if data_source() == "hub":
        return None
    shipped = shipped_file(split)
    if shipped is None:
        return None
    if not shipped.is_file():
        raise DataError(f"The shipped copy of split {split} ({shipped}) is missing; reinstall orbench-play.")
    return shipped


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


# --- the Hub, streamed ----------------------------------------------------------


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def hub_offline() -> bool:
    """True when the user switched the Hub off (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE)."""
    return _truthy("HF_HUB_OFFLINE") or _truthy("HF_DATASETS_OFFLINE")


def _endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def hub_file_url(split: str) -> str:
    """The split's CSV on the Hub (HF_ENDPOINT honoured), read over HTTP in pieces."""
    return f"{_endpoint()}/datasets/{HUB_REPO}/resolve/{HUB_REVISION}/{FILES[split]}"


def _hub_reachable(timeout: float = PROBE_TIMEOUT_S) -> bool:
    """One TCP connect to the Hub with a hard deadline.

    The connect runs in a daemon thread because `socket.create_connection`'s
    timeout does not cover DNS resolution, which can hang far longer.
    """
    endpoint = urlparse(_endpoint())
    host = endpoint.hostname or "huggingface.co"
    port = endpoint.port or (80 if endpoint.scheme == "http" else 443)
    ok = threading.Event()

    def probe() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            ok.set()
        except Exception:  # noqa: S110 - any failure means "not reachable"; a probe thread must never raise
            pass

    worker = threading.Thread(target=probe, name="orbench-hub-probe", daemon=True)
    worker.start()
    worker.join(timeout)
    return ok.is_set()


def _no_hub_hint(split: str) -> str:
    hint = f"set ORBENCH_DATA_DIR to a folder with {FILES[split]}"
    if shipped_file(split) is not None:
        hint = f"unset {DATA_SOURCE_ENV} to use the copy shipped with orbench-play, or " + hint
    return hint


def _unreachable(split: str) -> DataError:
    return DataError(
        f"Could not reach the Hugging Face Hub to stream OR-Bench split {split}; "
        f"{_no_hub_hint(split)}, or connect to the internet."
    )


_hub_cache: dict[str, tuple[Prompt, ...]] = {}
_hub_rows: dict[str, int] = {}
_hub_locks: dict[str, threading.Lock] = {split: threading.Lock() for split in SPLITS}


def streaming_progress(split: str) -> int | None:
    """Rows of `split` read from the Hub so far while it streams; None when not streaming."""
    return _hub_rows.get(split)


def _lines(chunks: Iterable[str]) -> Iterator[str]:
    """Text chunks → lines that keep their "\n", for `csv` (which reassembles quoted
    fields spanning lines). Only "\n" splits: `str.splitlines` would also cut at
    characters such as U+2028 that a prompt may contain."""
    rest = ""
    for chunk in chunks:
        rest += chunk
        *whole, rest = rest.split("\n")
        for line in whole:
            yield line + "\n"
    if rest:
        yield rest


def _stream_rows(split: str) -> Iterator[dict[str, object]]:
    """The Hub CSV's rows as they arrive: one HTTP GET read in pieces and parsed as
    it comes, so nothing waits for (or stores) the whole file."""
    import httpx  # only on this path

    with httpx.stream("GET", hub_file_url(split), follow_redirects=True, timeout=HUB_TIMEOUT) as response:
        if response.status_code >= 400:
            raise DataError(
                f"The Hugging Face Hub answered {response.status_code} for {hub_file_url(split)}; "
                f"{_no_hub_hint(split)}."
            )
        reader = csv.DictReader(_lines(response.iter_text()))
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(f"{HUB_REPO} ({FILES[split]}) lacks column(s) {', '.join(missing)}.")
        yield from reader


def _load_hub(split: str) -> tuple[Prompt, ...]:
    """Stream one split from the Hub once per process; concurrent callers wait for it."""
    with _hub_locks[split]:
        if split in _hub_cache:
            return _hub_cache[split]
        if hub_offline():  # said before anything is imported for the Hub: at once
            raise DataError(
                f"OR-Bench split {split} streams from the Hugging Face Hub and HF_HUB_OFFLINE is set; "
                f"{_no_hub_hint(split)}, or unset HF_HUB_OFFLINE and connect to the internet."
            )
        import httpx  # only on this path

        if not _hub_reachable():
            raise _unreachable(split)
        source = f"{HUB_REPO} ({FILES[split]})"
        _hub_rows[split] = 0

        def triples() -> Iterator[tuple[int, int | None, dict[str, object]]]:
            for index, row in enumerate(_stream_rows(split)):
                _hub_rows[split] = index + 1
                yield index, None, row

        try:
            prompts = _validate_rows(triples(), split, source)
        except DataError:
            raise
        except (OSError, csv.Error, UnicodeDecodeError, httpx.HTTPError) as exc:
            read = _hub_rows.get(split, 0)
            if read:
                raise DataError(
                    f"The stream of OR-Bench split {split} from the Hugging Face Hub broke off after "
                    f"{read:,} prompts ({type(exc).__name__}); try again, or {_no_hub_hint(split)}."
                ) from exc
            raise _unreachable(split) from exc
        finally:
            _hub_rows.pop(split, None)
        if not prompts:
            raise DataError(f"{source} has no prompts.")
        _hub_cache[split] = prompts
        return prompts


def load_split(split: str, data_dir: str | os.PathLike[str] | None = None) -> list[Prompt]:
    """All prompts of one OR-Bench split, in file order.

    `data_dir` defaults to ORBENCH_DATA_DIR; without a folder, hard-1k and toxic
    come from the shipped copies and 80k streams from the Hub (see the module
    docstring). Results are cached per process; a fresh list is returned each
    call so callers may mutate it.
    """
    path = split_file(split, data_dir)
    if path is None:
        return list(_load_hub(split))
    try:
        st = path.stat()
    except OSError as exc:
        raise DataError(f"Could not read {str(path)!r} ({exc.strerror or exc}).") from exc
    return list(_read_csv(str(path), split, st.st_mtime_ns, st.st_size))
