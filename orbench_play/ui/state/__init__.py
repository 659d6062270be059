"""What the server keeps for visitors between events.

Modules: `session` (one visitor's state: runs, results, overrides, the live
feed), `history` (the session's runs), `live_feed` (the live grid's wire
protocol, server side; `ui/assets/live_grid.js` is its page side), `exports`
(what a session keeps on disk, under a cap), `lifetime` (how long a session
lives, the reaper, the app's lifespan), `resume` (finding a session again after a
reload), `query` (the URL query as a set-up), `shared_state` (what the page says
and needs about Redis), `warmup` (the cold-start warm-up).

May import: `views` and the packages below the UI. Never `handlers` or the page.
"""
