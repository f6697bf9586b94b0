"""The conversation tree: entries linked by ``id``/``parentId``, and walks over it.

Every walk here is a loop, never recursion: a session of 100 000 entries in one chain is an
ordinary long conversation and must not hit Python's recursion limit. Malformed files (parent
cycles, duplicate ids, missing parents) are tolerated the way the reference tolerates them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from knightcode._session.ids import iso_to_epoch_ms
from knightcode._types.entries import LabelEntry, SessionEntry

__all__ = ["EntryIndex", "SessionTreeNode", "build_tree", "path_to_root"]


@dataclass(slots=True, eq=False, repr=False)
class SessionTreeNode:
    """One entry of :meth:`EntryIndex.tree` with its children (oldest first) and its label.

    :ivar entry: the stored entry (the dict itself, not a copy)
    :ivar children: child nodes sorted by entry timestamp
    :ivar label: the entry's current label, if any
    :ivar label_timestamp: when that label was set
    """

    entry: SessionEntry
    children: list[SessionTreeNode] = field(default_factory=list)
    label: str | None = None
    label_timestamp: str | None = None

    def __repr__(self) -> str:
        # The dataclass repr would recurse through a 100 000-deep chain.
        return f"SessionTreeNode(id={self.entry['id']!r}, children={len(self.children)})"


def path_to_root(by_id: Mapping[str, SessionEntry], leaf_id: str | None) -> list[SessionEntry]:
    """Entries from the root down to ``leaf_id`` (empty if the id is unknown or ``None``).

    A parent cycle in a damaged file ends the walk at the first repeated entry.
    """
    get = by_id.get
    path: list[SessionEntry] = []
    append = path.append
    current = get(leaf_id) if leaf_id is not None else None
    # Hot loop (a 100 000-entry branch on every turn): no visited set. A walk longer than the
    # number of entries must have met a cycle; only then is the walk redone with one.
    for _ in range(len(by_id)):
        if current is None:
            break
        append(current)
        parent_id = current.get("parentId")
        current = get(parent_id) if type(parent_id) is str and parent_id else None
    else:
        if current is not None:
            return _path_to_root_checked(by_id, leaf_id)
    path.reverse()
    return path


def _path_to_root_checked(
    by_id: Mapping[str, SessionEntry], leaf_id: str | None
) -> list[SessionEntry]:
    path: list[SessionEntry] = []
    seen: set[str] = set()
    current = by_id.get(leaf_id) if leaf_id is not None else None
    while current is not None and current["id"] not in seen:
        seen.add(current["id"])
        path.append(current)
        parent_id = current.get("parentId")
        current = by_id.get(parent_id) if type(parent_id) is str and parent_id else None
    path.reverse()
    return path


def _cycle_members(by_id: Mapping[str, SessionEntry]) -> set[str]:
    # Each entry has at most one parent, so cycles are found by walking parent links once,
    # marking entries of the current walk; meeting one of them again closes a cycle.
    state: dict[str, int] = {}  # 1 = on the current walk, 2 = finished
    members: set[str] = set()
    for start in by_id:
        if start in state:
            continue
        walk: list[str] = []
        node: str | None = start
        while node is not None and node in by_id and node not in state:
            state[node] = 1
            walk.append(node)
            parent = by_id[node].get("parentId")
            node = parent if isinstance(parent, str) else None
        if node is not None and state.get(node) == 1:
            members.update(walk[walk.index(node) :])
        for visited in walk:
            state[visited] = 2
    return members


def _timestamp_key(node: SessionTreeNode) -> int:
    return iso_to_epoch_ms(node.entry.get("timestamp")) or 0


def build_tree(
    by_id: Mapping[str, SessionEntry],
    labels: Mapping[str, str],
    label_timestamps: Mapping[str, str],
) -> list[SessionTreeNode]:
    """Build the forest of all entries, one node per id (duplicates collapse).

    Roots are entries without a parent, with a missing parent (orphans), or on a parent cycle;
    they keep file order. Children are sorted by timestamp, oldest first.
    """
    nodes = {
        entry_id: SessionTreeNode(entry, [], labels.get(entry_id), label_timestamps.get(entry_id))
        for entry_id, entry in by_id.items()
    }
    cyclic = _cycle_members(by_id)
    roots: list[SessionTreeNode] = []
    for entry_id, node in nodes.items():
        parent_id = node.entry.get("parentId")
        parent = None
        if isinstance(parent_id, str) and parent_id != entry_id and entry_id not in cyclic:
            parent = nodes.get(parent_id)
        if parent is None:
            roots.append(node)
        else:
            parent.children.append(node)
    for node in nodes.values():
        if len(node.children) > 1:
            node.children.sort(key=_timestamp_key)
    return roots


class EntryIndex:
    """Entries in file order plus the lookups the session needs, kept up to date on append.

    :ivar entries: every entry in file order (duplicates of a damaged file included)
    :ivar by_id: entry by id (for a duplicated id, the last one read)
    :ivar labels: current label by target id (replayed from ``label`` entries, last wins)
    :ivar label_timestamps: when each current label was set
    :ivar leaf_id: the current leaf (``None``: the next entry becomes a root)
    :ivar has_assistant: whether any entry is an assistant message (the lazy-write trigger)
    """

    __slots__ = ("by_id", "entries", "has_assistant", "label_timestamps", "labels", "leaf_id")

    def __init__(
        self,
        entries: Iterable[SessionEntry] = (),
        by_id: dict[str, SessionEntry] | None = None,
        label_entries: Iterable[LabelEntry] | None = None,
    ) -> None:
        """Index ``entries``; ``by_id`` and ``label_entries`` (the ``label`` entries in order)
        may be given when the caller gathered them already (the loader does, while parsing).
        """
        self.entries: list[SessionEntry] = list(entries)
        # One pass in C for the id map; the leaf is the last entry in *file order*.
        self.by_id: dict[str, SessionEntry] = (
            by_id if by_id is not None else {entry["id"]: entry for entry in self.entries}
        )
        self.leaf_id: str | None = self.entries[-1]["id"] if self.entries else None
        self.labels: dict[str, str] = {}
        self.label_timestamps: dict[str, str] = {}
        if label_entries is None:
            label_entries = [entry for entry in self.entries if entry["type"] == "label"]
        for entry in label_entries:
            self._apply_label(entry)
        self.has_assistant = any(_is_assistant(entry) for entry in self.entries)

    def add(self, entry: SessionEntry) -> None:
        """Record a newly appended entry and make it the leaf."""
        self.entries.append(entry)
        self.by_id[entry["id"]] = entry
        self.leaf_id = entry["id"]
        if entry["type"] == "label":
            self._apply_label(entry)
        elif not self.has_assistant and _is_assistant(entry):
            self.has_assistant = True

    def _apply_label(self, entry: LabelEntry) -> None:
        target, label = entry.get("targetId"), entry.get("label")
        if not isinstance(target, str):
            return
        if label:
            self.labels[target] = label
            self.label_timestamps[target] = entry.get("timestamp", "")
        else:
            self.labels.pop(target, None)
            self.label_timestamps.pop(target, None)

    def path(self, leaf_id: str | None) -> list[SessionEntry]:
        """Entries from the root to ``leaf_id``."""
        return path_to_root(self.by_id, leaf_id)

    def children(self, parent_id: str) -> list[SessionEntry]:
        """Direct children of ``parent_id``, in file order."""
        return [entry for entry in self.by_id.values() if entry.get("parentId") == parent_id]

    def tree(self) -> list[SessionTreeNode]:
        """The whole session as a forest (see :func:`build_tree`)."""
        return build_tree(self.by_id, self.labels, self.label_timestamps)


def _is_assistant(entry: Mapping[str, object]) -> bool:
    if entry.get("type") != "message":
        return False
    message = entry.get("message")
    return isinstance(message, dict) and message.get("role") == "assistant"
