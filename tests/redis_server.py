"""A real `redis-server` on loopback for the tests of shared state (Debian's
`redis-server` package; `make test` installs it as root, see
scripts/ensure_redis.sh). A missing binary fails the test with one line saying
what to install: fakeredis is not a substitute for these tests.

`RedisServer` can be stopped and started again on the same port, which is how
the tests lose Redis mid-run and bring it back.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from support import free_port

REDIS_SERVER = "redis-server"
INSTALL = "run 'sudo apt-get install redis-server' (or make test as root) and run the tests again"


def require_redis_server() -> str:
    path = shutil.which(REDIS_SERVER) or ("/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None)
    if path is None:
        pytest.fail(f"these tests need Debian's redis-server on PATH: {INSTALL}", pytrace=False)
    return path


class RedisServer:
    """`redis-server` on 127.0.0.1 on a free port, nothing persisted; `url` for ORBENCH_REDIS_URL."""

    def __init__(self, password: str | None = None) -> None:
        self.binary = require_redis_server()
        self.port = free_port()
        self.password = password
        self.folder = Path(tempfile.mkdtemp(prefix="orbench-redis-"))
        self.proc: subprocess.Popen | None = None
        auth = f":{password}@" if password else ""
        self.url = f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self, within: float = 20.0) -> RedisServer:
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        args += ["--dir", str(self.folder), "--protected-mode", "yes"]
        if self.password:
            args += ["--requirepass", self.password]
        self.log = open(self.folder / "redis.log", "ab")  # noqa: SIM115 -- closed in stop()
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + within
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"redis-server exited: {(self.folder / 'redis.log').read_text()[-800:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(64):
                        return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"redis-server did not answer on port {self.port} within {within:.0f} s")
            time.sleep(0.05)

    def stop(self) -> None:
        """Kill it (SIGKILL: as a crash or a lost host would); data is gone."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=20)
        self.proc = None
        if getattr(self, "log", None) is not None:
            self.log.close()
            self.log = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
