"""A cheap client for the app's API: raw HTTP against Gradio's `/gradio_api/call`
routes with one shared aiohttp session, instead of one `gradio_client.Client`
per visitor (each of which fetches the API description, opens its own
connections and parses every streamed message). So a load figure measures the
app, not the harness: 50 visitors cost this process a few milliseconds of CPU
each.

The protocol (Gradio 6): `POST /gradio_api/call/<api>` with `{"data": [...]}`
(every input but the session State, in the endpoint's order) answers
`{"event_id": ...}`; `GET /gradio_api/call/<api>/<event_id>` is an SSE stream
of `event: generating` messages and one `event: complete` (or `error`) whose
`data:` line is the list of outputs.
"""

from __future__ import annotations

import json
from typing import Any

RUN_INPUTS = (
    "models", "split", "categories", "n", "seed", "max_tokens",
    "preset", "custom_system", "temperature", "top_p", "repeats", "focus", "judge",
)  # fmt: skip
"""The `/run` endpoint's inputs, in order (the session State is not sent)."""
PROMPT_INPUTS = (
    "prompt",
    "models",
    "max_tokens",
    "preset",
    "custom_system",
    "temperature",
    "top_p",
    "repeats",
    "judge",
)
RESULTS = 6
"""Index of `results_json` in the outputs of `/run` and `/run_prompt`."""


class GradioError(Exception):
    """The app answered with an error event, or the stream ended without a result."""


def run_args(models: list[str], split: str, categories: list[str], n: int, seed: int, max_tokens: int) -> list[Any]:
    """`/run`'s data with the default generation settings."""
    return [models, split, categories, n, seed, max_tokens, "none", "", "", "", 1, False, "keyword"]


def prompt_args(prompt: str, models: list[str], max_tokens: int = 64) -> list[Any]:
    return [prompt, models, max_tokens, "none", "", "", "", 1, "keyword"]


async def call(session: Any, root: str, api: str, data: list[Any], headers: dict[str, str] | None = None) -> list[Any]:
    """One API call through `session` (an `aiohttp.ClientSession`); the outputs of its last message."""
    root = root.rstrip("/")
    async with session.post(f"{root}/gradio_api/call/{api}", json={"data": data}, headers=headers) as response:
        if response.status != 200:
            raise GradioError(f"POST /{api}: HTTP {response.status}: {(await response.text())[:200]}")
        event_id = (await response.json())["event_id"]
    buffer = b""
    async with session.get(f"{root}/gradio_api/call/{api}/{event_id}", headers=headers) as response:
        async for chunk in response.content.iter_any():
            buffer += chunk
            while b"\n\n" in buffer:
                message, buffer = buffer.split(b"\n\n", 1)
                kind, _, payload = _fields(message)
                if kind == b"complete":
                    return json.loads(payload)
                if kind == b"error":
                    raise GradioError(f"/{api}: {payload.decode('utf-8', 'replace')[:300]}")
    raise GradioError(f"/{api}: the stream ended without a result")


def _fields(message: bytes) -> tuple[bytes, bytes, bytes]:
    kind = data = b""
    for line in message.split(b"\n"):
        if line.startswith(b"event:"):
            kind = line[6:].strip()
        elif line.startswith(b"data:"):
            data += line[5:].lstrip(b" ")
    return kind, b"", data


def results(outputs: list[Any]) -> dict[str, Any]:
    """The run part of `results_json` (`{"results": [...], "notes": [...], ...}`)."""
    payload = outputs[RESULTS] or {}
    return payload.get("run") or {}


async def call_once(root: str, api: str, data: list[Any], headers: dict[str, str] | None = None) -> list[Any]:
    """`call` with a session of its own (tests; a benchmark shares one session)."""
    import aiohttp

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600)) as session:
        return await call(session, root, api, data, headers)
