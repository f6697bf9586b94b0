"""New sessions made from existing ones.

* A *branched* session (``/fork``, ``/tree`` → new session) keeps only the path from the root to
  a chosen entry. ``label`` entries on that path are dropped and the labels that are still set
  on kept entries are re-created as fresh ``label`` entries chained after the path (keeping
  their original timestamps), so the new file carries no dangling history.
* A *forked* file copies every entry of another session, e.g. from another project, into a new
  file whose header names the source as ``parentSession``.
"""

from __future__ import annotations

import os
from pathlib import Path

from knightcode._session import jsonl
from knightcode._session.errors import EntryNotFoundError, SessionFileError
from knightcode._session.file_store import write_file_atomically
from knightcode._session.ids import iso_timestamp, new_entry_id, new_session_id
from knightcode._session.loading import load_entries_from_file
from knightcode._session.location import session_file_name
from knightcode._session.tree import EntryIndex
from knightcode._types.entries import LabelEntry, SessionEntry, make_header

__all__ = ["branched_entries", "fork_session_file"]


def branched_entries(index: EntryIndex, leaf_id: str) -> list[SessionEntry]:
    """The entries of a session branched at ``leaf_id`` (path without labels, then labels).

    :raises EntryNotFoundError: if ``leaf_id`` does not exist
    """
    path = index.path(leaf_id)
    if not path:
        raise EntryNotFoundError(leaf_id)
    kept = [entry for entry in path if entry["type"] != "label"]
    taken = {entry["id"] for entry in kept}
    labels: list[SessionEntry] = []
    parent_id = kept[-1]["id"] if kept else None
    for target, label in index.labels.items():
        if target not in taken:
            continue
        entry: LabelEntry = {
            "type": "label",
            "id": new_entry_id(taken),
            "parentId": parent_id,
            "timestamp": index.label_timestamps.get(target) or iso_timestamp(),
            "targetId": target,
            "label": label,
        }
        taken.add(entry["id"])
        labels.append(entry)
        parent_id = entry["id"]
    return [*kept, *labels]


def fork_session_file(source: str | os.PathLike[str], target_cwd: str, session_dir: Path) -> Path:
    """Copy every entry of ``source`` into a new session file in ``session_dir``; return it.

    :raises SessionFileError: if ``source`` is missing, empty or has no valid header
    """
    entries = load_entries_from_file(Path(source))
    if not entries:
        raise SessionFileError(f"Cannot fork: source session file is empty or invalid: {source}")
    timestamp = iso_timestamp()
    header = make_header(new_session_id(), timestamp, target_cwd, os.fspath(source))
    file = Path(session_dir) / session_file_name(timestamp, header["id"])
    lines = [jsonl.encode_line(header)]
    lines.extend(jsonl.encode_line(entry) for entry in entries[1:])
    write_file_atomically(file, b"".join(lines))
    return file
