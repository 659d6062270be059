"""`python app.py` in its own process for the page and load figures: the app as
deployed, with its CPU measurable apart from the benchmark's (and the fake
server's, which runs in a third process)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from . import common


def models_yaml(path: Path, base_url: str, models: dict[str, str], max_parallel: int | None = None) -> Path:
    """A LiteLLM model_list: display name -> fake-server behaviour (e.g. `long:1`);
    `max_parallel` sets each model's `max_parallel_requests` (default: the app's, 8)."""
    lines = ["model_list:"]
    for name, behaviour in models.items():
        lines += [
            f"  - model_name: {name}",
            "    litellm_params:",
            f"      model: openai/{behaviour}",
            f"      api_base: {base_url}",
            "      api_key: sk-fake",
        ]
        if max_parallel is not None:
            lines.append(f"      max_parallel_requests: {max_parallel}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class AppProcess:
    """`with AppProcess(models) as app:` serves the playground on a free port;
    `app.root` is its URL, `app.cpu_s()` the process's CPU seconds so far."""

    def __init__(
        self,
        base_url: str,
        models: dict[str, str],
        max_parallel: int | None = None,
        env: dict[str, str] | None = None,
        gc_probe: bool = False,
    ) -> None:
        self.base_url, self.models, self.max_parallel = base_url, models, max_parallel
        self.env = dict(env or {})
        """More environment for the app (e.g. ORBENCH_REDIS_URL for replicas)."""
        self.gc_probe = gc_probe
        """Run app.py under benchmarks/gc_probe.py, so `gc_report` can say what its collections cost."""
        self.proc: subprocess.Popen | None = None
        self.root = ""
        self._tmp: tempfile.TemporaryDirectory | None = None

    def __enter__(self) -> AppProcess:
        self._tmp = tempfile.TemporaryDirectory(prefix="orbench-bench-app-")
        folder = Path(self._tmp.name)
        port = common.free_port()
        env = {
            **os.environ,
            "ORBENCH_MODELS": str(models_yaml(folder / "models.yaml", self.base_url, self.models, self.max_parallel)),
            "ORBENCH_CACHE_DIR": str(folder / "cache"),
            "GRADIO_SERVER_PORT": str(port),
            "GRADIO_SERVER_NAME": "127.0.0.1",
            **self.env,
        }
        self._log = open(folder / "app.log", "wb")
        self._gc_out = folder / "gc.json"
        probe = [str(common.REPO / "benchmarks" / "gc_probe.py"), str(self._gc_out)] if self.gc_probe else []
        self.proc = subprocess.Popen(
            [sys.executable, *probe, str(common.REPO / "app.py")],
            cwd=str(common.REPO),
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.root = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"app.py exited: {(folder / 'app.log').read_text()[-400:]}")
            try:
                if httpx.get(self.root + "/", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("app.py gave no HTTP 200 within 120 s")
            time.sleep(0.1)

    def cpu_s(self) -> float:
        return common.process_cpu_s(self.proc.pid)

    def gc_report(self, within: float = 10.0) -> dict | None:
        """The app's garbage-collection figures so far (benchmarks/gc_probe.py), or None
        without the probe or when the app did not answer in time."""
        if not self.gc_probe or self.proc is None:
            return None
        before = self._read_gc()
        self.proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            now = self._read_gc()
            if now is not None and (before is None or now["written"] != before["written"]):
                return now
            time.sleep(0.05)
        return None

    def _read_gc(self) -> dict | None:
        try:
            return json.loads(self._gc_out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            common.stop_process(self.proc)
        self._log.close()
        if self._tmp is not None:
            self._tmp.cleanup()
