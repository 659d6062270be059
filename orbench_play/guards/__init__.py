"""Public-demo guards: who may reach what, and how much one session may ask.

Public mode (`ORBENCH_PUBLIC=1`, on by default when `SPACE_ID` is set, i.e.
on a Hugging Face Space) closes the three doors a stranger could use the app
through:

1. **Custom endpoints** (server-side request forgery): a visitor's base URL
   must be plain http(s) without credentials, and every address its host name
   resolves to must be a public one — never loopback, private, link-local,
   shared (CGNAT), multicast, reserved, unspecified or a cloud metadata
   address. The check runs twice: when the visitor picks the endpoint
   (`check_model`, a friendly early message) and again when the engine
   connects (`endpoint_client`), which resolves, checks, and then *pins* the
   connection to the address it checked (so a DNS answer that changes between
   check and connect cannot point the request inside), with redirects refused
   (LiteLLM's OpenAI client follows them by default, which would let a public
   server bounce the request to an internal one).
2. **Free-text model strings**: a bare LiteLLM string must name a provider on
   an allow-list (`openai/...`, `groq/...`); provider prefixes that reach local
   daemons (`ollama/`) or cloud credentials of the host (`bedrock/`,
   `vertex_ai/`, `sagemaker/`) are refused, and so is any string that carries
   an endpoint of its own (a URL anywhere in it, e.g. `huggingface/https://...`,
   which LiteLLM would call with the owner's `HF_TOKEN`) or LiteLLM parameters
   of its own (`api_base`...): a visitor's own server is a custom endpoint, and
   goes through check 1.
3. **Volume**: `SessionLimiter` caps prompts × models per run and runs per
   minute per session, with a message that says what to change.

Entries from the owner's `ORBENCH_MODELS` file (`ModelSpec.owner_configured`)
and the embedded local model are trusted and exempt from 1 and 2, never from 3
(they run on the owner's keys and CPU). Outside
public mode every check here is a no-op: on your own machine you may point the
app at localhost.

Modules: `mode` (public mode, `GuardError`, settings), `endpoints` (door 1),
`addresses` (which IP addresses door 1 lets through), `model_checks` (door 2),
`limits` (door 3), `visitors` (who a visitor is: their address, by the one
trust rule for proxies that the per-visitor limits share); this package
exposes their public names.

May import: `types`, and `runtime` (the Redis link the run limits share). The engine calls the guards; the guards never call a model.
"""

from . import visitors
from .endpoints import DNS_TIMEOUT_S, RedirectRefused, Resolver, check_endpoint_url, endpoint_client
from .limits import (
    DEFAULT_MAX_CELLS,
    DEFAULT_MAX_PROMPT_CHARS,
    DEFAULT_RUNS_PER_MINUTE,
    FollowUpCaps,
    SessionLimiter,
    check_custom_prompt,
    check_prompt_lengths,
)
from .mode import GuardError, public_mode
from .model_checks import DEFAULT_ALLOWED_PROVIDERS, allowed_providers, check_model, check_models

__all__ = [
    "DEFAULT_ALLOWED_PROVIDERS",
    "DEFAULT_MAX_CELLS",
    "DEFAULT_MAX_PROMPT_CHARS",
    "DEFAULT_RUNS_PER_MINUTE",
    "DNS_TIMEOUT_S",
    "FollowUpCaps",
    "GuardError",
    "RedirectRefused",
    "Resolver",
    "SessionLimiter",
    "allowed_providers",
    "check_custom_prompt",
    "check_endpoint_url",
    "check_model",
    "check_models",
    "check_prompt_lengths",
    "endpoint_client",
    "public_mode",
    "visitors",
]
