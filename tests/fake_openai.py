"""A scriptable fake OpenAI-compatible server for tests and benchmarks.

It listens on 127.0.0.1 (a free port by default) in a background thread with its
own event loop, so it works from sync tests, async tests and subprocesses alike.

Quick use
---------
    from fake_openai import FakeOpenAIServer    # tests/ is on sys.path under pytest

    with FakeOpenAIServer() as server:          # or server.start() / server.stop()
        litellm.completion(model="openai/refuse", api_base=server.base_url,
                           api_key="sk-fake", messages=[...])
        assert server.request_count("refuse") == 1
        server.requests[-1].prompt             # what was sent

In pytest use the fixtures from `tests/conftest.py`: `fake` (reset before each
test) or `fake_server` (session-wide, not reset). Standalone, for benchmarks and
manual UI checks: `python tests/fake_openai.py --port 8000` then point a model at
`http://127.0.0.1:8000/v1`.

Endpoints
---------
- `POST /v1/chat/completions` — non-stream JSON, or SSE when `"stream": true`:
  `data: {chat.completion.chunk}\\n\\n` ... `data: [DONE]\\n\\n`. The first chunk
  carries `delta.role`, then content deltas, then a chunk with an empty delta and
  `finish_reason`; with `stream_options.include_usage` a final usage chunk
  (`choices: []`) comes before `[DONE]`. Token counts are `ceil(chars / 4)`.
  If `max_tokens` is smaller than the text (by that count) the text is cut and
  `finish_reason` is `"length"` (not for `echo`).
- `GET /v1/models` — lists the behaviour names below.
- Any API key is accepted (it is recorded, see `RecordedRequest.headers`), unless
  `server.required_key` is set: then any other key gets a 401, as a private endpoint would.

The model name selects the behaviour
------------------------------------
The name is split on `:` and `/`; the first part that is a behaviour name wins,
so `answer`, `openai/answer` (LiteLLM sends `answer`), `answer:a`, `answer/b`
all behave as `answer` while being distinct models (distinct failure counters,
distinct `request_count`). Names whose first part starts with `unknown` get 404;
any other name behaves as `answer`.

    answer            helpful answer echoing the prompt ("Sure. Here is some information about: ...")
    refuse            "I'm sorry, but I can't help with that request."
    indirect          declines, then offers other resources without answering ("I can't provide
                      instructions for that. However, here are some general resources ..."):
                      an OR-Bench indirect refusal
    deflect           deflects without helping ("That's a sensitive topic. Instead of ...")
    hedge             talks around the question ("It depends on the situation. ..."): an answer
                      the offline classifier is unsure of (for the unsure badge and the review queue)
    judge             an LLM judge in OR-Bench's paper format: reads the response between the
                      `<response-NONCE>` tags of the user message (else after the last "RESPONSE"),
                      reasons first and ends with `[[class]]`
                      (a refusal's reason names another class first, so the *last* one counts)
    refuse-if-system  refuses iff a system message contains "safe" (any case), else answers
    toxic-aware       refuses iff the last user message contains one of `server.refuse_words`
                      (case-insensitive; default {"FORBIDDEN"}), else answers
    relent            multi-turn: refuses while the conversation holds no clarification, answers
                      the *first* user message once a later user message contains one of
                      `server.clarify_words` (case-insensitive; default {"to clarify"}, the opening
                      of every "Clarify benign intent" preset)
    stubborn          multi-turn: refuses every turn, whatever the conversation holds
    slow              the answer spread over `server.delay` s (default 1.0) in `server.chunks` chunks (20)
    long              a real-length answer: `server.words` words (default 300, ~1,900 characters),
                      streamed one word per chunk, spread over `server.long_seconds` s (default 2.0);
                      the words vary with the prompt, as real answers do (see long_answer_text)
    hang              never sends headers until the client disconnects
    hang-mid          sends a few chunks, then stalls until the client disconnects
    cut               sends a few chunks, then closes the connection (no finish_reason, no [DONE])
    malformed         one good chunk, then `data: {not json...` , then [DONE]
    empty             no content at all, finish_reason "stop"
    filtered          a little content, finish_reason "content_filter"
    e429              429 + `Retry-After: <server.retry_after>` (1) for the first
                      `server.fail_times` (1) requests per (model, prompt), then answers
    e429-always       always 429 with Retry-After
    e429-noheader     429 without Retry-After for the first fail_times requests, then answers
    e500 e502 e503    that status for the first fail_times requests per (model, prompt), then answers
    e500-always       always 500
    e401 e403 e404    always that status, OpenAI-style `{"error": {...}}` body
    split-surrogate   "Smile: " + an emoji sent as a UTF-16 surrogate pair split over two chunks
                      (JSON `\\ud83d`, then `\\ude00`) + " done." (SPLIT_SURROGATE_TEXT, as sent)
    lone-surrogate    text holding lone surrogates (LONE_SURROGATE_TEXT, as sent: `\\udc00`, `\\ud800`)
    bad-utf8          a first content chunk whose bytes are not valid UTF-8, then [DONE]
    error-mid         a few chunks, then an OpenAI-style `{"error": {...}}` event, then [DONE]
    no-usage          answers like `answer` but never sends usage, even when asked
    crlf              answers like `answer` with CRLF line ends (as sse-starlette servers do)
    hostile           answers with hostile markup (<script>, onerror, javascript: URLs,
                      =HYPERLINK formula, RTL override); see HOSTILE_TEXT
    echo              the answer is the JSON (sorted keys) of the request body minus
                      `stream`/`stream_options`: messages, temperature, max_tokens, ...
    unknown*          404 model_not_found

Hostile and broken stream shapes live in `tests/fake_shapes.py` (each stops
when the client hangs up): `endless` (text forever), `no-newline` (one line
forever), `trickle` (keep-alive comments and empty chunks after a little text),
`trickle-empty` (chunks with empty text, null text, a role only or empty thoughts after a little text),
`flood` (empty chunks as fast as read), `empty-close` (a 200 event stream that
ends at once), `no-end` (text, then the body ends without finish or [DONE]),
`usage-nan`, `usage-junk`, `finish-junk`, `finish-long` (hostile values), `bom`
(a byte-order mark first), `open-after-finish` (finish and usage, then the
connection stays open). Provider shapes too (issue 17): `think-inline`,
`think-close-only`, `think-out-of-tokens`, `reasoning-content`,
`reasoning-field`, `reasoning-details`, `content-parts` (reasoning models:
thoughts that weigh refusing then an answer, or with the `refuses` modifier
thoughts that comply then a refusal), `refusal-field`, `done-no-finish`,
`multi-choice`, `usage-cumulative`, `x-groq-usage`, `sse-comments`,
`event-error`, `error-beside-choices`; and `long-think` (`server.think_words`
words of inline `<think>` thoughts, then a `long` answer, one word per chunk
over `server.long_seconds`: the benchmarks' thinking model). A thinking shape's
thoughts take `server.think_seconds` (default 0). Modifier parts in a model name change
how any behaviour travels: `gzip`, `deflate`, `br` (compressed), `zstd`
(labelled so, not compressed), `as-text` (Content-Type text/plain):
`no-newline/gzip` is a gzip bomb.

`server.set_text(model, text)` makes that exact model name answer `text` (a
plain answer; streamed like `answer`), e.g. for judge-model tests.
`server.set_behaviour(model, behaviour)` gives an exact model name one of the
behaviours above, e.g. `set_behaviour("gpt-4o-mini", "long")` when a priced
provider model is sent to this server, or `set_behaviour("gpt-4-turbo-2024-04-09", "judge")` when
a judge preset sends a real provider's model name here.

Inspecting
----------
- `server.requests`: list of `RecordedRequest` (model, behaviour, messages,
  params, headers, timestamp, stream, path) for chat completions, in arrival order; a
  `long` answer's also says how many words were written (`sent`) and whether the
  client hung up before its end (`hung_up`: a stopped stream).
- `server.request_count(model=None)`: chat requests, optionally for one exact
  model name or behaviour name (`request_count("answer")` counts `answer:a` too).
- `server.in_flight` / `server.max_in_flight`: concurrent chat requests now / peak;
  `server.wait_idle()` waits until none is in flight.
- `server.reset()`: forget requests, failure counters, peak, custom texts, and
  restore `refuse_words`, `delay`, `chunks`, `fail_times`, `retry_after`, `words`, `long_seconds`,
  `clarify_words` to their constructor values.

Through LiteLLM, use `max_retries=0` (openai SDK retries) and `num_retries=0`
(LiteLLM's own retries) to see a single raw attempt.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from fake_shapes import BARE, SHAPES, Shape, Wire, modifiers
from multidict import CIMultiDict

BEHAVIOURS: tuple[str, ...] = (
    "answer",
    "refuse",
    "indirect",
    "deflect",
    "hedge",
    "judge",
    "refuse-if-system",
    "toxic-aware",
    "relent",
    "stubborn",
    "slow",
    "long",
    "hang",
    "hang-mid",
    "cut",
    "malformed",
    "empty",
    "filtered",
    "e429",
    "e429-always",
    "e429-noheader",
    "e500",
    "e502",
    "e503",
    "e500-always",
    "e401",
    "e403",
    "e404",
    "hostile",
    "echo",
    "split-surrogate",
    "lone-surrogate",
    "bad-utf8",
    "error-mid",
    "no-usage",
    "crlf",
    *SHAPES,
)

REFUSE_TEXT = "I'm sorry, but I can't help with that request."
INDIRECT_TEXT = (
    "I can't provide instructions for that. However, here are some general resources that "
    "might help: your local library, official government websites, and licensed professionals "
    "in the field."
)
DEFLECT_TEXT = (
    "That's a sensitive topic. Instead of going into specifics, I'd encourage you to "
    "consult a qualified professional or an official resource who can give guidance "
    "suited to your situation."
)
HEDGE_TEXT = (
    "It depends on the situation. Some people handle this by talking it through, others "
    "prefer to wait and see, and it's worth thinking about the consequences for everyone involved."
)
FILTERED_TEXT = "I"
SPLIT_SURROGATE_TEXT = "Smile: \ud83d\ude00 done."
"""Sent with the pair split over two chunks; read back as "Smile: 😀 done."."""
LONE_SURROGATE_TEXT = "Broken \udc00 text \ud800 here."
"""Read back with each lone surrogate replaced by U+FFFD."""
HOSTILE_TEXT = (
    "<script>window.__pwned=1</script>"
    '<img src=x onerror="window.__pwned=1">'
    '<iframe src="javascript:alert(1)"></iframe>'
    '<a href="javascript:alert(1)">x</a> '
    '<svg onload="window.__pwned=1"></svg> '
    "[click](javascript:alert(1)) "
    '=HYPERLINK("http://x") '
    "+cmd|' /C calc'!A0 "
    "\u202e RTL override \u202c {{7*7}} ${7*7}"
)

_ERRORS: dict[int, tuple[str, str]] = {
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", "forbidden"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    500: ("server_error", "internal_error"),
    502: ("server_error", "bad_gateway"),
    503: ("server_error", "service_unavailable"),
}


def answer_text(prompt: str) -> str:
    """The `answer` behaviour's text for a prompt (about 200 characters plus the echo)."""
    topic = " ".join(prompt.split())[:80]
    return (
        f"Sure. Here is some information about: {topic}. "
        "Step 1: start with the basic background and the key terms. "
        "Step 2: look at reliable public sources. "
        "Step 3: apply it carefully and check the result."
    )


_LONG_VOCABULARY = (
    "the context matters here because people often mix up the legal practical and ethical sides so it helps "
    "to separate them first then look at what reliable sources say about each part and how experts usually "
    "approach similar questions in practice with care patience and attention to detail before acting on "
    "anything that could affect someone else including friends family colleagues customers or neighbours"
).split()


def long_answer_text(prompt: str, words: int = 300) -> str:
    """The `long` behaviour's answer: `words` words that start like a helpful answer
    and vary with the prompt, in sentences of 12 words, so that classifiers and
    renderers see text shaped like a real 200-600 token answer."""
    seed = sum(map(ord, prompt)) % len(_LONG_VOCABULARY)
    topic = " ".join(prompt.split()[:8]) or "this"
    out = ["Sure.", "Here", "is", "a", "careful", "answer", "about:", *topic.split()]
    i = seed
    while len(out) < words:
        sentence = [_LONG_VOCABULARY[(i + 7 * k) % len(_LONG_VOCABULARY)] for k in range(12)]
        sentence[0] = sentence[0].capitalize()
        sentence[-1] += "."
        out.extend(sentence)
        i += 5
    return " ".join(out[:words])


def long_thoughts_text(prompt: str, words: int = 200) -> str:
    """The `long-think` behaviour's thoughts: `words` words in the same style as
    `long_answer_text`, opening as a model's thoughts do."""
    body = long_answer_text(prompt[::-1], words + 7).split(" ")[7:]
    return " ".join(["Okay,", "the", "user", "asks", "about", "this.", "Let", "me", "think.", *body][:words])


_JUDGE_DECLINES = ("can't", "cannot", "won't", "sorry", "not able", "unable", "isn't something i", "rather not")
_JUDGE_ALTERNATIVES = ("however", "instead", "resources", "i can help", "happy to help", "consult", "988")


_FENCED_RESPONSE = re.compile(r"<response-([0-9a-f]+)>\n(.*?)\n</response-\1>", re.S)


def judged_response(user_message: str) -> str:
    """The response a judge prompt asks about: the text between the
    `<response-NONCE>` tags (as an instruction-following judge reads it), else,
    for prompts without tags, the text after the last "RESPONSE"."""
    fenced = _FENCED_RESPONSE.search(user_message)
    if fenced:
        return fenced.group(2)
    _, _, tail = user_message.rpartition("RESPONSE")
    return tail or user_message


def judge_reply(user_message: str) -> str:
    """The `judge` behaviour's reply: reason first, then `[[class]]` last,
    about the response `judged_response` finds in the message."""
    text = judged_response(user_message).lower()
    declines = any(w in text for w in _JUDGE_DECLINES)
    offers = any(w in text for w in _JUDGE_ALTERNATIVES)
    if declines and offers:
        return (
            "The response says it cannot help and then points to other resources without answering the "
            "question, so it is more than a [[direct_refusal]].\n\n[[indirect_refusal]]"
        )
    if declines:
        return "The response declines and offers nothing in its place; it is not a [[direct_answer]].\n\n[[direct_refusal]]"
    return "The response makes a direct attempt to answer the question.\n\n[[direct_answer]]"


def tokens(text: str) -> int:
    """The fake tokenizer: one token per 4 characters, rounded up."""
    return math.ceil(len(text) / 4)


def resolve_behaviour(model: str) -> str:
    """Map a model name to its behaviour name (`unknown` for the 404 family)."""
    parts = [p for p in model.replace(":", "/").split("/") if p]
    for part in parts:
        if part in BEHAVIOURS:
            return part
    if parts and parts[0].startswith("unknown"):
        return "unknown"
    return "answer"


@dataclass
class RecordedRequest:
    """One chat-completions request as the server saw it."""

    model: str
    behaviour: str
    messages: list[dict[str, Any]]
    params: dict[str, Any]
    """Every other body field (temperature, max_tokens, stream_options, ...)."""
    headers: CIMultiDict[str]
    """Case-insensitive: `headers["authorization"]` works whatever the client sent."""
    timestamp: float
    stream: bool
    path: str = "/v1/chat/completions"
    body: dict[str, Any] = field(default_factory=dict)
    sent: int = 0
    """Pieces of a `long` answer written to the client so far (one word each)."""
    hung_up: bool = False
    """The client closed a `long` answer's connection before its end (a stopped stream)."""

    @property
    def prompt(self) -> str:
        """The text of the last user message."""
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return _content_text(m.get("content"))
        return ""

    @property
    def system(self) -> str | None:
        """The text of the system messages joined, or None when there is none."""
        texts = [_content_text(m.get("content")) for m in self.messages if m.get("role") == "system"]
        return "\n".join(texts) if texts else None


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _split(text: str, n: int) -> list[str]:
    """Cut text into about n pieces on character boundaries (none empty)."""
    if not text:
        return []
    n = max(1, min(n, len(text)))
    size = math.ceil(len(text) / n)
    return [text[i : i + size] for i in range(0, len(text), size)]


class FakeOpenAIServer:
    """See the module docstring. Thread-safe to inspect from any thread."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        refuse_words: set[str] | frozenset[str] | tuple[str, ...] = ("FORBIDDEN",),
        delay: float = 1.0,
        chunks: int = 20,
        fail_times: int = 1,
        retry_after: float = 1,
        words: int = 300,
        long_seconds: float = 2.0,
        clarify_words: tuple[str, ...] = ("to clarify",),
    ) -> None:
        self.host = host
        self._requested_port = port
        self.port: int | None = None
        self._defaults = {
            "refuse_words": set(refuse_words),
            "delay": delay,
            "chunks": chunks,
            "fail_times": fail_times,
            "retry_after": retry_after,
            "words": words,
            "long_seconds": long_seconds,
            "clarify_words": tuple(clarify_words),
        }
        self.clarify_words: tuple[str, ...] = tuple(clarify_words)
        self.refuse_words: set[str] = set(refuse_words)
        self.delay = delay
        self.chunks = chunks
        self.fail_times = fail_times
        self.retry_after = retry_after
        self.words = words
        self.long_seconds = long_seconds
        self.trickle_s = 0.02
        self.think_seconds = 0.0
        self.think_words = 200
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._requests: list[RecordedRequest] = []
        self._fail_counts: dict[tuple[str, str], int] = {}
        self._texts: dict[str, str] = {}
        self._behaviours: dict[str, str] = {}
        self.required_key: str | None = None
        self.in_flight = 0
        self.max_in_flight = 0
        self._ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._closing: asyncio.Event | None = None

    # ------------------------------------------------------------ lifecycle
    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT` (no /v1)."""
        if self.port is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT/v1`: pass as LiteLLM `api_base`."""
        return self.url + "/v1"

    def start(self) -> FakeOpenAIServer:
        if self._thread is not None:
            return self
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._startup())
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="fake-openai", daemon=True)
        self._thread.start()
        ready.wait(30)
        if failure:
            self._thread = None
            raise RuntimeError(f"fake OpenAI server failed to start: {failure[0]!r}")
        return self

    async def _startup(self) -> None:
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/models", self._models)
        app.router.add_get("/health", self._health)
        self._closing = asyncio.Event()
        self._runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=0.5, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self._requested_port)
        await site.start()
        sock = site._server.sockets[0]  # type: ignore[union-attr]  # started just above, so the server is there
        self.port = sock.getsockname()[1]

    def stop(self) -> None:
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return

        async def shutdown() -> None:
            assert self._closing is not None and self._runner is not None
            self._closing.set()
            await self._runner.cleanup()

        with contextlib.suppress(Exception):  # a server that fails to shut down cleanly is stopped below anyway
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------ inspection
    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the recorded chat requests, oldest first."""
        with self._lock:
            return list(self._requests)

    def request_count(self, model: str | None = None) -> int:
        with self._lock:
            if model is None:
                return len(self._requests)
            return sum(1 for r in self._requests if r.model == model or (model in BEHAVIOURS and r.behaviour == model))

    def wait_idle(self, timeout_s: float = 30.0) -> int:
        """Wait until no chat request is being handled, and return how many
        are (0 unless the wait timed out). A streaming client can see the last
        chunk before the server's handler has returned, so tests that count
        what the server finished wait here instead of reading `in_flight`."""
        with self._idle:
            self._idle.wait_for(lambda: self.in_flight == 0, timeout=timeout_s)
            return self.in_flight

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
            self._fail_counts.clear()
            self._texts.clear()
            self._behaviours.clear()
            self.required_key = None
            self.max_in_flight = self.in_flight
            self.refuse_words = set(self._defaults["refuse_words"])
            self.delay = self._defaults["delay"]
            self.chunks = self._defaults["chunks"]
            self.fail_times = self._defaults["fail_times"]
            self.retry_after = self._defaults["retry_after"]
            self.words = self._defaults["words"]
            self.long_seconds = self._defaults["long_seconds"]
            self.clarify_words = self._defaults["clarify_words"]
            self.trickle_s = 0.02
            self.think_seconds = 0.0
            self.think_words = 200

    def set_text(self, model: str, text: str) -> None:
        """Make the exact model name `model` answer `text`."""
        with self._lock:
            self._texts[model] = text

    def set_behaviour(self, model: str, behaviour: str) -> None:
        """Give the exact model name `model` one of the BEHAVIOURS."""
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {behaviour!r}")
        with self._lock:
            self._behaviours[model] = behaviour

    # ------------------------------------------------------------ handlers
    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _models(self, request: web.Request) -> web.Response:
        now = int(time.time())
        data = [{"id": b, "object": "model", "created": now, "owned_by": "fake"} for b in BEHAVIOURS]
        return web.json_response({"object": "list", "data": data})

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
        etype, code = _ERRORS.get(status, ("server_error", str(status)))
        body = {"error": {"message": message, "type": etype, "param": None, "code": code}}
        return web.json_response(body, status=status, headers=headers)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except Exception:
            return self._error(400, "request body is not valid JSON")
        if not isinstance(body, dict):
            return self._error(400, "request body must be a JSON object")
        model = str(body.get("model", ""))
        messages = body.get("messages") or []
        with self._lock:
            behaviour = self._behaviours.get(model) or resolve_behaviour(model)
        stream = bool(body.get("stream"))
        rec = RecordedRequest(
            model=model,
            behaviour=behaviour,
            messages=messages if isinstance(messages, list) else [],
            params={k: v for k, v in body.items() if k not in ("model", "messages")},
            headers=CIMultiDict(request.headers),
            timestamp=time.time(),
            stream=stream,
            path=request.path,
            body=body,
        )
        with self._lock:
            self._requests.append(rec)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            custom = self._texts.get(model)
        try:
            return await self._respond(request, body, rec, custom)
        finally:
            with self._lock:
                self.in_flight -= 1
                self._idle.notify_all()

    def _failing(self, rec: RecordedRequest) -> bool:
        """Count this request against its (model, prompt) key; True while failing."""
        key = (rec.model, rec.prompt)
        with self._lock:
            seen = self._fail_counts.get(key, 0)
            self._fail_counts[key] = seen + 1
            return seen < self.fail_times

    async def _respond(
        self, request: web.Request, body: dict[str, Any], rec: RecordedRequest, custom: str | None
    ) -> web.StreamResponse:
        b = rec.behaviour
        if self.required_key is not None and rec.headers.get("Authorization") != f"Bearer {self.required_key}":
            return self._error(401, "Incorrect API key provided (fake private endpoint).")
        if b == "unknown":
            return self._error(404, f"The model `{rec.model}` does not exist or you do not have access to it.")
        if b in ("e401", "e403", "e404"):
            status = int(b[1:])
            msg = {
                401: "Incorrect API key provided: sk-f****. (fake)",
                403: "You are not allowed to sample from this model (fake).",
                404: f"The model `{rec.model}` does not exist or you do not have access to it.",
            }[status]
            return self._error(status, msg)
        if b == "e429-always" or (b == "e429" and self._failing(rec)):
            return self._error(429, "Rate limit reached (fake). Please retry.", {"Retry-After": _fmt(self.retry_after)})
        if b == "e429-noheader" and self._failing(rec):
            return self._error(429, "Rate limit reached (fake).")
        if b == "e500-always" or (b in ("e500", "e502", "e503") and self._failing(rec)):
            status = 500 if b == "e500-always" else int(b[1:])
            return self._error(status, f"The server had an error while processing your request (fake {status}).")
        if b == "hang":
            await self._wait_disconnect(request)
            return web.Response(status=499)

        text, finish = self._text_for(b, rec, custom)
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        if b != "echo" and isinstance(max_tokens, int) and max_tokens > 0 and tokens(text) > max_tokens:
            text, finish = text[: max_tokens * 4], "length"

        if not rec.stream:
            return await self._respond_plain(request, rec, text, finish)
        return await self._respond_stream(request, body, rec, text, finish)

    def _text_for(self, b: str, rec: RecordedRequest, custom: str | None) -> tuple[str, str]:
        prompt = rec.prompt
        if custom is not None:
            return custom, "stop"
        if b == "refuse":
            return REFUSE_TEXT, "stop"
        if b == "indirect":
            return INDIRECT_TEXT, "stop"
        if b == "deflect":
            return DEFLECT_TEXT, "stop"
        if b == "hedge":
            return HEDGE_TEXT, "stop"
        if b == "judge":
            return judge_reply(prompt), "stop"
        if b == "refuse-if-system":
            system = rec.system or ""
            return (REFUSE_TEXT if "safe" in system.lower() else answer_text(prompt)), "stop"
        if b == "toxic-aware":
            low = prompt.lower()
            hit = any(w.lower() in low for w in self.refuse_words if w)
            return (REFUSE_TEXT if hit else answer_text(prompt)), "stop"
        if b == "relent":
            users = [_content_text(m.get("content")) for m in rec.messages if m.get("role") == "user"]
            later = " ".join(users[1:]).lower()
            clarified = any(w.lower() in later for w in self.clarify_words if w)
            return (answer_text(users[0]) if clarified and users else REFUSE_TEXT), "stop"
        if b == "stubborn":
            return REFUSE_TEXT, "stop"
        if b == "empty":
            return "", "stop"
        if b == "filtered":
            return FILTERED_TEXT, "content_filter"
        if b == "hostile":
            return HOSTILE_TEXT, "stop"
        if b == "split-surrogate":
            return SPLIT_SURROGATE_TEXT, "stop"
        if b == "lone-surrogate":
            return LONE_SURROGATE_TEXT, "stop"
        if b == "long":
            return long_answer_text(prompt, self.words), "stop"
        if b == "echo":
            shown = {k: v for k, v in rec.body.items() if k not in ("stream", "stream_options")}
            return json.dumps(shown, sort_keys=True), "stop"
        return answer_text(prompt), "stop"

    def _base(self, rec: RecordedRequest, cid: str) -> dict[str, Any]:
        return {"id": cid, "created": int(rec.timestamp), "model": rec.model, "system_fingerprint": "fp_fake"}

    async def _respond_plain(
        self, request: web.Request, rec: RecordedRequest, text: str, finish: str
    ) -> web.StreamResponse:
        b = rec.behaviour
        if b == "slow":
            await asyncio.sleep(self.delay)
        if b == "hang-mid":
            await self._wait_disconnect(request)
            return web.Response(status=499)
        if b == "cut":
            if request.transport is not None:
                request.transport.close()
            return web.Response(status=499)
        if b == "malformed":
            return web.Response(
                status=200, text='{"id": "chatcmpl-fake", "choices": [', content_type="application/json"
            )
        cid = f"chatcmpl-fake-{next(self._ids)}"
        prompt_tokens = tokens(json.dumps(rec.messages))
        out = {
            **self._base(rec, cid),
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": tokens(text),
                "total_tokens": prompt_tokens + tokens(text),
            },
        }
        return web.json_response(out)

    async def _respond_stream(
        self, request: web.Request, body: dict[str, Any], rec: RecordedRequest, text: str, finish: str
    ) -> web.StreamResponse:
        b = rec.behaviour
        mods = modifiers(rec.model)
        resp = web.StreamResponse(status=200, headers=Wire.headers(mods))
        await resp.prepare(request)
        wire = Wire(resp, request, mods)
        cid = f"chatcmpl-fake-{next(self._ids)}"
        base = self._base(rec, cid)

        end = "\r\n" if b == "crlf" else "\n"

        async def send(obj: Any) -> None:
            payload = obj if isinstance(obj, str) else json.dumps(obj)
            await wire.raw(f"data: {payload}{end}{end}".encode())

        def chunk(delta: dict[str, Any], finish_reason: Any = None) -> dict[str, Any]:
            return {
                **base,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
            }

        def usage(answer: str) -> dict[str, Any]:
            prompt_tokens = tokens(json.dumps(rec.messages))
            return {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": tokens(answer),
                "total_tokens": prompt_tokens + tokens(answer),
            }

        if b in SHAPES:
            if b not in BARE:
                await send(chunk({"role": "assistant", "content": ""}))
            await SHAPES[b](Shape(wire, chunk, usage, text, self, _split(text, 8), mods, REFUSE_TEXT, rec.prompt))
            return resp

        if b == "long":  # one word per chunk, each with its leading space, as real streams do
            words = text.split(" ")
            pieces = [words[0], *(" " + w for w in words[1:])]
            pause = self.long_seconds / max(1, len(pieces))
        elif b == "split-surrogate":  # the pair's halves in two chunks
            cut = text.index("\ud83d") + 1
            pieces, pause = [text[:cut], text[cut:]], 0.0
        else:
            n = self.chunks if b == "slow" else 8
            pieces = _split(text, n)
            pause = (self.delay / max(1, len(pieces))) if b == "slow" else 0.0

        await send(chunk({"role": "assistant", "content": ""}))
        if b == "bad-utf8":
            await wire.raw(b'data: {"choices": [{"index": 0, "delta": {"content": "caf\xe9 \xff\xfe"}}]}\n\n')
            await send("[DONE]")
            await wire.end()
            return resp
        if b == "error-mid":
            for p in pieces[:2]:
                await send(chunk({"content": p}))
            await send({"error": {"message": "The server is overloaded (fake).", "type": "server_error"}})
            await send("[DONE]")
            await wire.end()
            return resp
        if b in ("hang-mid", "cut", "malformed"):
            stop_at = 1 if b == "malformed" else min(3, len(pieces))
            for p in pieces[:stop_at]:
                await send(chunk({"content": p}))
            if b == "hang-mid":
                await self._wait_disconnect(request)
                return resp
            if b == "cut":
                if request.transport is not None:
                    request.transport.close()
                return resp
            await wire.raw(b'data: {"id": "chatcmpl-fake", "choices": [{"delta": {"content": "oops\n\n')
            await send("[DONE]")
            await wire.end()
            return resp

        if b == "long":
            try:
                await self._stream_words(resp, chunk, pieces, pause, end, rec)
            except (ConnectionError, RuntimeError):  # aiohttp: the client went away mid-answer
                rec.hung_up = True
                return resp
            except asyncio.CancelledError:  # …or the handler was cancelled for it
                rec.hung_up = True
                raise
        else:
            for p in pieces:
                if pause:
                    await asyncio.sleep(pause)
                await send(chunk({"content": p}))
        await send(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage") and b != "no-usage":
            await send({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage(text)})
        await send("[DONE]")
        await wire.end()
        return resp

    async def _stream_words(
        self,
        resp: web.StreamResponse,
        chunk: Any,
        pieces: list[str],
        pause: float,
        end: str,
        rec: RecordedRequest | None = None,
    ) -> None:
        """The `long` answer, lean enough for load benchmarks (hundreds of streams at
        once from one process): still one SSE event per word, each encoded from a
        template made once per answer, and the words due in each tick of
        `LONG_TICK_S` sent in one write instead of one timer and one write per word."""
        head, tail = json.dumps(chunk({"content": "\x00"})).split('"\\u0000"')
        per_write = max(1, round(LONG_TICK_S / pause)) if pause else len(pieces)
        for start in range(0, len(pieces), per_write):
            if pause:
                await asyncio.sleep(pause * per_write)
            batch = pieces[start : start + per_write]
            await resp.write("".join(f"data: {head}{json.dumps(p)}{tail}{end}{end}" for p in batch).encode())
            if rec is not None:
                rec.sent += len(batch)

    async def _wait_disconnect(self, request: web.Request) -> None:
        """Stall until the client goes away or the server stops."""
        assert self._closing is not None
        while not self._closing.is_set():
            transport = request.transport
            if transport is None or transport.is_closing():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), 0.05)


LONG_TICK_S = 0.02
"""How often the `long` behaviour writes (every word due since the last write)."""


def _fmt(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else str(seconds)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Fake OpenAI-compatible server (model name picks the behaviour).")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--delay", type=float, default=1.0, help="seconds the `slow` model takes")
    ap.add_argument("--chunks", type=int, default=20, help="chunks the `slow` model sends")
    ap.add_argument("--words", type=int, default=300, help="words in a `long` answer (one per chunk)")
    ap.add_argument("--long-seconds", type=float, default=2.0, help="seconds a `long` answer takes to stream")
    ap.add_argument("--think-words", type=int, default=200, help="words of thoughts before a `long-think` answer")
    ap.add_argument("--fail-times", type=int, default=1, help="failures before e429/e5xx answer")
    ap.add_argument("--refuse-word", action="append", default=None, help="marker for `toxic-aware` (repeatable)")
    args = ap.parse_args(argv)
    server = FakeOpenAIServer(
        args.host,
        args.port,
        refuse_words=tuple(args.refuse_word or ("FORBIDDEN",)),
        delay=args.delay,
        chunks=args.chunks,
        fail_times=args.fail_times,
        words=args.words,
        long_seconds=args.long_seconds,
    ).start()
    server.think_words = args.think_words
    print(f"fake OpenAI server at {server.base_url}  (models: {', '.join(BEHAVIOURS)})", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
