"""What the process runs in: numbers from its environment, its scratch folders, and
its link to Redis.

Modules: `env_numbers` (a number read from an environment variable, checked the
same way everywhere), `scratch` (folders that go with their process, swept when
their owner has ended, and a byte cap on what they hold), `redis_link` (the
process's link to Redis, `ORBENCH_REDIS_URL`: one client per event loop, one view
of health, the start-up check). Each is used as a module (`from ..runtime import
redis_link`); they share no state and import nothing of each other's.

May import: the standard library only (redis-py is imported lazily by
`redis_link`). Below everything else in the package.
"""
