"""A session as a dataset folder (`README.md` + `data/train-00000-of-00001.parquet`),
and reading a published session back (a folder or a Hub id) as `CellResult`s.

The Parquet schema is fixed (`COLUMN_TYPES`): every column typed, nulls where a
value is missing, so `datasets.load_dataset` gives back exactly the rows
written, whatever the session held (no column is guessed from its values).
Reading back goes through `datasets` with `streaming=True`: nothing is
cached on disk, and a Hub id fails fast offline as a prompt set does.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..data import DataError
from ..data.prompt_sets import hub_guard, hub_path
from ..export import COLUMNS
from ..types import CellResult
from .card import card_text

DATA_FILE = "data/train-00000-of-00001.parquet"
_FLOAT = ("latency_s", "ttft_s", "cost_usd", "retry_wait_s", "ttfa_s", "p_refusal", "saved_cost_usd")
_INT = ("completion_tokens", "repeat", "attempts", "reasoning_tokens", "turn", "settled_at_tokens", "saved_tokens")
_BOOL = ("cached", "sure", "settled")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


class PublishError(Exception):
    """A session that cannot be written, published or read back, in one sentence."""


def _types() -> dict[str, str]:
    out = dict.fromkeys(COLUMNS, "string")
    out.update(dict.fromkeys(_FLOAT, "float64"))
    out.update(dict.fromkeys(_INT, "int64"))
    out.update(dict.fromkeys(_BOOL, "bool_"))
    return out


COLUMN_TYPES: dict[str, str] = _types()
"""Arrow type of each column (the contract columns, then the extras)."""


def _schema() -> Any:
    import pyarrow as pa

    return pa.schema([(name, getattr(pa, kind)()) for name, kind in COLUMN_TYPES.items()])


def _value(name: str, value: Any) -> Any:
    kind = COLUMN_TYPES[name]
    if value is None or (value == "" and kind != "string"):
        return None
    if kind == "float64":
        return float(value)
    if kind == "int64":
        return int(float(value))
    if kind == "bool_":
        return value if isinstance(value, bool) else str(value).strip().lower() in ("true", "1", "yes")
    return str(value)


def rows_of(results: Sequence[CellResult]) -> list[dict[str, Any]]:
    """The rows as they are written: every column, typed."""
    return [{name: _value(name, row.get(name)) for name in COLUMN_TYPES} for row in (r.to_row() for r in results)]


def write_folder(
    results: Sequence[CellResult], folder: str | Path, *, title: str | None = None, date: str | None = None
) -> Path:
    """Write the dataset folder (replacing an earlier one's data and card) and return it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not results:
        raise PublishError("there are no results to publish.")
    out = Path(folder).expanduser()
    try:
        (out / "data").mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist(rows_of(results), schema=_schema())
        pq.write_table(table, out / DATA_FILE)
        (out / "README.md").write_text(card_text(results, title=title, date=date), encoding="utf-8")
    except OSError as exc:
        raise PublishError(f"could not write the dataset folder {out}: {exc.strerror or exc}.") from None
    return out


def zip_folder(folder: str | Path, zip_path: str | Path) -> Path:
    """The folder as one zip (the UI's "Download as a dataset folder")."""
    base = Path(zip_path)
    made = shutil.make_archive(str(base.with_suffix("")), "zip", root_dir=str(folder))
    return Path(made)


def is_published_session(path: str | Path) -> bool:
    folder = Path(path)
    return folder.is_dir() and (folder / "README.md").is_file() and any(folder.glob("data/*.parquet"))


def looks_like_hub_id(text: str) -> bool:
    return bool(_HUB_ID.match(text)) and not Path(text).exists()


def load_session(source: str, *, token: str | None = None, allow_local: bool = True) -> list[CellResult]:
    """A published session (a dataset folder, or a Hub id `owner/name`) as results.
    With `allow_local=False` (public mode) only Hub ids, and the file system is not looked at."""
    import datasets

    datasets.logging.set_verbosity(datasets.logging.CRITICAL + 1)  # one line of ours, none of theirs
    datasets.disable_progress_bars()
    if not allow_local and not _HUB_ID.match(source):
        raise PublishError(f"{source!r}: in public mode a published session must be a Hub id (owner/name).")
    local = Path(source).expanduser()
    if not allow_local or not local.is_dir():
        if allow_local and not looks_like_hub_id(source):
            raise PublishError(f"{source} is neither a results file, a dataset folder nor a Hub id (owner/name).")
        try:
            hub_guard(f"the published session {source}")
        except DataError as exc:
            raise PublishError(str(exc)) from None
    try:
        if allow_local and local.is_dir():
            rows = datasets.load_dataset(str(local), split="train", streaming=True)
        else:
            # by repository id, from the Hub only: a bare id naming a local folder would read the folder
            rows = datasets.load_dataset(hub_path(source), split="train", streaming=True, token=token or None)
        results = [_result(row) for row in rows]
    except PublishError:
        raise
    except Exception as exc:  # datasets raises many kinds; the user needs one line
        message = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        if token:
            message = message.replace(token, "***")
        raise PublishError(f"could not read the published session {source}: {message[:300]}") from None
    if not results:
        raise PublishError(f"the published session {source} has no rows.")
    return results


def _result(row: dict[str, Any]) -> CellResult:
    missing = [c for c in ("row_id", "model", "verdict") if c not in row]
    if missing:
        raise PublishError(f"a row lacks column(s) {', '.join(missing)}: is it a session published by orbench-play?")
    values = {k: v for k, v in row.items() if k in COLUMN_TYPES}
    for name in ("cost_usd", "retry_wait_s"):
        values[name] = values.get(name) or 0.0
    for name in ("repeat", "attempts"):
        values[name] = values.get(name) or 0
    for name, kind in COLUMN_TYPES.items():
        if kind == "string" and values.get(name) is None:
            values[name] = ""
    values["system_prompt_id"] = values.get("system_prompt_id") or "none"
    for name in ("cached", "settled"):  # `sure` stays None where a row had no verdict
        values[name] = bool(values.get(name))
    return CellResult.from_row(values)


def read_any(source: str, *, token: str | None = None) -> list[CellResult]:
    """A results file (CSV/JSONL), a published dataset folder or a Hub id → results."""
    from ..compare import load_results

    path = Path(source).expanduser()
    if path.is_file():
        return load_results(path)
    return load_session(source, token=token)


def source_name(source: str) -> str:
    """How a published session is named beside its variants: the Hub id, or the folder's name."""
    path = Path(source).expanduser()
    return path.name if path.is_dir() else source.strip()


def published_scores(sources: Sequence[str], *, token: str | None = None, allow_local: bool = True):
    """Scores of other people's published sessions, one per variant, named
    `variant (source)`, for the plot beside the paper's models; and a map of
    each name to its source. In public mode (`allow_local=False`) only Hub ids."""
    from ..asking.prompts import variant_of
    from ..scoring import score_results

    scores = []
    names: dict[str, str] = {}
    for source in sources:
        source = source.strip()
        if not source:
            continue
        results = load_session(source, token=token, allow_local=allow_local)
        label = source_name(source) if allow_local else source

        def named(result: CellResult, label: str = label) -> str:
            return f"{variant_of(result)} ({label})"

        for s in score_results(results, key=named):
            scores.append(s)
            names[s.model] = source
    return scores, names
