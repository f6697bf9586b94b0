"""Finding sessions: the most recent one for ``--continue``, and listings for ``--resume``.

Nothing here writes: damaged files are skipped, not repaired (that happens when one is opened).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._session import jsonl
from knightcode._session.ids import iso_to_epoch_ms
from knightcode._session.loading import read_session_file

if TYPE_CHECKING:
    from knightcode._types.entries import SessionHeader

__all__ = [
    "SessionInfo",
    "build_session_info",
    "find_most_recent_session",
    "is_valid_session_file",
    "list_all_sessions",
    "list_sessions",
]

# The reference reads only the first 512 bytes, which misses headers with a long cwd or
# parentSession; reading up to the first LF (bounded) finds every header it finds and more.
_HEADER_READ_LIMIT = 64 * 1024


def read_header(path: Path) -> SessionHeader | None:
    """The session header on the first line of ``path``; None when there is none (a missing or
    unreadable file, or a first line that is not a header with a string id).
    """
    try:
        with open(path, "rb") as handle:
            first_line = handle.readline(_HEADER_READ_LIMIT)
        header = jsonl.parse_line(first_line)
    except (OSError, ValueError):
        return None
    if (
        type(header) is dict
        and header.get("type") == "session"
        and isinstance(header.get("id"), str)
    ):
        return header  # type: ignore[return-value]  # checked: a header with its id
    return None


def is_valid_session_file(path: Path) -> bool:
    """Whether the first line of ``path`` is a session header with a string id."""
    return read_header(path) is not None


def _jsonl_files(directory: Path) -> list[Path]:
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return [directory / name for name in names if name.endswith(".jsonl")]


def find_most_recent_session(session_dir: Path) -> Path | None:
    """The valid session file in ``session_dir`` modified last (by file mtime), or ``None``."""
    best: tuple[float, Path] | None = None
    for path in _jsonl_files(session_dir):
        if not is_valid_session_file(path):
            continue
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if best is None or mtime > best[0]:
            best = (mtime, path)
    return best[1] if best else None


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One row of a session listing.

    :ivar path: the session file
    :ivar id: the session id from the header
    :ivar cwd: where the session was started (``""`` for very old files)
    :ivar name: the latest non-empty ``session_info`` name, if any
    :ivar parent_session_path: the session this one was forked from, if any
    :ivar created: the header timestamp
    :ivar modified: the last user or assistant message's time (else the header's, else mtime)
    :ivar message_count: number of ``message`` entries
    :ivar first_message: the first user text, or ``"(no messages)"``
    :ivar all_messages_text: every user and assistant text, space-separated (for search)
    """

    path: Path
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: datetime
    modified: datetime
    message_count: int
    first_message: str
    all_messages_text: str


def _from_ms(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return " ".join(
        str(block.get("text") or "")
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def build_session_info(path: Path) -> SessionInfo | None:
    """Summarise one session file for a listing; ``None`` if it is not a readable session."""
    try:
        loaded = read_session_file(path)
        mtime = path.stat().st_mtime
    except OSError:
        return None
    header = loaded.header
    if header is None:
        return None
    name: str | None = None
    message_count = 0
    first_message = ""
    texts: list[str] = []
    last_activity: int | None = None
    for entry in loaded.entries:
        if entry["type"] == "session_info":
            if entry.get("name"):
                name = entry.get("name", "").strip()
            continue
        if entry["type"] != "message":
            continue
        message_count += 1
        message: object = entry.get("message")  # any file is listed, a damaged one too
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        if "content" not in message:
            continue
        stamp = message.get("timestamp")
        if type(stamp) is not int and type(stamp) is not float:
            stamp = iso_to_epoch_ms(entry.get("timestamp"))
        if stamp is not None:
            last_activity = max(last_activity or 0, int(stamp))
        text = _text_of(message.get("content"))
        if not text:
            continue
        texts.append(text)
        if not first_message and message["role"] == "user":
            first_message = text
    created_ms = iso_to_epoch_ms(header.get("timestamp"))
    if last_activity:
        modified = _from_ms(last_activity)
    elif created_ms is not None:
        modified = _from_ms(created_ms)
    else:
        modified = datetime.fromtimestamp(mtime, UTC)
    cwd = header.get("cwd")
    return SessionInfo(
        path=path,
        id=header["id"],
        cwd=cwd if isinstance(cwd, str) else "",
        name=name,
        parent_session_path=header.get("parentSession"),
        created=_from_ms(created_ms) if created_ms is not None else modified,
        modified=modified,
        message_count=message_count,
        first_message=first_message or "(no messages)",
        all_messages_text=" ".join(texts),
    )


def list_sessions(session_dir: Path) -> list[SessionInfo]:
    """Every readable session in ``session_dir``, most recently modified first."""
    infos = [info for path in _jsonl_files(session_dir) if (info := build_session_info(path))]
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def list_all_sessions(root: Path) -> list[SessionInfo]:
    """Every readable session under ``root`` (``<agent-dir>/sessions``), newest first."""
    infos: list[SessionInfo] = []
    try:
        directories = [root / name for name in os.listdir(root) if (root / name).is_dir()]
    except OSError:
        return []
    for directory in directories:
        infos.extend(list_sessions(directory))
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos
