"""Durable, append-only writes of session files.

Sessions hold private conversations, so files are created ``0600`` and the directories this
module creates ``0700``.

**Concurrent appenders.** Every append is one ``write()`` of whole lines to a descriptor opened
with ``O_APPEND``, made while holding an exclusive ``flock`` on the file. ``O_APPEND`` puts each
write at the current end of file; the lock makes the rare short write (a full disk, a signal)
safe too, because the loop that finishes it cannot be interleaved with another process's line.
Under the same lock the writer checks that the file ends with LF: a writer killed mid-line
leaves a partial line, and the next append first ends it, so the fragment stays one skipped
line instead of corrupting the new entry.

**Durability.** An append returns only after the kernel has the bytes, so they survive the
process dying. :meth:`SessionFileWriter.sync` adds ``fsync`` (the agent calls it at the end of
every turn and before exit; :meth:`~SessionFileWriter.close` calls it too) so they also survive
a power cut. Whole-file writes (a new fork, a migrated file) go to a temporary file that is
fsynced and renamed over the target, so a crash leaves either the old or the new file.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: O_APPEND alone, no advisory lock
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "SESSION_DIR_MODE",
    "SESSION_FILE_MODE",
    "SessionFileWriter",
    "ensure_private_dir",
    "keep_aside",
    "write_file_atomically",
]

SESSION_FILE_MODE = 0o600
SESSION_DIR_MODE = 0o700


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` and its missing parents with mode ``0700``; existing dirs are left alone."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, SESSION_DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(directory, SESSION_DIR_MODE)  # the umask may have removed nothing or more


def _fsync_dir(path: Path) -> None:
    # Makes a new or renamed directory entry durable; not possible on every platform.
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_file_atomically(path: Path, data: bytes) -> None:
    """Replace (or create) ``path`` with ``data``: temp file, fsync, rename, fsync the dir."""
    ensure_private_dir(path.parent)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, SESSION_FILE_MODE)
        _write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(temp)
        raise
    os.close(fd)
    os.replace(temp, path)
    _fsync_dir(path.parent)


def keep_aside(path: Path) -> Path:
    """Move a damaged file to ``<name>.corrupt-<n>`` (first free ``n`` from 1) and return it.

    A hard link plus unlink never overwrites an existing copy, even if two processes recover
    the same file at once; filesystems without hard links fall back to a checked rename.
    """
    n = 1
    while True:
        target = path.with_name(f"{path.name}.corrupt-{n}")
        try:
            os.link(path, target)
        except FileExistsError:
            n += 1
            continue
        except OSError:
            if target.exists():
                n += 1
                continue
            os.rename(path, target)
            break
        os.unlink(path)
        break
    _fsync_dir(path.parent)
    return target


class SessionFileWriter:
    """Appends whole lines to one session file (see the module docstring for the guarantees).

    The descriptor is opened on the first append and kept until :meth:`close`.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._dir_dirty = False  # we created the file: its directory entry needs an fsync
        self._finalizer: weakref.finalize[[int], SessionFileWriter] | None = None

    def _open(self) -> int:
        if self._fd is None:
            ensure_private_dir(self.path.parent)
            existed = self.path.exists()
            # O_RDWR, not O_WRONLY: the partial-line check reads the last byte.
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            self._fd = os.open(self.path, flags, SESSION_FILE_MODE)
            self._dir_dirty = not existed
            # A writer dropped without close() must not leak its descriptor.
            self._finalizer = weakref.finalize(self, os.close, self._fd)
        return self._fd

    def append(self, data: bytes) -> None:
        """Append ``data`` (one or more complete lines) in a single locked write."""
        if not data:
            return
        fd = self._open()
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # end a line a crashed writer left unfinished
            _write_all(fd, data)
        finally:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def sync(self) -> None:
        """Force everything appended so far to stable storage (``fsync``)."""
        if self._fd is None:
            return
        os.fsync(self._fd)
        if self._dir_dirty:
            _fsync_dir(self.path.parent)
            self._dir_dirty = False

    def close(self) -> None:
        """:meth:`sync`, then release the descriptor. Appending again reopens the file."""
        if self._fd is None:
            return
        try:
            self.sync()
        finally:
            if self._finalizer is not None:
                self._finalizer()  # closes the descriptor exactly once
                self._finalizer = None
            self._fd = None
