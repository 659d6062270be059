"""Finished answers and judge verdicts, kept so that repeats are free and runs resume.

Modules: `store` (the keys, the `AnswerCache` interface every store meets,
and the content-addressed diskcache of answers and judge verdicts, with the
offline verdict kept with an answer), `redis_store` (the same in Redis, shared
by replicas), `default` (which of the two this process uses:
`ORBENCH_REDIS_URL`), `scope` (who may replay an entry: a visitor endpoint's
keys carry an HMAC of its credential), `paths` (where the cache folder is;
the spend ledger and the secret live there too).

May import: `types`, `text` (repair), `verdicts` (for the offline verdict stored
with an answer), `runtime` (the Redis link). Never the engine, the UI or the CLI.
"""

from .default import default_cache
from .paths import default_cache_dir
from .redis_store import RedisResultCache
from .scope import cache_identity, credential_scope, installation_secret, visitor_key
from .store import (
    CACHE_VERSION,
    DEFAULT_SIZE_LIMIT_MB,
    AnswerCache,
    CachedAnswer,
    CellKeys,
    ResultCache,
    cell_key,
    classifier_version,
    judge_key,
    offline_verdict,
    settled_key,
    with_current_verdict,
)

__all__ = [
    "CACHE_VERSION",
    "DEFAULT_SIZE_LIMIT_MB",
    "AnswerCache",
    "CachedAnswer",
    "CellKeys",
    "RedisResultCache",
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
    "settled_key",
    "visitor_key",
    "with_current_verdict",
]
