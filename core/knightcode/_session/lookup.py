"""``--session ID``: finding a session by its id or a unique prefix of it.

A value that looks like a path (it holds a path separator or ends in ``.jsonl``) is a session
file; anything else is matched against the ids of this project's sessions first, then every
project's (``<agent-dir>/sessions``). Guessing among several matches could continue the wrong
conversation, so an ambiguous prefix is refused with the matches listed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from knightcode._errors import UsageError
from knightcode._session.listing import SessionInfo, list_all_sessions, list_sessions

SHOWN_MATCHES = 10
"""How many matches an ambiguity error lists (a one-character prefix can match hundreds)."""


@dataclass(frozen=True, slots=True)
class FoundSession:
    """A session ``--session`` named by id.

    :ivar path: its file
    :ivar other_project: the folder it belongs to when that is not this project (the session
        is then forked into this project rather than continued in place)
    """

    path: Path
    other_project: str | None = None


def looks_like_path(value: str) -> bool:
    """Whether ``--session VALUE`` names a file rather than an id (the reference's rule)."""
    return "/" in value or os.sep in value or "\\" in value or value.endswith(".jsonl")


def named_session(
    named: Path, session_dir: Path, sessions_root: Path, flag: str = "--session"
) -> FoundSession:
    """The session ``--session``/``--fork`` names: a path (made absolute; it may not exist yet),
    else an id or unique id prefix (:func:`find_session`).

    :raises UsageError: no session has that id, or several do
    """
    if looks_like_path(str(named)) or named.expanduser().exists():
        return FoundSession(named.expanduser().resolve())
    return find_session(str(named), session_dir, sessions_root, flag)


def find_session(
    reference: str, session_dir: Path, sessions_root: Path, flag: str = "--session"
) -> FoundSession:
    """The session whose id is ``reference`` or starts with it.

    :raises UsageError: no session matches, or several do (the message lists them)
    """
    local = _matching(reference, list_sessions(session_dir), flag)
    if local:
        return FoundSession(local.path)
    found = _matching(reference, list_all_sessions(sessions_root), flag)
    if found is None:
        raise UsageError(
            f"{flag} {reference!r}: no session has this id or id prefix "
            f"(looked in {session_dir} and {sessions_root}); give a session file's path instead"
        )
    same = found.path.parent == session_dir
    return FoundSession(found.path, None if same else found.cwd or str(found.path.parent))


def _matching(reference: str, sessions: list[SessionInfo], flag: str) -> SessionInfo | None:
    exact = [info for info in sessions if info.id == reference]
    matches = exact or [info for info in sessions if info.id.startswith(reference)]
    if len(matches) > 1:
        shown = "; ".join(f"{info.id} ({info.path})" for info in matches[:SHOWN_MATCHES])
        more = len(matches) - SHOWN_MATCHES
        tail = f"; and {more} more" if more > 0 else ""
        raise UsageError(
            f"{flag} {reference!r} matches {len(matches)} sessions: {shown}{tail}; "
            "give more of the id"
        )
    return matches[0] if matches else None
