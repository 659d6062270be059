"""The answer and judge cache in Redis, for replicas that share one
(`ORBENCH_REDIS_URL`): what replica A fetched, replica B replays.

The same contract as the disk store (`store.AnswerCache`): the same keys,
complete answers only (the engine decides what is complete), a size bound
with eviction, and failing open. How it meets "a cell never waits on Redis
more than once":

- **reads in bulk**: a run asks for all its cells' answers in one pipeline of
  `MGET`s, before any cell starts; a judge verdict is one `GET`;
- **writes behind**: `put_answer` queues the entry and returns; a flusher task
  sends whatever is queued in one pipeline, and the engine waits for it only
  when the run's events are all out (`drain`);
- **failing open**: a lost Redis turns reads into misses and drops writes,
  with one warning (the link's `status_line`), and costs no round trip while
  the link is down (`redis_link`).

Values are JSON, never pickle: a value read back from a shared server is data,
not code. Each entry expires after `ORBENCH_CACHE_TTL_DAYS` (default 30), and
the store keeps its total under `ORBENCH_CACHE_SIZE_MB` (default 1024, as on
disk) by evicting the least recently stored entries first, like the disk
cache: a Lua script keeps an index (sorted set by time stored) and a byte count
beside the entries, so the bound holds whatever Redis's own `maxmemory` policy
is. Entries are `orbench:c:<key>`; the per-installation secret that scopes
visitor endpoints' entries lives here too, so every replica computes the
same keys.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import time
import weakref
from collections.abc import Sequence
from typing import Any

from ..runtime import redis_link
from . import scope
from .store import DEFAULT_SIZE_LIMIT_MB, CachedAnswer, decode_answer, entry_limit, fits

log = logging.getLogger(__name__)

DEFAULT_TTL_DAYS = 30
READ_CHUNK = 500
"""Keys per MGET; all chunks of a run still go in one pipeline (one round trip)."""
WRITE_BATCH = 256

ENTRY = redis_link.PREFIX + "c:"
INDEX = redis_link.key("cache", "index")
SIZES = redis_link.key("cache", "sizes")
TOTAL = redis_link.key("cache", "bytes")
SECRET = redis_link.key("secret", "credential-hmac")

_STORE = """
local size = string.len(KEYS[1]) + string.len(ARGV[1])
local old = redis.call('HGET', KEYS[3], KEYS[1])
if old then redis.call('DECRBY', KEYS[4], old) end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], KEYS[1])
redis.call('HSET', KEYS[3], KEYS[1], size)
local total = redis.call('INCRBY', KEYS[4], size)
local function forget(k)
  local s = redis.call('HGET', KEYS[3], k)
  if s then total = redis.call('DECRBY', KEYS[4], s) end
  redis.call('HDEL', KEYS[3], k)
  redis.call('ZREM', KEYS[2], k)
end
-- entries that expired on their own: their memory is free already
local cutoff = tonumber(ARGV[2]) - tonumber(ARGV[3]) * 1000
for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', cutoff, 'LIMIT', 0, 64)) do forget(k) end
-- over the bound: least recently stored first (never the entry just written)
local limit = tonumber(ARGV[4])
local evicted = 0
while total > limit do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)
  if #oldest == 0 or oldest[1] == KEYS[1] then break end
  redis.call('DEL', oldest[1])
  forget(oldest[1])
  evicted = evicted + 1
end
return evicted
"""

_GET_OR_CREATE = """
local found = redis.call('GET', KEYS[1])
if found then return found end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
"""


def _env_number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name) or default)
    except ValueError:
        return default
    return value if value > 0 else default


class RedisResultCache:
    """`AnswerCache` over Redis (see the module docstring)."""

    def __init__(self, link: redis_link.RedisLink, size_limit_mb: float | None = None, ttl_days: float | None = None):
        self.link = link
        self.directory = link.where  # what `default_cache` compares, and what messages name
        self.limit_bytes = int((size_limit_mb or _env_number("ORBENCH_CACHE_SIZE_MB", DEFAULT_SIZE_LIMIT_MB)) * 2**20)
        self.ttl_s = int((ttl_days or _env_number("ORBENCH_CACHE_TTL_DAYS", DEFAULT_TTL_DAYS)) * 86400)
        self._pending: list[tuple[str, str]] = []
        self._flushers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task] = weakref.WeakKeyDictionary()
        self._refused: str | None = None
        self.dropped = 0
        """Writes lost because Redis could not take them (the cache fails open)."""

    # -- state --------------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        return self.link.up

    @property
    def warning(self) -> str | None:
        if not self.link.up:
            return f"Cache skipped: {self.link.status_line()}"
        return self._refused

    # -- reads ---------------------------------------------------------------------------

    async def prepare(self) -> None:
        """Before a run computes its keys: the per-installation secret that scopes
        visitor endpoints' entries, shared by every replica (one round trip per
        process, then remembered)."""
        if scope.shared_secret() is not None or not self.link.usable():
            return
        candidate = secrets.token_bytes(scope.SECRET_BYTES)
        try:
            found = await self.link.run(lambda c: redis_link.script(c, _GET_OR_CREATE)(keys=[SECRET], args=[candidate]))
        except redis_link.Unavailable:
            return  # keys get the local secret: entries a replica writes then are its own, the safe side
        except Exception as exc:
            log.warning("could not read the shared cache secret: %s", exc)
            return
        if isinstance(found, bytes) and len(found) == scope.SECRET_BYTES:
            scope.use_shared_secret(found, self.link.url)

    async def get_answers(self, keys: Sequence[str]) -> dict[str, CachedAnswer]:
        """The stored answers among `keys`: one round trip for all of them; misses
        (and no round trip at all) while Redis is unreachable."""
        if not keys or not self.link.usable():
            return {}
        names = [ENTRY + k for k in keys]

        async def read(client: Any) -> list[Any]:
            pipe = client.pipeline(transaction=False)
            for start in range(0, len(names), READ_CHUNK):
                pipe.mget(names[start : start + READ_CHUNK])
            chunks = await pipe.execute()
            return [value for chunk in chunks for value in chunk]

        try:
            values = await self.link.run(read)
        except redis_link.Unavailable:
            return {}
        found: dict[str, CachedAnswer] = {}
        for key, raw in zip(keys, values, strict=True):
            answer, repaired = decode_answer(_loads(raw))
            if answer is None:
                continue
            if repaired:
                self.put_answer(key, answer)
            found[key] = answer
        return found

    async def lookup_judge(self, key: str) -> dict[str, str] | None:
        if not self.link.usable():
            return None
        try:
            value = _loads(await self.link.run(lambda c: c.get(ENTRY + key)))
        except redis_link.Unavailable:
            return None
        return value if isinstance(value, dict) else None

    # -- writes --------------------------------------------------------------------------

    def put_answer(self, key: str, answer: CachedAnswer) -> None:
        if fits(answer, entry_limit(self.limit_bytes)):  # as on disk: no entry over 1/64 of the bound
            self._queue(key, answer.to_dict())

    def put_judge(self, key: str, label: str, rationale: str) -> None:
        self._queue(key, {"label": label, "rationale": rationale})

    def _queue(self, key: str, value: dict[str, Any]) -> None:
        """Queue a write and make sure a flusher will send it; never waits."""
        if not self.link.usable():
            self.dropped += 1
            return
        self._pending.append((ENTRY + key, json.dumps(value, ensure_ascii=False)))
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop to send it from: the entry is dropped, as on a failure
            self._pending.pop()
            self.dropped += 1
            return
        flusher = self._flushers.get(loop)
        if flusher is None or flusher.done():
            self._flushers[loop] = loop.create_task(self._flush())

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending[:WRITE_BATCH], self._pending[WRITE_BATCH:]
            now_ms = int(time.time() * 1000)

            async def write(client: Any, batch: list[tuple[str, str]] = batch, now_ms: int = now_ms) -> list[Any]:
                script = redis_link.script(client, _STORE)
                pipe = client.pipeline(transaction=False)
                for name, value in batch:
                    args = [value, now_ms, self.ttl_s, self.limit_bytes]
                    await script(keys=[name, INDEX, SIZES, TOTAL], args=args, client=pipe)
                return await pipe.execute(raise_on_error=False)

            try:
                replies = await self.link.run(write)
            except redis_link.Unavailable:
                self.dropped += len(batch)
                continue
            refused = [r for r in replies if isinstance(r, Exception)]
            if refused:  # e.g. Redis out of memory with `noeviction`: skip, with a warning
                self.dropped += len(refused)
                self._refused = f"Cache writes refused by Redis at {self.link.where}: {str(refused[0])[:160]}"
                log.warning(self._refused)
            else:
                self._refused = None

    async def drain(self, timeout_s: float = redis_link.OP_TIMEOUT_S * 2) -> None:
        """Wait (bounded) until this loop's queued writes are sent or dropped."""
        try:
            flusher = self._flushers.get(asyncio.get_running_loop())
        except RuntimeError:
            return
        if flusher is not None and not flusher.done():
            try:
                await asyncio.wait_for(asyncio.shield(flusher), timeout_s)
            except TimeoutError:
                log.warning("cache writes to Redis still pending after %.0f s; not waiting longer", timeout_s)

    # -- for tests and tools -------------------------------------------------------------

    async def size_bytes(self) -> int:
        return int(await self.link.run(lambda c: c.get(TOTAL)) or 0)


def _loads(raw: Any) -> Any:
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except (ValueError, TypeError):
        return None  # not ours, or damaged: a miss
