"""Errors of the session store, each with a message that says what went wrong."""

from __future__ import annotations

from knightcode._errors import KnightcodeError, UsageError

__all__ = ["EntryNotFoundError", "SessionFileError", "SessionPathError"]


class EntryNotFoundError(KnightcodeError, LookupError):
    """An operation named an entry id that the session does not hold."""

    def __init__(self, entry_id: str) -> None:
        self.entry_id = entry_id
        super().__init__(f"Entry {entry_id} not found")


class SessionFileError(KnightcodeError):
    """A session file cannot be used for the requested operation (e.g. forking an empty file)."""


class SessionPathError(SessionFileError, UsageError):
    """A path given for sessions cannot be used: a session "file" that is a directory, a
    device, a FIFO or a file no line of which is a session entry (it is left untouched), or a
    session directory that is a file (exit code 2).
    """

    exit_code = 2
