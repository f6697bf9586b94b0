"""The spill file of a command's output: bounded on disk, private, gone when knightcode exits.

``yes`` for the 180 s default timeout wrote 48 GB, world-readable, never deleted. Now:

* **Bounded.** The first ``head_bytes`` and the last ``tail_bytes`` of the output are kept (the
  start says what ran, the end how it failed); the tail is a ring inside the file, put in order
  when the command ends, with a marker line where the middle was dropped.
* **Private.** The file is created ``0600`` (``O_EXCL``) in a ``0700`` directory of this process.
* **Temporary.** The directory, ``$TMPDIR/knightcode-<pid>-<random>``, lives as long as the
  process: it is removed at exit. The model is told the path so that it can read the file in a
  later turn, so the file must outlive the tool call but not the process. A process that dies
  without cleaning up (SIGKILL) leaves its directory behind; the next knightcode that spills
  removes every such directory whose owner is gone — it holds an ``flock`` on ``.lock`` inside,
  which the kernel releases whatever way the process ends.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import secrets
import shutil
import tempfile

from knightcode._tools.truncate import format_size

__all__ = ["SPILL_HEAD_BYTES", "SPILL_TAIL_BYTES", "SpillFile", "spill_dir"]

SPILL_HEAD_BYTES = 8 * 1024 * 1024
"""Bytes kept from the start of a command's output."""
SPILL_TAIL_BYTES = 8 * 1024 * 1024
"""Bytes kept from its end."""

_DIR_PREFIX = "knightcode-"
_LOCK = ".lock"


class _ProcessDir:
    """This process's spill directory, made on first use."""

    path: str | None = None
    lock_fd: int = -1
    cleanup_registered = False


def _remove_own_dir() -> None:
    if _ProcessDir.path is not None:
        shutil.rmtree(_ProcessDir.path, ignore_errors=True)
        _ProcessDir.path = None
    if _ProcessDir.lock_fd >= 0:
        os.close(_ProcessDir.lock_fd)
        _ProcessDir.lock_fd = -1


def _remove_abandoned(parent: str) -> None:
    """Remove the spill directories of knightcode processes that are gone (see the module)."""
    uid = os.getuid()
    with contextlib.suppress(OSError), os.scandir(parent) as entries:
        for entry in entries:
            if not entry.name.startswith(_DIR_PREFIX) or entry.path == _ProcessDir.path:
                continue
            with contextlib.suppress(OSError):
                if not entry.is_dir(follow_symlinks=False) or entry.stat().st_uid != uid:
                    continue
                fd = os.open(os.path.join(entry.path, _LOCK), os.O_RDONLY | os.O_CLOEXEC)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: alive
                    shutil.rmtree(entry.path, ignore_errors=True)
                finally:
                    os.close(fd)


def spill_dir() -> str:
    """This process's private spill directory (created, with stale ones swept, on first use)."""
    if _ProcessDir.path is not None and os.path.isdir(_ProcessDir.path):
        return _ProcessDir.path
    _remove_own_dir()  # removed under us (a tmp cleaner): forget it and make another
    parent = tempfile.gettempdir()
    path = tempfile.mkdtemp(prefix=f"{_DIR_PREFIX}{os.getpid()}-", dir=parent)  # mode 0700
    # Locked before it gets its name, so a sweeping process never finds it unlocked.
    locking = os.path.join(path, f"{_LOCK}.new")
    lock_fd = os.open(locking, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    fcntl.flock(lock_fd, fcntl.LOCK_EX)
    os.rename(locking, os.path.join(path, _LOCK))
    _ProcessDir.path, _ProcessDir.lock_fd = path, lock_fd
    if not _ProcessDir.cleanup_registered:
        _ProcessDir.cleanup_registered = True
        atexit.register(_remove_own_dir)
    _remove_abandoned(parent)
    return path


class SpillFile:
    """One command's full output on disk, within ``head_bytes + tail_bytes`` (plus a marker).

    :param prefix: the file name's start, e.g. ``knightcode-bash``
    """

    def __init__(
        self,
        prefix: str,
        head_bytes: int = SPILL_HEAD_BYTES,
        tail_bytes: int = SPILL_TAIL_BYTES,
    ) -> None:
        self.path = os.path.join(spill_dir(), f"{prefix}-{secrets.token_hex(8)}.log")
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC  # read back to order the tail
        self._fd = os.open(self.path, flags, 0o600)
        self._head = head_bytes
        self._tail = max(tail_bytes, 1)
        self.received = 0  # every byte written to the file so far, dropped ones included

    def write(self, data: bytes) -> None:
        """Append output: into the head while it has room, then into the tail ring."""
        if self._fd < 0 or not data:
            return
        if self.received < self._head:
            room = self._head - self.received
            _write_at(self._fd, data[:room], self.received)
            self.received += min(room, len(data))
            data = data[room:]
            if not data:
                return
        beyond = self.received - self._head  # bytes that went into the ring before these
        self.received += len(data)
        if len(data) > self._tail:
            beyond += len(data) - self._tail
            data = data[-self._tail :]
        at = beyond % self._tail
        first = data[: self._tail - at]
        _write_at(self._fd, first, self._head + at)
        if len(first) < len(data):
            _write_at(self._fd, data[len(first) :], self._head)

    @property
    def dropped(self) -> int:
        """Bytes of the middle that are not in the file."""
        return max(0, self.received - self._head - self._tail)

    def close(self) -> None:
        """Put the tail in order behind a marker of what was dropped, and close the file."""
        if self._fd < 0:
            return
        try:
            if self.dropped:
                self._order_tail()
        finally:
            os.close(self._fd)
            self._fd = -1

    def _order_tail(self) -> None:
        at = (self.received - self._head) % self._tail
        ring = os.pread(self._fd, self._tail, self._head)
        marker = (
            f"\n\n[... {format_size(self.dropped)} ({self.dropped} bytes) of output dropped here: "
            f"the file keeps the first {format_size(self._head)} and the last "
            f"{format_size(self._tail)} ...]\n\n"
        ).encode()
        _write_at(self._fd, marker + ring[at:] + ring[:at], self._head)
        os.ftruncate(self._fd, self._head + len(marker) + len(ring))


def _write_at(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view = view[written:]
        offset += written
