"""Reading session files: tolerant parsing, repair, and migration to version 3.

Loading never drops a valid entry because another line is damaged:

* lines are split on LF bytes only (U+2028 inside a string is not a line break), one trailing CR
  is tolerated, blank lines are ignored, and every line that is not a JSON object with a string
  ``type`` is skipped and counted — a truncated last line (a crash mid-write) is just such a line,
  and so is a line nested deeper than the JSON decoder's recursion limit (about 900 levels);
* a missing or invalid header makes the session empty, and :func:`open_session_file` then moves
  the damaged original aside as ``<name>.corrupt-<n>`` before writing a fresh header — unless no
  line of the file looks like a session entry: such a file (notes, a script) is never taken over;
* a header whose ``version`` is not a known number (``"3"``, ``99``, ``null``) is such an invalid
  header: the file is kept aside as it is, never migrated by guesswork;
* version 1 and 2 files are migrated (ids and parent links assigned, ``firstKeptEntryIndex`` →
  ``firstKeptEntryId`` counting the header as index 0, role ``hookMessage`` → ``custom``) and
  rewritten atomically; entries without an id are given one and chained to the previous entry.
  If such a rewrite would lose skipped lines, the original is kept aside first.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import BinaryIO, cast

from knightcode._session import jsonl
from knightcode._session.bulk import bulk_allocation
from knightcode._session.errors import SessionFileError, SessionPathError
from knightcode._session.file_store import keep_aside, write_file_atomically
from knightcode._session.ids import new_entry_id
from knightcode._session.jsonl import JsonObject, JsonValue
from knightcode._session.validation import message_problem, plain_blocks
from knightcode._types.entries import (
    CURRENT_SESSION_VERSION,
    FileEntry,
    LabelEntry,
    SessionEntry,
    SessionHeader,
)

__all__ = [
    "LoadReport",
    "LoadedSession",
    "check_session_path",
    "load_entries_from_file",
    "migrate_session_entries",
    "open_session_file",
    "read_session_file",
]

_BOM = b"\xef\xbb\xbf"
_BATCH_LINES = 256
_OBJECT_ENDS = (b"}\n", b"}\r\n", b"}")
_SHARED = {  # type and role names, one string object each (see _keep)
    name: name
    for name in (
        *("message", "thinking_level_change", "model_change", "compaction", "branch_summary"),
        *("custom", "custom_message", "label", "session_info", "context_edit"),
        *("user", "assistant", "toolResult", "bashExecution"),
        *("text", "thinking", "toolCall", "image"),
    )
}
_FREEZE_THRESHOLD = 100_000  # tracked objects allocated by one load (~10 000 entries)


@dataclass(slots=True)
class LoadReport:
    """What loading a file found and did (for a notice to the user, or a test).

    :ivar skipped_lines: non-blank lines that were not usable entries
    :ivar truncated_tail: the last line was unfinished (no LF) and unparsable: a crash mid-write
    :ivar invalid_header: the file had content but no valid header, so the session is empty
    :ivar header_problem: what was wrong with the header, for a notice (``None`` when valid)
    :ivar not_a_session: no line looked like a session entry (an object with a string ``type``
        and a string ``id``): the file is something else, not a damaged session
    :ivar migrated_from: the version the file was migrated from, if it was
    :ivar repaired_ids: entries that had no id and were given one
    :ivar corrupt_copy: where the damaged original was kept aside, if it was
    :ivar rewritten: whether the file was rewritten (migration, repair, or a fresh header)
    """

    skipped_lines: int = 0
    truncated_tail: bool = False
    invalid_header: bool = False
    header_problem: str | None = None
    not_a_session: bool = False
    migrated_from: int | None = None
    repaired_ids: int = 0
    corrupt_copy: Path | None = None
    rewritten: bool = False


@dataclass(slots=True)
class LoadedSession:
    """A parsed session file: its header (``None`` if missing or invalid) and entries.

    :ivar by_id: the entries by id (the last of a duplicated id), and
    :ivar labels: the ``label`` entries in order, both gathered while parsing, when each entry
        was in the CPU cache anyway; ``None`` when migration or repair changed ids
    :ivar message_problems: what is wrong with each damaged ``message`` entry, by id (see
        :func:`~knightcode._session.validation.message_problem`), also checked while parsing;
        ``None`` when ids changed
    """

    header: SessionHeader | None
    entries: list[SessionEntry] = field(default_factory=list)
    report: LoadReport = field(default_factory=LoadReport)
    blank: bool = True  # no non-blank line at all (missing or empty file)
    by_id: dict[str, SessionEntry] | None = None
    labels: list[LabelEntry] | None = None
    message_problems: dict[str, str] | None = None


def _is_header(value: JsonObject) -> bool:
    return value.get("type") == "session" and isinstance(value.get("id"), str)


def read_session_file(path: Path) -> LoadedSession:
    """Parse ``path`` into header and entries, migrating in memory; writes nothing.

    A missing file reads as blank. See :func:`open_session_file` for the repairs on disk.
    """
    report = LoadReport()
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below; binary lines split on LF only
    except FileNotFoundError:
        return LoadedSession(None, [], report, blank=True)
    # ~10 containers per entry: see bulk.py. A large result is frozen so later collections do
    # not rescan it.
    parsed = _Parsed()
    with handle, bulk_allocation(freeze_above=_FREEZE_THRESHOLD):
        _parse_file(handle, report, parsed)
    entries = parsed.values
    problem = _header_problem(entries)
    if problem is not None:
        # The reference rule: the first parsed line must be a header, or the session is empty.
        report.invalid_header = not parsed.blank
        if not parsed.blank:
            report.header_problem = problem
            report.not_a_session = not any(type(value.get("id")) is str for value in entries)
        return LoadedSession(None, [], report, blank=parsed.blank)
    header = entries[0]
    del entries[0]
    report.skipped_lines += parsed.later_headers  # concatenated files: not an entry
    # The trusted boundary: every value is a JSON object with a string type (and the header has
    # a string id); the rest of each entry's shape is what the file promises. Readers that may
    # meet a damaged file read optional fields with .get().
    loaded = LoadedSession(
        cast(SessionHeader, header), cast(list[SessionEntry], entries), report, blank=False
    )
    version = _version(header)
    assert version is not None  # checked by _header_problem
    if version < CURRENT_SESSION_VERSION:
        _migrate(header, entries, version)
        report.migrated_from = version
    elif not parsed.missing_ids:
        header_id = header["id"]
        if type(header_id) is str and parsed.by_id.get(header_id) is header:
            del parsed.by_id[header_id]  # the header was indexed as the first value
        loaded.by_id = cast(dict[str, SessionEntry], parsed.by_id)  # as the entries above
        loaded.labels = cast(list[LabelEntry], parsed.labels)
        loaded.message_problems = parsed.message_problems
    if parsed.missing_ids or report.migrated_from is not None:
        report.repaired_ids = _repair_missing_ids(entries)
    return loaded


@dataclass(slots=True)
class _Parsed:
    # What _parse_file gathers: the objects with a string type, in order, except "session"
    # objects after the first value (counted); indexes of them; whether the file was blank.
    values: list[JsonObject] = field(default_factory=list)
    later_headers: int = 0
    blank: bool = True
    by_id: dict[str, JsonObject] = field(default_factory=dict)
    labels: list[JsonObject] = field(default_factory=list)
    missing_ids: bool = False
    message_problems: dict[str, str] = field(default_factory=dict)


def _parse_file(handle: BinaryIO, report: LoadReport, parsed: _Parsed) -> None:
    first = True
    while True:
        batch = list(islice(handle, _BATCH_LINES))  # binary iteration splits on b"\n" only
        if not batch:
            break
        if first:
            first = False
            batch[0] = batch[0].removeprefix(_BOM)
        lines = [line for line in batch if not line.isspace()]
        if not lines:
            continue
        parsed.blank = False
        values = _parse_batch(lines)
        if values is None:
            values = _parse_each(lines, report)
        else:
            report.truncated_tail = False
        _keep(values, parsed, report)


def _keep(values: list[JsonValue], parsed: _Parsed, report: LoadReport) -> None:
    # The objects with a string type are kept and indexed here, right after their batch was
    # parsed: a later pass over 100 000 entries costs a cache miss per entry. The strings every
    # entry repeats are shared (type and role names; a parent id is its parent's id), so the
    # decoder's copies are freed for the next batch to reuse: ~20 MB less on a 100 MB session.
    append, by_id, shared = parsed.values.append, parsed.by_id, _SHARED
    problems, plain = parsed.message_problems, plain_blocks
    for value in values:
        if type(value) is not dict or type(kind := value.get("type")) is not str:
            report.skipped_lines += 1
            continue
        if kind == "session" and parsed.values:
            parsed.later_headers += 1
            continue
        append(value)
        value["type"] = kind = shared.get(kind, kind)
        entry_id = value.get("id")
        if type(entry_id) is str:
            by_id[entry_id] = value
        else:
            parsed.missing_ids = True
        parent_id = value.get("parentId")
        if type(parent_id) is str and (parent := by_id.get(parent_id)) is not None:
            value["parentId"] = parent["id"]
        if kind == "message":
            # Checked here, while the entry's objects are in the CPU cache (LoadedSession):
            # the common shapes inline, any other by the full check.
            message = value.get("message")
            if type(message) is dict and type(role := message.get("role")) is str:
                message["role"] = role = shared.get(role, role)
                content = message.get("content")
                if type(content) is list:
                    if plain(content):
                        continue
                elif type(content) is str and role == "user":
                    continue
            problem = message_problem(message)
            if problem is not None and type(entry_id) is str:
                problems[entry_id] = problem
        elif kind == "label":
            parsed.labels.append(value)


def _parse_batch(lines: list[bytes]) -> list[JsonValue] | None:
    # Fast path: parse a batch of lines as one JSON array. One decoder call shares key strings
    # across the batch (the decoder memoises keys only within a call), which saves ~100 MB on a
    # 100 MB file, and saves the per-call overhead. Only lines that look like whole objects
    # qualify, and the element count must match, else the batch is parsed line by line.
    if not all(line.startswith(b"{") and line.endswith(_OBJECT_ENDS) for line in lines):
        return None
    ascii_lines = [line.isascii() for line in lines]
    others = ascii_lines.count(False)
    if others == 0 or others == len(lines):
        return _parse_array(lines)
    # ASCII lines and the others as two arrays: one emoji would make the whole batch's text
    # 4 bytes per character, and every string cut from it slower to make (~8% of the load).
    ascii_values = _parse_array(
        [line for line, plain in zip(lines, ascii_lines, strict=True) if plain]
    )
    other_values = _parse_array(
        [line for line, plain in zip(lines, ascii_lines, strict=True) if not plain]
    )
    if ascii_values is None or other_values is None:
        return None
    next_ascii, next_other = iter(ascii_values).__next__, iter(other_values).__next__
    return [next_ascii() if plain else next_other() for plain in ascii_lines]


def _parse_array(lines: list[bytes]) -> list[JsonValue] | None:
    try:
        values = jsonl.parse_line(b"".join((b"[", b",".join(lines), b"]")))
    except ValueError:  # some line is not JSON (or nested too deeply)
        return None
    if type(values) is not list or len(values) != len(lines):
        return None
    return values


def _parse_each(lines: list[bytes], report: LoadReport) -> list[JsonValue]:
    values: list[JsonValue] = []
    for line in lines:
        try:
            values.append(jsonl.parse_line(line))  # tolerates the trailing LF and one CR
        except ValueError:  # not JSON, or nested beyond the decoder's limit
            report.skipped_lines += 1
            report.truncated_tail = not line.endswith(b"\n")
            continue
        report.truncated_tail = False
    return values


_KNOWN_VERSIONS = range(1, CURRENT_SESSION_VERSION + 1)


def _version(header: JsonObject) -> int | None:
    # No version field: a version 1 file (the field came with version 2). Anything else that is
    # not a known version number is unknown: None.
    if "version" not in header:
        return 1
    version = header["version"]
    return version if type(version) is int and version in _KNOWN_VERSIONS else None


def _header_problem(values: list[JsonObject]) -> str | None:
    if not values or not _is_header(values[0]):
        return "the first line is not a session header"
    if _version(values[0]) is None:
        return f"its header has an unknown version {jsonl.dumps(values[0]['version'])}"
    return None


def _migrate(header: JsonObject, entries: list[JsonObject], version: int) -> None:
    if version < 2:
        # v1 -> v2: a linear chain of fresh ids. firstKeptEntryIndex indexes the file's entry
        # list *including the header*, so index i is entries[i - 1] here.
        taken: set[str] = set()
        previous: str | None = None
        for entry in entries:
            entry_id = new_entry_id(taken)
            taken.add(entry_id)
            entry["id"] = entry_id
            entry["parentId"] = previous
            previous = entry_id
        for entry in entries:
            if entry["type"] == "compaction" and "firstKeptEntryIndex" in entry:
                index = entry.pop("firstKeptEntryIndex")
                if type(index) is int and 1 <= index <= len(entries):
                    entry["firstKeptEntryId"] = entries[index - 1]["id"]
    if version < 3:
        # v2 -> v3: extension messages were renamed from hookMessage to custom.
        for entry in entries:
            message = entry.get("message") if entry["type"] == "message" else None
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"
    header["version"] = CURRENT_SESSION_VERSION


def _repair_missing_ids(entries: list[JsonObject]) -> int:
    # A v1 writer appending to a newer file leaves entries without id/parentId: chain them to
    # the entry before, as the v1 migration would.
    if all(type(entry.get("id")) is str for entry in entries):
        return 0
    taken = {entry_id for entry in entries if type(entry_id := entry.get("id")) is str}
    repaired = 0
    previous: str | None = None
    for entry in entries:
        entry_id = entry.get("id")
        if type(entry_id) is not str:
            entry_id = new_entry_id(taken)
            taken.add(entry_id)
            entry["id"] = entry_id
            if "parentId" not in entry:
                entry["parentId"] = previous
            repaired += 1
        previous = entry_id
    return repaired


def migrate_session_entries(entries: list[FileEntry]) -> bool:
    """Migrate a parsed file (header first) to version 3 in place; ``True`` if anything changed."""
    # The entries are edited as the JSON objects they are; a caller may pass a damaged file's.
    items = cast(list[JsonObject], entries)
    header = next((item for item in items if item.get("type") == "session"), None)
    body = [item for item in items if item.get("type") != "session"]
    changed = False
    version = _version(header) if header is not None else None
    if header is not None and version is not None and version < CURRENT_SESSION_VERSION:
        _migrate(header, body, version)
        changed = True
    return _repair_missing_ids(body) > 0 or changed


def load_entries_from_file(path: Path) -> list[FileEntry]:
    """The reference's ``loadEntriesFromFile``: header then entries, or ``[]`` when the file is
    missing, empty, or has no valid header. Migrates in memory only.
    """
    loaded = read_session_file(path)
    if loaded.header is None:
        return []
    return [loaded.header, *loaded.entries]


def _serialise(header: SessionHeader, entries: list[SessionEntry]) -> bytes:
    return jsonl.encode_line(header) + b"".join(jsonl.encode_line(entry) for entry in entries)


def open_session_file(path: Path, fresh_header: Callable[[], SessionHeader]) -> LoadedSession:
    """Load ``path`` for use as the current session, repairing the file on disk if needed.

    * missing file: nothing is written (the session is created lazily);
    * blank file: rewritten with ``fresh_header()``;
    * content without a valid header: the original is kept aside as ``<name>.corrupt-<n>``,
      then a file holding only ``fresh_header()`` takes its place;
    * migrated or repaired entries: the file is rewritten atomically (the original is kept aside
      first when skipped lines would otherwise be lost).

    :raises SessionPathError: ``path`` is a directory, a device or a FIFO, or a file in which
        no line looks like a session entry (it is left untouched)
    :raises SessionFileError: the file cannot be read, or a repair cannot be written
    """
    check_session_path(path)
    try:
        loaded = read_session_file(path)
    except OSError as error:
        raise SessionFileError(f"cannot read session file {path}: {_reason(error)}") from error
    report = loaded.report
    if loaded.header is None:
        if not path.exists():
            return loaded
        if report.not_a_session:
            raise SessionPathError(
                f"{path} is not a session file (no line is a session entry); refusing to "
                "overwrite it: give a .jsonl session file or a path that does not exist"
            )
        try:
            if not loaded.blank:
                report.corrupt_copy = keep_aside(path)
            loaded.header = fresh_header()
            write_file_atomically(path, jsonl.encode_line(loaded.header))
        except OSError as error:
            raise _repair_failed(path, error) from error
        report.rewritten = True
        return loaded
    if report.migrated_from is not None or report.repaired_ids:
        try:
            if report.skipped_lines:
                report.corrupt_copy = keep_aside(path)
            write_file_atomically(path, _serialise(loaded.header, loaded.entries))
        except OSError as error:
            raise _repair_failed(path, error) from error
        report.rewritten = True
    return loaded


def check_session_path(path: Path) -> None:
    """Refuse a session path that exists but is no regular file (``--session DIR``,
    ``--session /dev/full``, a FIFO): reading one fails, or never ends.

    :raises SessionPathError: with the reason
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    except NotADirectoryError as error:  # a parent is a file
        raise SessionPathError(f"cannot use session file {path}: {_reason(error)}") from error
    except OSError as error:
        raise SessionFileError(f"cannot use session file {path}: {_reason(error)}") from error
    if stat.S_ISDIR(mode):
        raise SessionPathError(f"{path} is a directory, not a session file")
    if not stat.S_ISREG(mode):
        raise SessionPathError(f"{path} is not a regular file, so it cannot hold a session")


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def _repair_failed(path: Path, error: OSError) -> SessionFileError:
    where = f": {error.filename}" if error.filename else ""
    return SessionFileError(
        f"session file {path} needs a repair that cannot be written ({_reason(error)}{where})"
    )
