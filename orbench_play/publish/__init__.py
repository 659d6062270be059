"""A session's results as a Hugging Face dataset: write it, publish it, read it back.

`folder` writes the dataset folder (Parquet rows with the contract columns and
the reasoning/settings columns, typed by `COLUMN_TYPES`, and the dataset card) and
reads a published session back from a folder or a Hub id through `datasets`;
`card` is the dataset card (YAML metadata and the page: licence, OR-Bench's
citation and attribution, the models and their settings, the judge, the
scoreboard with intervals, the date, the tool version); `hub` uploads a folder
with `huggingface_hub` (create the repository, one commit). The token is an
argument, used for the calls and never printed, logged or written.

May import: `types`, `export`, `asking`, `scoring`, `data`, `compare` (to read
results files). `datasets`, `pyarrow` and `huggingface_hub` are imported only
when used.
"""

from .card import card_text, session_metadata
from .folder import (
    COLUMN_TYPES,
    PublishError,
    is_published_session,
    load_session,
    published_scores,
    read_any,
    source_name,
    write_folder,
    zip_folder,
)
from .hub import publish_to_hub

__all__ = [
    "COLUMN_TYPES",
    "PublishError",
    "card_text",
    "is_published_session",
    "load_session",
    "publish_to_hub",
    "published_scores",
    "read_any",
    "session_metadata",
    "source_name",
    "write_folder",
    "zip_folder",
]
