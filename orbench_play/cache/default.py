"""Which store this process caches in: Redis when `ORBENCH_REDIS_URL` is set
(shared by replicas and CLI machines), else the disk folder. One handle per
process (one of the two globals the architecture allows), swapped when the
setting changes."""

from __future__ import annotations

from pathlib import Path

from ..runtime import redis_link
from .paths import default_cache_dir
from .redis_store import RedisResultCache
from .store import AnswerCache, ResultCache

_default: AnswerCache | None = None
_default_where: str | None = None


def default_cache() -> AnswerCache:
    """The process-wide cache handle: `RedisResultCache` or `ResultCache`."""
    global _default, _default_where  # noqa: PLW0603 -- the one process-wide cache handle
    link = redis_link.link()
    where = f"redis {link.url}" if link is not None else str(Path(default_cache_dir()))
    if _default is None or _default_where != where:
        _default = RedisResultCache(link) if link is not None else ResultCache(default_cache_dir())
        _default_where = where
    return _default
