"""Finished answers and judge verdicts, kept so that repeats are free and runs resume.

Modules: `store` (the content-addressed diskcache of answers and judge
verdicts, and the offline verdict kept with an answer), `scope` (who may
replay an entry: a visitor endpoint's keys carry an HMAC of its credential),
`paths` (where the cache folder is; the spend ledger and the secret live
there too).

May import: `types`, `textrepair`, `verdicts` (for the offline verdict stored
with an answer). Never the engine, the UI or the CLI.
"""

from .paths import default_cache_dir
from .scope import cache_identity, credential_scope, installation_secret
from .store import (
    CACHE_VERSION,
    DEFAULT_SIZE_LIMIT_MB,
    CachedAnswer,
    CellKeys,
    ResultCache,
    cell_key,
    classifier_version,
    default_cache,
    judge_key,
    offline_verdict,
    with_current_verdict,
)

__all__ = [
    "CACHE_VERSION",
    "DEFAULT_SIZE_LIMIT_MB",
    "CachedAnswer",
    "CellKeys",
    "ResultCache",
    "cache_identity",
    "cell_key",
    "classifier_version",
    "credential_scope",
    "default_cache",
    "default_cache_dir",
    "installation_secret",
    "judge_key",
    "offline_verdict",
    "with_current_verdict",
]
