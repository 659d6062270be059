"""The page's event handlers: controls in, engine runs and frames out.

Modules: `playground` (`Playground`: the run, stop and override handlers that
drive the engine, over the mixins `setup_handlers` (page load, share link, adding
models), `compare_handlers`, `followup_handlers`, `history_handlers` and
`dataset_handlers`, all on the state shared by all visitors in `base`), `frames`
(a handler's `Frame` as the page's outputs or the API's), `forms` (form values as
settings).

May import: `state`, `views` and the packages below the UI (the engine included).
Never the page (`layout`, `launching`).
"""
