"""``SessionManager``: the session the agent talks to — one file, one tree, one leaf.

Every ``append_*`` creates a child of the current leaf and makes it the new leaf. Nothing is
written until the session holds an assistant message (a session the user abandons before any
answer leaves no file); then the buffered entries are written in order, and from then on each
entry is on disk (kernel-durable) before its ``append_*`` returns. Call :meth:`SessionManager.sync`
at the end of a turn and :meth:`~SessionManager.close` before exit to ``fsync``.

A write that fails (a full disk, a read-only file, a directory that cannot be created) does not
end the run: the manager stops writing, keeps the session in memory, and reports it once as a
``write_failed`` notice (:attr:`SessionManager.write_error` says why). Repairs made when a file
is opened, and entries the context leaves out, are reported the same way
(:mod:`knightcode._session.notices`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Self

from knightcode._session import jsonl
from knightcode._session.appending import EntryAppender
from knightcode._session.context import SessionContext, build_session_context
from knightcode._session.errors import EntryNotFoundError
from knightcode._session.file_store import SessionFileWriter
from knightcode._session.forking import branched_entries, fork_session_file
from knightcode._session.ids import iso_timestamp, new_session_id
from knightcode._session.listing import find_most_recent_session
from knightcode._session.loading import LoadReport, open_session_file
from knightcode._session.location import session_file_name
from knightcode._session.notices import (
    NoticeListener,
    SessionNotice,
    load_notices,
    skipped_entry_notice,
    write_failed_notice,
)
from knightcode._session.projection import SessionProjection, project_path
from knightcode._session.tokens import ContextUsageEstimate, estimate_context_tokens
from knightcode._session.tree import EntryIndex, SessionTreeNode
from knightcode._types.entries import SessionEntry, SessionHeader, make_header

__all__ = ["SessionManager"]


class SessionManager(EntryAppender):
    """A conversation tree stored as an append-only JSONL file (or only in memory).

    Build one with :meth:`create`, :meth:`open`, :meth:`continue_recent`, :meth:`in_memory`
    (``--no-session``) or :meth:`fork_from`. Reading methods return the stored dicts themselves:
    treat them as read-only.
    """

    def __init__(
        self, cwd: str, session_dir: Path | None, session_file: Path | None, *, persist: bool
    ) -> None:
        """Prefer the class methods; this opens ``session_file`` or starts a new session."""
        self._cwd = cwd
        self._session_dir = session_dir
        self._persist = persist
        self._file: Path | None = None
        self._writer: SessionFileWriter | None = None
        self._header: SessionHeader = make_header("", "", cwd)
        self._index = EntryIndex()
        self._persisted = 0  # lines (header + entries) of this session already in the file
        self.load_report = LoadReport()
        """What loading the current file found (skipped lines, migration, kept-aside copy)."""
        self.write_error: OSError | None = None
        """Why the session stopped being written, if it did (it goes on in memory)."""
        self._notices: list[SessionNotice] = []  # made before anyone listens
        self._listener: NoticeListener | None = None
        self._noticed_entries: set[str] = set()  # entries already reported as left out
        # Damaged message entries by id, found by the loader; None: check them in the context.
        # Entries appended later are the agent's own, well-formed by construction.
        self._message_problems: dict[str, str] | None = {}
        if session_file is not None:
            self.set_session_file(session_file)
        else:
            self.new_session()

    # --- construction -------------------------------------------------------------------

    @classmethod
    def create(cls, cwd: str | os.PathLike[str], session_dir: Path) -> SessionManager:
        """A new session for ``cwd`` stored in ``session_dir`` (see ``resolve_session_dir``)."""
        return cls(os.fspath(cwd), Path(session_dir), None, persist=True)

    @classmethod
    def open(cls, path: str | os.PathLike[str], session_dir: Path | None = None) -> SessionManager:
        """Open a session file (created lazily if missing), repairing or migrating it if needed.

        The working directory is taken from the file's header (the process cwd if it has none);
        ``session_dir`` (default: the file's directory) is where new sessions and forks go.
        """
        file = Path(path).absolute()
        manager = cls(os.getcwd(), session_dir or file.parent, None, persist=True)
        manager.set_session_file(file, adopt_cwd=True)
        return manager

    @classmethod
    def continue_recent(cls, cwd: str | os.PathLike[str], session_dir: Path) -> SessionManager:
        """Open the most recently modified session in ``session_dir``, or create a new one."""
        recent = find_most_recent_session(Path(session_dir))
        return cls(os.fspath(cwd), Path(session_dir), recent, persist=True)

    @classmethod
    def in_memory(cls, cwd: str | os.PathLike[str] | None = None) -> SessionManager:
        """A session that is never written (``--no-session``)."""
        return cls(os.fspath(cwd) if cwd is not None else os.getcwd(), None, None, persist=False)

    @classmethod
    def fork_from(
        cls, source: str | os.PathLike[str], target_cwd: str | os.PathLike[str], session_dir: Path
    ) -> SessionManager:
        """Copy every entry of another session (e.g. another project's) into a new file.

        :raises SessionFileError: if ``source`` is missing, empty or has no valid header
        """
        file = fork_session_file(source, os.fspath(target_cwd), Path(session_dir))
        return cls(os.fspath(target_cwd), Path(session_dir), file, persist=True)

    def new_session(
        self, *, id: str | None = None, parent_session: str | None = None
    ) -> Path | None:
        """Start an empty session (own id unless ``id`` is given); returns its future file."""
        self._close_writer()
        timestamp = iso_timestamp()
        self._header = make_header(id or new_session_id(), timestamp, self._cwd, parent_session)
        self._index = EntryIndex()
        self._message_problems = {}
        self._persisted = 0
        self.load_report = LoadReport()
        self._forget_file_state()
        self._file = None
        if self._persist and self._session_dir is not None:
            self._file = self._session_dir / session_file_name(timestamp, self._header["id"])
        return self._file

    def set_session_file(self, path: str | os.PathLike[str], *, adopt_cwd: bool = False) -> None:
        """Switch to ``path`` (resume): load it, or start a new session that will be written there.

        :param adopt_cwd: take the working directory from the file's header
        """
        self._close_writer()
        self._forget_file_state()
        file = Path(path).absolute()
        loaded = open_session_file(
            file, lambda: make_header(new_session_id(), iso_timestamp(), self._cwd)
        )
        if loaded.header is None:  # no such file yet: a new session with this explicit path
            self.new_session()
            self._file = file
            return
        self._header = loaded.header
        self._index = EntryIndex(loaded.entries, loaded.by_id, loaded.labels)
        self._message_problems = loaded.message_problems
        self._persisted = 1 + len(loaded.entries)
        self.load_report = loaded.report
        self._file = file
        for notice in load_notices(file, loaded.report):
            self._notify(notice)
        if adopt_cwd and isinstance(loaded.header.get("cwd"), str):
            self._cwd = loaded.header["cwd"]

    # --- state ----------------------------------------------------------------------------

    @property
    def cwd(self) -> str:
        """The working directory recorded for this session."""
        return self._cwd

    @property
    def session_dir(self) -> Path | None:
        """Where new sessions and forks are written (``None`` in memory)."""
        return self._session_dir

    @property
    def session_id(self) -> str:
        """The id in the header."""
        return self._header["id"]

    @property
    def session_file(self) -> Path | None:
        """The file (which may not exist yet), or ``None`` in memory."""
        return self._file

    @property
    def is_persisted(self) -> bool:
        """Whether this session is written to a file at all."""
        return self._persist

    @property
    def header(self) -> SessionHeader:
        """The header line."""
        return self._header

    @property
    def leaf_id(self) -> str | None:
        """The current leaf; ``None`` before the first entry or after :meth:`reset_leaf`."""
        return self._index.leaf_id

    @property
    def session_name(self) -> str | None:
        """The name given by the latest ``session_info`` entry with a non-empty name."""
        for entry in reversed(self._index.entries):
            if entry["type"] == "session_info" and entry.get("name"):
                return str(entry.get("name"))
        return None

    # --- notices ----------------------------------------------------------------------------

    @property
    def notice_listener(self) -> NoticeListener | None:
        """Who hears about repairs and failed writes (see :meth:`set_notice_listener`)."""
        return self._listener

    def set_notice_listener(self, listener: NoticeListener | None) -> None:
        """Send every notice to ``listener``: those made so far at once, later ones as they
        happen. Until a listener is set, notices are kept.
        """
        self._listener = listener
        if listener is not None:
            pending, self._notices = self._notices, []
            for notice in pending:
                listener(notice)

    def _forget_file_state(self) -> None:
        # Another file: it may be writable, and its entries were not reported yet.
        self.write_error = None
        self._noticed_entries = set()

    def _notify(self, notice: SessionNotice) -> None:
        if self._listener is not None:
            self._listener(notice)
        else:
            self._notices.append(notice)

    # --- writing (the append_* methods are in EntryAppender) ---------------------------------

    def _append(self, entry: SessionEntry) -> str:
        self._index.add(entry)
        self._write_pending()
        return entry["id"]

    def _write_pending(self) -> None:
        # The reference's lazy rule: nothing reaches the file before the first assistant
        # message; then every line not yet written (the header is line 0) goes out in one
        # append, in order. _persisted counts lines, not entries, so a header written early
        # (a repaired file) or entries already loaded are never written twice.
        if (
            not self._persist
            or self._file is None
            or self.write_error is not None
            or not self._index.has_assistant
        ):
            return
        entries = self._index.entries
        total = 1 + len(entries)
        if self._persisted >= total:
            return
        lines = []
        if self._persisted == 0:
            lines.append(jsonl.encode_line(self._header))
        lines.extend(jsonl.encode_line(entry) for entry in entries[max(self._persisted - 1, 0) :])
        if self._writer is None:
            self._writer = SessionFileWriter(self._file)
        try:
            self._writer.append(b"".join(lines))
        except OSError as error:
            self._write_failed(error)
            return
        self._persisted = total

    def _write_failed(self, error: OSError) -> None:
        # Stop writing for good: a later append could land after a gap and break the chain.
        # The entries stay in memory, so the run goes on; the user hears about it once.
        self.write_error = error
        writer, self._writer = self._writer, None
        if writer is not None:
            # The descriptor is released anyway; the first error is the one to report.
            with contextlib.suppress(OSError):
                writer.close()
        assert self._file is not None
        self._notify(write_failed_notice(self._file, error))

    # --- moving the leaf ----------------------------------------------------------------

    def branch(self, entry_id: str) -> None:
        """Move the leaf to ``entry_id``; the next append starts a new branch there."""
        if entry_id not in self._index.by_id:
            raise EntryNotFoundError(entry_id)
        self._index.leaf_id = entry_id

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry; the next append is a new root."""
        self._index.leaf_id = None

    # --- reading ----------------------------------------------------------------------------

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        """The entry with ``entry_id``, or ``None``."""
        return self._index.by_id.get(entry_id)

    def get_leaf_entry(self) -> SessionEntry | None:
        """The current leaf entry, or ``None``."""
        leaf = self._index.leaf_id
        return self._index.by_id.get(leaf) if leaf is not None else None

    def get_entries(self) -> list[SessionEntry]:
        """Every entry in file order (a new list; the header excluded)."""
        return list(self._index.entries)

    def get_children(self, parent_id: str) -> list[SessionEntry]:
        """Direct children of ``parent_id``."""
        return self._index.children(parent_id)

    @property
    def labels(self) -> Mapping[str, str]:
        """The current label of each labelled entry (``/tree`` shows them)."""
        return self._index.labels

    @property
    def label_timestamps(self) -> Mapping[str, str]:
        """When each current label was set."""
        return self._index.label_timestamps

    def get_label(self, entry_id: str) -> str | None:
        """The current label of ``entry_id``, if any."""
        return self._index.labels.get(entry_id)

    def get_branch(self, from_id: str | None = None) -> list[SessionEntry]:
        """Raw entries from the root to ``from_id`` (default: the leaf)."""
        return self._index.path(from_id if from_id is not None else self._index.leaf_id)

    def get_tree(self) -> list[SessionTreeNode]:
        """All entries as a forest, children oldest first, with labels."""
        return self._index.tree()

    def build_context(self) -> SessionContext:
        """What the model sees for the current leaf (``context_edit`` edits applied).

        Entries left out because their fields are damaged are reported once each, as notices.
        """
        index = self._index
        context = build_session_context(
            index.entries, index.leaf_id, index.by_id, self._message_problems
        )
        for skipped in context.skipped:
            if skipped.entry_id not in self._noticed_entries:
                self._noticed_entries.add(skipped.entry_id)
                self._notify(skipped_entry_notice(self._file, skipped))
        return context

    def projection(self) -> SessionProjection:
        """The current branch with ``context_edit`` edits applied (for cut points and estimates)."""
        return project_path(self.get_branch())

    def estimate_context_tokens(self) -> ContextUsageEstimate:
        """Estimate the size of :meth:`build_context`'s messages."""
        return estimate_context_tokens(self.build_context().messages)

    # --- forking --------------------------------------------------------------------------

    def create_branched_session(self, leaf_id: str) -> Path | None:
        """Continue in a new session holding only the path root→``leaf_id`` (labels recreated).

        The new header's ``parentSession`` names the current file. Like any new session, the
        file is written only once it holds an assistant message. Returns the new file's path
        (``None`` in memory).
        """
        entries = branched_entries(self._index, leaf_id)
        timestamp = iso_timestamp()
        parent = os.fspath(self._file) if self._persist and self._file is not None else None
        header = make_header(new_session_id(), timestamp, self._cwd, parent)
        self._close_writer()
        self._header = header
        self._index = EntryIndex(entries)
        self._persisted = 0
        self.load_report = LoadReport()
        self._forget_file_state()
        self._file = None
        if self._persist and self._session_dir is not None:
            self._file = self._session_dir / session_file_name(timestamp, header["id"])
            self._write_pending()  # at once if the path holds an assistant message
        return self._file

    # --- durability -----------------------------------------------------------------------

    def sync(self) -> None:
        """``fsync`` everything written so far (call at the end of every turn)."""
        if self._writer is not None:
            try:
                self._writer.sync()
            except OSError as error:
                self._write_failed(error)

    def close(self) -> None:
        """:meth:`sync` and release the file. Entries held back because the session has no
        assistant message yet are *not* written, as in the reference.
        """
        self._close_writer()

    def _close_writer(self) -> None:
        if self._writer is not None:
            try:
                self._writer.close()
            except OSError as error:
                self._write_failed(error)
            self._writer = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
