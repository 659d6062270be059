"""Uploading a session's dataset folder to the Hugging Face Hub.

`huggingface_hub` does the talking: create the dataset repository (kept if it
exists), then one commit with the card and the Parquet file, so a reader never
sees half a session. The token is passed to each call and nowhere else: not
put in the environment, not saved with `login`, and scrubbed from any error
text before that text is shown.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..data import DataError, hub_offline
from ..data.prompt_sets import hub_guard
from ..types import CellResult
from .folder import PublishError, write_folder

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


def check_repo_id(repo_id: str) -> str:
    repo_id = (repo_id or "").strip()
    if not _REPO_ID.match(repo_id) or ".." in repo_id:
        raise PublishError(f"{repo_id!r} is not a Hub repository id; give it as USER/NAME.")
    return repo_id


FOLDER_INSTEAD_CLI = "write the same dataset to a folder instead (--to-folder DIR), and upload it later"
FOLDER_INSTEAD_PAGE = 'take the same dataset with "Download as a dataset folder" instead, and upload it later'


def _scrub(text: str, token: str) -> str:
    return text.replace(token, "***") if token else text


def publish_to_hub(
    results: Sequence[CellResult],
    repo_id: str,
    *,
    token: str,
    private: bool = True,
    title: str | None = None,
    endpoint: str | None = None,
    instead: str = FOLDER_INSTEAD_CLI,
) -> str:
    """Publish the session as dataset `repo_id`; returns the dataset's URL. `instead`:
    how the caller's visitor gets the same dataset without the Hub (said when it cannot
    be reached: the CLI's --to-folder, the page's "Download as a dataset folder")."""
    repo_id = check_repo_id(repo_id)
    if not token or not token.strip():
        raise PublishError("publishing to the Hub needs a token with write access (HF_TOKEN or --token).")
    token = token.strip()
    if hub_offline():
        raise PublishError(
            f"could not publish {repo_id}: HF_HUB_OFFLINE is set; {instead}, or unset it and connect to the internet."
        )
    try:
        hub_guard(f"publishing {repo_id}", instead=instead)
    except DataError as exc:
        raise PublishError(str(exc)) from None
    from huggingface_hub import CommitOperationAdd, HfApi

    with tempfile.TemporaryDirectory(prefix="orbench-publish-") as tmp:
        folder = write_folder(results, Path(tmp) / "session", title=title)
        files = sorted(p for p in folder.rglob("*") if p.is_file())
        api = HfApi(endpoint=endpoint, token=token)
        try:
            url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
            operations = [CommitOperationAdd(str(p.relative_to(folder)), p.read_bytes()) for p in files]
            api.create_commit(
                repo_id,
                operations,
                commit_message=f"orbench-play session: {len(results)} rows",
                repo_type="dataset",
            )
        except Exception as exc:  # huggingface_hub raises many kinds; the user needs one line without the token
            message = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise PublishError(f"could not publish {repo_id} to the Hub: {_scrub(message, token)[:300]}") from None
    return str(url)
