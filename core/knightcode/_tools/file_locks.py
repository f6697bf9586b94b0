"""Per-file serialisation of edits and writes.

Tool calls of one assistant message run in parallel; two ``edit`` calls on the same file would
otherwise both read the old content and the second write would undo the first. Calls on
different files still run side by side.
"""

from __future__ import annotations

import asyncio
import posixpath
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["file_mutation_lock"]

# key -> (lock, number of holders and waiters). Entries are dropped when unused, so a lock never
# outlives the event loop it was first used on (each test runs its own loop).
_locks: dict[str, tuple[asyncio.Lock, int]] = {}


def _key(path: str) -> str:
    # Normalised, not realpath(): resolving links would touch the local filesystem, and the
    # path may live in a sandbox backend. Two link names of one file are not serialised.
    return posixpath.normpath(path)


@asynccontextmanager
async def file_mutation_lock(path: str) -> AsyncIterator[None]:
    """Hold the lock of the absolute ``path`` while reading and rewriting the file."""
    key = _key(path)
    lock, users = _locks.get(key, (asyncio.Lock(), 0))
    _locks[key] = (lock, users + 1)
    try:
        async with lock:
            yield
    finally:
        lock, users = _locks[key]
        if users <= 1:
            del _locks[key]
        else:
            _locks[key] = (lock, users - 1)
