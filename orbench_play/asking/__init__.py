"""How a model is asked: the system prompt and settings of a run's variants, and the
follow-up messages of a conversation.

Modules: `prompts` (system-prompt presets, prompt files, and the variant names that
tell model × system prompt × settings apart; standard library only, since the UI
imports it at cold start), `followups` (the follow-up presets, free text capped like
a custom prompt, each conversation's turns, and which cells a follow-up goes to).
Each is used as a module; nothing is imported here, so the page's cold start does
not pay for `followups`' imports.

May import: `types`, `guards` (the cap on free text). Pure functions: never a model
call, the engine, the UI or the CLI.
"""
