"""Scratch folders that go with their process, and a cap on what they hold.

Files that are worth nothing once their process is gone (a visitor session's
spool of long answers and its downloads) live in one folder per process and
parent, `orbench-proc-<pid>-<random>`. The process holds an exclusive `flock`
on the folder's `.owner.lock` for as long as it lives; the kernel lets go of
it however the process ends, `kill -9` included. So the next process to start
can tell a crashed process's folder (its lock can be taken) from a live
sibling's (it cannot) and removes only the former (`sweep`): two app
processes sharing a temp folder never delete each other's files, and a
recycled pid fools nothing. A folder is made under a staging name, locked,
then renamed into place, so no sweep ever sees one of ours unlocked.

`DiskBudget` is a process-wide count of the bytes those folders hold against
a total cap: writers ask before they write (`try_take`), and work that would
write more is refused while it is full.

Standard library only (the CLI, tests and a crashed process's successor use
it without Gradio).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
import threading
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: fall back to the pid in the folder's name
    fcntl = None  # type: ignore[assignment]

PREFIX = "orbench-proc-"
"""Folders of a process: `orbench-proc-<pid>-<random>`."""
STAGING = ".orbench-new-"
"""A folder being made (not yet locked and named); swept only once it is this old:"""
STAGING_AGE_S = 300.0
LOCK_NAME = ".owner.lock"
"""Empty (the pid is in the folder's name): the folder's files are all its sessions'."""

_lock = threading.Lock()
_folders: dict[str, tuple[Path, int]] = {}
"""parent → (this process's folder in it, the descriptor holding its lock)."""


def process_folder(parent: str | os.PathLike[str]) -> Path:
    """This process's folder inside `parent` (made and locked on first use; made
    again if something removed it)."""
    key = os.fspath(parent)
    with _lock:
        known = _folders.get(key)
        if known is not None and known[0].is_dir():
            return known[0]
        for gone in [k for k, (folder, _) in _folders.items() if k == key or not folder.is_dir()]:
            with contextlib.suppress(OSError):  # removed by someone else: its lock guards nothing now
                os.close(_folders.pop(gone)[1])
        folder, fd = _make(Path(key))
        _folders[key] = (folder, fd)
        return folder


def _make(parent: Path) -> tuple[Path, int]:
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=STAGING, dir=parent))
    fd = os.open(staging / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        folder = parent / f"{PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        os.rename(staging, folder)
    except BaseException:
        os.close(fd)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder, fd


def _own(entry: Path) -> bool:
    with _lock:
        return any(folder == entry for folder, _ in _folders.values())


def _owner_alive(entry: Path) -> bool:
    """Whether the process that made `entry` still runs (it holds the folder's lock)."""
    if fcntl is None:
        pid = entry.name[len(PREFIX) :].split("-", 1)[0]
        try:
            os.kill(int(pid), 0)
        except (ValueError, ProcessLookupError):
            return False
        except PermissionError:
            return True
        return True
    try:
        fd = os.open(entry / LOCK_NAME, os.O_RDWR)
    except FileNotFoundError:
        return False  # ours are renamed into place with their lock inside: this one lost it
    except OSError:
        return True  # cannot tell: leave it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return True
    finally:
        os.close(fd)  # also lets go of a lock we took: the folder goes next
    return False


def sweep(
    parent: str | os.PathLike[str], *, legacy: tuple[str, ...] = (), legacy_age_s: float = 86_400.0
) -> list[Path]:
    """Remove the folders in `parent` that processes which have ended left behind;
    return them. Never this process's own, never a live process's. Folders with a
    `legacy` prefix (made before folders had owners) go once `legacy_age_s` old."""
    root = Path(parent)
    try:
        entries = list(root.iterdir())
    except OSError:
        return []
    now = time.time()
    removed = []
    for entry in entries:
        name = entry.name
        try:
            if entry.is_symlink() or not entry.is_dir():
                continue
            if name.startswith(PREFIX):
                gone = not _own(entry) and not _owner_alive(entry)
            elif name.startswith(STAGING):
                gone = now - entry.stat().st_mtime > STAGING_AGE_S
            elif legacy and name.startswith(legacy):
                gone = now - entry.stat().st_mtime > legacy_age_s
            else:
                continue
        except OSError:
            continue
        if gone:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


class DiskBudget:
    """Bytes written to scratch folders by every session of this process, against a cap."""

    def __init__(self, limit: int):
        self.limit = max(0, int(limit))
        self.used = 0
        self._lock = threading.Lock()

    def try_take(self, size: int) -> bool:
        """Count `size` more bytes if they fit under the cap; False (nothing counted) if not."""
        with self._lock:
            if self.used + size > self.limit:
                return False
            self.used += size
            return True

    def take(self, size: int) -> None:
        """Count bytes already written (a download, whose size is known only after)."""
        with self._lock:
            self.used += max(0, size)

    def give_back(self, size: int) -> None:
        with self._lock:
            self.used = max(0, self.used - max(0, size))

    @property
    def full(self) -> bool:
        return self.used >= self.limit
