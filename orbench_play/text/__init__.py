"""Text as it arrives from a model: repaired when it is not valid Unicode, and a
reasoning model's thoughts apart from its answer.

Modules: `repair` (split or lone UTF-16 surrogates, in streams and whole strings),
`thoughts` (every stream shape into thoughts and answer: reasoning fields, typed
content parts, inline `<think>…</think>`; incremental `Splitter` and whole
`split_text`). Below the engine and the cache, which both use them.

May import: the standard library only.
"""
