"""The spend ledger in Redis (`ORBENCH_REDIS_URL`): one daily cap for every
replica that shares it.

The guard's rules are `budget`'s (reserve the worst case, settle at what
was streamed, fail closed); this is only where the numbers live, so that N
replicas together stay under one cap:

- `orbench:budget:spent` — a hash {UTC day: dollars} (a week kept);
- `orbench:budget:held` — the in-flight reservations of all replicas: a sorted
  set of reservation ids by expiry, and `orbench:budget:amounts` their
  dollars. A reservation expires after its call's overall time limit (plus a
  minute), so a replica that dies holding some blocks the budget for minutes,
  not for the rest of the day.

Admitting is one script: it records costs that could not be written earlier
(the guard's carry), drops expired reservations, and takes the new one only
if spent + held < cap, atomically. Settling is another: drop the reservation
and add the cost. None of these keys expire or are evictable by our cache's
bound, so memory pressure can never reset a day's spend.
"""

from __future__ import annotations

import time
from typing import Any

from ..runtime import redis_link

SPENT = redis_link.key("budget", "spent")
HELD = redis_link.key("budget", "held")
AMOUNTS = redis_link.key("budget", "amounts")
KEEP_DAYS = 7

_ADMIT = """
local now = tonumber(ARGV[6])
for i = 7, #ARGV, 2 do
  redis.call('HINCRBYFLOAT', KEYS[1], ARGV[i], ARGV[i + 1])
end
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
if #gone > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  redis.call('HDEL', KEYS[3], unpack(gone))
end
local held = 0
for _, v in ipairs(redis.call('HVALS', KEYS[3])) do held = held + tonumber(v) end
local spent = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if spent == nil or spent ~= spent or spent < 0 or spent == math.huge then return -1 end
if spent + held >= tonumber(ARGV[2]) then return 0 end
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[3])
  redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
end
return 1
"""

_SETTLE = """
if ARGV[1] ~= '' then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[1])
end
if tonumber(ARGV[3]) > 0 then redis.call('HINCRBYFLOAT', KEYS[1], ARGV[2], ARGV[3]) end
local days = redis.call('HKEYS', KEYS[1])
if #days > tonumber(ARGV[4]) then
  table.sort(days)
  for i = 1, #days - tonumber(ARGV[4]) do redis.call('HDEL', KEYS[1], days[i]) end
end
return 1
"""


class RedisLedger:
    """`budget.SharedLedger` over Redis: each call is one round trip (one script)."""

    def __init__(self, link: redis_link.RedisLink):
        self.link = link
        self.where = f"Redis at {link.where}"

    def ready(self) -> bool:
        return self.link.up

    async def admit(
        self, day: str, limit: float, hold_id: str, amount: float, ttl_s: float, carry: dict[str, float]
    ) -> bool:
        args: list[Any] = [day, repr(limit), hold_id, repr(amount), repr(ttl_s + 60.0), repr(time.time())]
        for carried_day, cost in carry.items():
            args += [carried_day, repr(cost)]
        taken = await self.link.run(lambda c: redis_link.script(c, _ADMIT)(keys=[SPENT, HELD, AMOUNTS], args=args))
        if int(taken) < 0:  # the guard fails closed with this reason
            raise ValueError(f"the day's spend in Redis ({SPENT} {day}) is not a finite, non-negative number")
        return bool(int(taken))

    async def settle(self, day: str, hold_id: str, cost: float) -> None:
        args = [hold_id, day, repr(cost), KEEP_DAYS]
        await self.link.run(lambda c: redis_link.script(c, _SETTLE)(keys=[SPENT, HELD, AMOUNTS], args=args))

    async def spent(self, day: str) -> float:
        value = float(await self.link.run(lambda c: c.hget(SPENT, day)) or 0.0)
        if not (value >= 0 and value != float("inf")):  # NaN, negatives, infinities
            raise ValueError(f"the day's spend in Redis ({SPENT} {day}) is not a finite, non-negative number")
        return value
