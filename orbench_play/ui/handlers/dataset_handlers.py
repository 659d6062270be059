"""The page's dataset features, apart from the run handlers: the prompt set's
preview and its sample for a run, a session as a dataset folder (zip) or on
the Hub, and other people's published sessions on the plot.

The visitor's Hub token is an argument of `publish` only: used for the upload,
never put in the session, a log, a cache or a file, and the page's token box is
emptied by the same event. A new repository is private unless the visitor
unticks it. In public mode a prompt set or a published session must be a Hub
id (the server's files are not the visitor's to read).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ... import data
from ...guards.mode import public_mode
from ...scoring import ModelScore
from ..state.session import Session
from ..views.safe_html import safe_text

_published: dict[str, tuple[list[ModelScore], dict[str, str]]] = {}
"""Per session id: the published sessions' scores on its plot, and their sources
(dropped when the session object goes: `weakref.finalize` in `add_published`)."""


def columns(prompt_col: str | None, category_col: str | None, label_col: str | None) -> data.ColumnMap:
    return data.ColumnMap(
        prompt=(prompt_col or "").strip() or "prompt",
        category=(category_col or "").strip() or None,
        label=(label_col or "").strip() or None,
    )


def preview_html(source: str | None, prompt_col=None, category_col=None, label_col=None) -> str:
    """The first five rows of a prompt set as they would be asked (a table), or why not (one line)."""
    try:
        parsed = data.parse_source(source or "", allow_local=not public_mode())
        rows = data.preview(parsed, columns(prompt_col, category_col, label_col))
    except data.DataError as exc:
        return f'<p class="prompt-set-error" role="alert">{safe_text(str(exc))}</p>'
    body = "".join(
        f'<tr data-row="{safe_text(p.row_id)}"><td>{safe_text(p.text[:300])}</td><td>{safe_text(p.category)}</td>'
        f"<td>{safe_text(p.expected or '–')}</td></tr>"
        for p in rows
    )
    return (
        f'<table class="prompt-set-preview" data-split="{safe_text(parsed.split_name)}">'
        f"<caption>First {len(rows)} rows of {safe_text(parsed.text)} (split {safe_text(parsed.split_name)})</caption>"
        "<thead><tr><th>prompt</th><th>category</th><th>expected</th></tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def sample_for_run(
    splits: Sequence[str],
    prompt_set: str | None,
    mapping: data.ColumnMap,
    *,
    categories: Sequence[str] | None,
    per_category: int,
    seed: int,
    draw: data.Draw,
) -> data.Sample:
    """OR-Bench's chosen splits, then the prompt set (its categories are its own),
    each sampled apart with the same size and seed. Runs in a worker thread."""
    prompts: list = []
    notes: list[str] = []
    if splits:
        picked = data.sample_splits(splits, categories=categories, per_category=per_category, seed=seed, draw=draw)
        prompts += picked.prompts
        notes += picked.notes
    if prompt_set and prompt_set.strip():
        own = data.sample_prompt_set(
            prompt_set, mapping, per_category=per_category, seed=seed, allow_local=not public_mode()
        )
        prompts += own.prompts
        notes += own.notes
    return data.Sample(prompts=tuple(prompts), notes=tuple(notes))


def published_on_plot(sess: Session) -> tuple[list[ModelScore], dict[str, str]]:
    return _published.get(sess.sid, ([], {}))


def add_published(sources_text: str | None, sess: Session, token: str | None = None) -> str:
    """Load published sessions (one per line or comma) for this session's plot; the note says what happened."""
    from ...publish import PublishError, published_scores

    sources = [s.strip() for s in (sources_text or "").replace(",", "\n").splitlines() if s.strip()]
    if not sources:
        _published.pop(sess.sid, None)
        return "No published sessions on the plot."
    try:
        scores, names = published_scores(sources, token=token or None, allow_local=not public_mode())
    except PublishError as exc:
        return safe_text(str(exc)[:1].upper() + str(exc)[1:])
    if sess.sid not in _published:
        weakref.finalize(sess, _published.pop, sess.sid, None)
    _published[sess.sid] = (scores, names)
    return safe_text(f"On the plot: {len(scores)} variant(s) from {', '.join(sources)}.")


def dataset_zip(sess: Session) -> str | None:
    """The session as a dataset folder (README.md + data/*.parquet), zipped beside
    its CSV/JSONL download (removed with it); None before any result."""
    from ...publish import write_folder, zip_folder

    paths = sess.export_files()
    if paths is None:
        return None
    folder = Path(paths[0]).parent
    rows = [sess.files.whole(r) for r in sess.shown_results()]
    written = write_folder(rows, folder / "orbench-play-session")
    return str(zip_folder(written, folder / "orbench-play-session.zip"))


def publish(repo: str | None, token: str | None, private: bool | None, sess: Session) -> tuple[str, Any]:
    """Publish this session to the visitor's repository with the visitor's token
    (used for this upload only). Returns (the note, an update that empties the token box)."""
    import gradio as gr

    from ...publish import PublishError, publish_to_hub
    from ...publish.hub import FOLDER_INSTEAD_PAGE

    cleared = gr.update(value="")
    results = sess.shown_results()  # the run chosen in the run list, or every run (`history`)
    if not results:
        return "Run something first: there is nothing to publish yet.", cleared
    secret = (token or "").strip()
    try:
        url = publish_to_hub(
            [sess.files.whole(r) for r in results], repo or "", token=secret, private=private is not False,
            instead=FOLDER_INSTEAD_PAGE,
        )  # fmt: skip
    except PublishError as exc:
        text = str(exc).replace(secret, "***") if secret else str(exc)
        return safe_text(text[:1].upper() + text[1:]), cleared
    return safe_text(f"Published {len(results)} rows to {url}."), cleared
