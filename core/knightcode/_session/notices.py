"""What the session store tells the user: repairs it made and writes that failed.

A repair is never silent. Each notice is one line on stderr and, in JSON and RPC modes, one
record on stdout (``docs/json.md``): a damaged header moved aside, unreadable lines skipped, an
entry left out of the context because its fields are damaged, or a session that can no longer
be written (the run goes on in memory). The session manager makes them; the mode that runs
decides where they go (:meth:`SessionManager.set_notice_listener`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from knightcode._session.context import SkippedEntry
from knightcode._session.loading import LoadReport

__all__ = [
    "NoticeListener",
    "SessionNotice",
    "load_notices",
    "skipped_entry_notice",
    "write_failed_notice",
]

Problem = Literal["invalid_header", "skipped_lines", "invalid_entry", "write_failed"]


@dataclass(frozen=True, slots=True)
class SessionNotice:
    """One thing the user must hear about a session file.

    :ivar problem: ``invalid_header`` (moved aside, new session), ``skipped_lines`` (unreadable
        lines left out), ``invalid_entry`` (an entry left out of the context) or
        ``write_failed`` (the session is no longer saved)
    :ivar file: the session file (``None`` for a session kept in memory)
    :ivar message: the sentence for a person, without the ``knightcode: …:`` prefix
    :ivar moved_to: where the damaged original was kept
    :ivar skipped_lines: how many lines were skipped
    :ivar entry_id: the entry left out
    :ivar error: why the write failed (``strerror``)
    """

    problem: Problem
    file: Path | None
    message: str
    moved_to: Path | None = None
    skipped_lines: int = 0
    entry_id: str | None = None
    error: str | None = None

    @property
    def line(self) -> str:
        """The stderr line: a warning for a repair, an error for a failed write."""
        level = "error" if self.problem == "write_failed" else "warning"
        return f"knightcode: {level}: {self.message}"

    def record(self) -> dict[str, object]:
        """The JSON/RPC record: ``session_repaired`` or ``session_write_failed``."""
        kind = "session_write_failed" if self.problem == "write_failed" else "session_repaired"
        record: dict[str, object] = {"type": kind}
        if kind == "session_repaired":
            record["problem"] = self.problem
        record["file"] = os.fspath(self.file) if self.file is not None else None
        if self.moved_to is not None:
            record["movedTo"] = os.fspath(self.moved_to)
        if self.skipped_lines:
            record["skippedLines"] = self.skipped_lines
        if self.entry_id is not None:
            record["entryId"] = self.entry_id
        if self.error is not None:
            record["error"] = self.error
        record["message"] = self.message
        return record


NoticeListener = Callable[[SessionNotice], None]
"""Receives each notice once, in order."""


def _lines(count: int) -> str:
    return f"{count} unreadable line{'s' if count != 1 else ''}"


def load_notices(file: Path, report: LoadReport) -> list[SessionNotice]:
    """The notices for what opening ``file`` found and repaired (none for a clean file)."""
    if report.invalid_header and report.corrupt_copy is not None:
        problem = report.header_problem or "its header is damaged"
        return [
            SessionNotice(
                "invalid_header",
                file,
                f"session {file}: {problem}; moved it to {report.corrupt_copy} and started a "
                "new session in its place",
                moved_to=report.corrupt_copy,
            )
        ]
    if not report.skipped_lines:
        return []
    if report.corrupt_copy is not None:
        where = f"the file was rewritten and the original kept as {report.corrupt_copy}"
    else:
        where = "they stay in the file" if report.skipped_lines > 1 else "it stays in the file"
    return [
        SessionNotice(
            "skipped_lines",
            file,
            f"session {file}: skipped {_lines(report.skipped_lines)}; {where}",
            moved_to=report.corrupt_copy,
            skipped_lines=report.skipped_lines,
        )
    ]


def skipped_entry_notice(file: Path | None, skipped: SkippedEntry) -> SessionNotice:
    """The notice for an entry the context left out (it stays in the file)."""
    where = f"session {file}" if file is not None else "session"
    return SessionNotice(
        "invalid_entry",
        file,
        f"{where}: entry {skipped.entry_id} left out of the context: {skipped.problem} "
        "(kept in the file)",
        entry_id=skipped.entry_id,
    )


def write_failed_notice(file: Path, error: OSError) -> SessionNotice:
    """The notice for a session that can no longer be written."""
    reason = error.strerror or str(error)
    if error.filename is not None and os.fspath(error.filename) != os.fspath(file):
        reason += f" ({os.fsdecode(error.filename)})"  # e.g. the directory it could not create
    return SessionNotice(
        "write_failed",
        file,
        f"cannot write the session to {file}: {reason}; the session goes on without being saved",
        error=reason,
    )
