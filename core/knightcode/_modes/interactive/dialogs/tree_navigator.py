"""``/tree``: move to another point of the session tree; resolves the chosen entry's id.

As the reference's tree selector: the branch holding the current leaf is listed first, the path
to it is marked ``•``, a chain stays flat and a branch point indents its children under
``├─``/``└─``. Typing searches (all words must appear); cancel clears a search before closing.
Every action of the tree context: fold/unfold a branch segment (or jump between segment starts),
edit a label (``on_label`` callback), label timestamps, the five filters (set/toggle/cycle) and
copying the selected message. Then :class:`SummarizeChoice` asks whether to summarize the branch
left; the app calls ``agent.navigate_tree(...)`` with the answers.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from rich.text import Text
from textual import events
from textual.widget import Widget

from knightcode._keys.actions import SELECT, TREE
from knightcode._keys.registry import KeyRegistry
from knightcode._modes.interactive.dialogs.base import (
    ACCENT,
    DIM,
    MUTED,
    SUCCESS,
    WARNING,
    KeyedInput,
    ListDialog,
    ask,
)
from knightcode._modes.interactive.dialogs.select import EditorDialog
from knightcode._session.tree import SessionTreeNode, build_tree
from knightcode._types.entries import SessionEntry

__all__ = [
    "FILTER_MODES",
    "FilterMode",
    "Summarize",
    "SummarizeChoice",
    "SummaryRequest",
    "TreeNavigator",
    "TreeRow",
    "ask_summary",
    "entry_text",
]

FilterMode = Literal["default", "no-tools", "user-only", "labeled-only", "all"]
FILTER_MODES: tuple[FilterMode, ...] = ("default", "no-tools", "user-only", "labeled-only", "all")
_FILTER_ACTIONS: dict[str, FilterMode] = {
    "app.tree.filter.noTools": "no-tools",
    "app.tree.filter.userOnly": "user-only",
    "app.tree.filter.labeledOnly": "labeled-only",
    "app.tree.filter.all": "all",
}
_FILTER_LABEL: dict[FilterMode, str] = {
    "default": "",
    "no-tools": " [no-tools]",
    "user-only": " [user]",
    "labeled-only": " [labeled]",
    "all": " [all]",
}
_BOOKKEEPING = frozenset({"label", "custom", "model_change", "thinking_level_change"})


@dataclass(frozen=True)
class TreeRow:
    """One listed entry: equal by entry id, so the selection survives re-flattening.

    :param prefix: the tree drawing before it
    :param segment_start: a root, or a child of a branch point
    """

    id: str
    node: SessionTreeNode = field(compare=False)
    prefix: str = field(default="", compare=False)
    segment_start: bool = field(default=False, compare=False)


def _fields(entry: SessionEntry) -> Mapping[str, object]:
    return entry


def _message(entry: SessionEntry) -> Mapping[str, object]:
    message = _fields(entry).get("message")
    return message if isinstance(message, dict) else {}


def _text(content: object, limit: int = 200) -> str:
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    else:
        text = ""
    return " ".join(text[: limit * 2].split())[:limit]


def entry_text(entry: SessionEntry) -> str:
    """One line for an entry, as the tree shows it (``user: …``, ``[compaction: 12k tokens]``)."""
    data = _fields(entry)
    kind = entry["type"]
    if kind == "message":
        message = _message(entry)
        role = message.get("role")
        text = _text(message.get("content"))
        if role == "user":
            return f"user: {text}"
        if role == "assistant":
            if text:
                return f"assistant: {text}"
            if message.get("stopReason") == "aborted":
                return "assistant: (aborted)"
            error = message.get("errorMessage")
            return f"assistant: {_text(error, 80)}" if error else "assistant: (no content)"
        if role == "toolResult":
            return f"[{message.get('toolName') or 'tool'}]"
        if role == "bashExecution":
            return f"[bash]: {_text(message.get('command'))}"
        return f"[{role}]"
    if kind == "custom_message":
        return f"[{data.get('customType')}]: {_text(data.get('content'))}"
    if kind == "compaction":
        tokens = data.get("tokensBefore")
        count = round(tokens / 1000) if isinstance(tokens, int | float) else 0
        return f"[compaction: {count}k tokens]"
    if kind == "branch_summary":
        return f"[branch summary]: {_text(data.get('summary'))}"
    if kind == "model_change":
        return f"[model: {data.get('modelId')}]"
    if kind == "thinking_level_change":
        return f"[thinking: {data.get('thinkingLevel')}]"
    if kind == "custom":
        return f"[custom: {data.get('customType')}]"
    if kind == "label":
        return f"[label: {data.get('label') or '(cleared)'}]"
    if kind == "session_info":
        return f"[name: {data.get('name') or '(cleared)'}]"
    return f"[{kind}]"


def _style(entry: SessionEntry) -> str:
    if entry["type"] == "message":
        role = _message(entry).get("role")
        return {"user": ACCENT, "assistant": SUCCESS, "toolResult": MUTED}.get(str(role), DIM)
    if entry["type"] in ("branch_summary", "compaction"):
        return WARNING
    return DIM


class TreeNavigator(ListDialog[TreeRow, str]):
    """See the module docstring.

    :param entries: the session's entries (file order)
    :param current_leaf_id: where the session is now (selected at first, always listed)
    :param labels: current labels by entry id; ``label_timestamps`` when they were set
    :param on_label: saves a label change (entry id, new label or None to remove)
    :param filter_mode: the filter it opens with (``treeFilterMode``)
    """

    contexts = (TREE, SELECT)
    search_mode = "buffer"
    empty_text = "  No entries found"

    def __init__(
        self,
        entries: Sequence[SessionEntry],
        current_leaf_id: str | None,
        labels: Mapping[str, str],
        label_timestamps: Mapping[str, str] | None = None,
        *,
        on_label: Callable[[str, str | None], Awaitable[None]] | None = None,
        filter_mode: FilterMode = "default",
        keys: KeyRegistry | None = None,
    ) -> None:
        by_id = {entry["id"]: entry for entry in entries}
        self.roots = build_tree(by_id, labels, label_timestamps or {})
        self.leaf_id = current_leaf_id
        self.active: set[str] = set()
        current = by_id.get(current_leaf_id) if current_leaf_id else None
        while current is not None and current["id"] not in self.active:
            self.active.add(current["id"])
            parent = current.get("parentId")
            current = by_id.get(parent) if isinstance(parent, str) else None
        self.filter_mode: FilterMode = filter_mode
        self.folded: set[str] = set()
        self.show_timestamps = False
        self.editing: TreeRow | None = None
        self.status: str | None = None
        self._on_label = on_label
        super().__init__("Session tree", self._flatten(), keys=keys)
        self.label_field = KeyedInput(self, placeholder="Label (empty to remove)", id="label")
        self.label_field.display = False
        leaf = [row for row in self.shown if row.id == current_leaf_id]
        self.selected = self.shown.index(leaf[0]) if leaf else max(0, len(self.shown) - 1)

    # --- the tree ---------------------------------------------------------------------------

    def _active_first(self, nodes: Sequence[SessionTreeNode]) -> list[SessionTreeNode]:
        return sorted(nodes, key=lambda n: n.entry["id"] not in self.active)

    def _flatten(self) -> list[TreeRow]:
        """Pre-order, active branch first, folded subtrees left out (a loop, not recursion)."""
        rows: list[TreeRow] = []
        # (node, prefix, base for its descendants, starts a segment)
        stack: list[tuple[SessionTreeNode, str, str, bool]] = [
            (root, "", "", True) for root in reversed(self._active_first(self.roots))
        ]
        seen: set[str] = set()
        while stack:
            node, prefix, base, start = stack.pop()
            entry_id = node.entry["id"]
            if entry_id in seen:
                continue
            seen.add(entry_id)
            rows.append(TreeRow(entry_id, node, prefix, start))
            if entry_id in self.folded or not node.children:
                continue
            children = self._active_first(node.children)
            branches = len(children) > 1
            for index in range(len(children) - 1, -1, -1):
                last = index == len(children) - 1
                if branches:
                    pushed = (
                        children[index],
                        base + ("└─ " if last else "├─ "),
                        base + ("   " if last else "│  "),
                        True,
                    )
                else:
                    pushed = (children[index], base, base, False)
                stack.append(pushed)
        return rows

    def _passes(self, row: TreeRow) -> bool:
        entry = row.node.entry
        kind = entry["type"]
        message = _message(entry) if kind == "message" else {}
        role = message.get("role")
        if role == "assistant" and row.id != self.leaf_id:
            stop = message.get("stopReason")
            if not _text(message.get("content")) and stop in (None, "stop", "toolUse"):
                return False  # a tool-call-only step: noise in the tree
        bookkeeping = kind in _BOOKKEEPING and not (
            kind == "custom" and _fields(entry).get("customType") == "skills_reload"
        )
        mode = self.filter_mode
        if mode == "user-only":
            return role == "user"
        if mode == "labeled-only":
            return row.node.label is not None
        if mode == "no-tools":
            return not bookkeeping and role != "toolResult"
        if mode == "all":
            return True
        return not bookkeeping

    def search_text(self, item: TreeRow) -> str:
        """Label and entry text."""
        return f"{item.node.label or ''} {entry_text(item.node.entry)}"

    def filter_items(self, items: Sequence[TreeRow], query: str) -> list[TreeRow]:
        """The filter mode, then every search word (substring, any case)."""
        words = query.lower().split()
        return [
            row
            for row in items
            if self._passes(row) and all(w in self.search_text(row).lower() for w in words)
        ]

    def _reflatten(self, keep: TreeRow | None = None) -> None:
        self.items = self._flatten()
        self.refilter(keep)

    # --- rendering --------------------------------------------------------------------------

    def compose_fields(self) -> Iterable[Widget]:
        """The label field (hidden until editing)."""
        return (self.label_field,)

    def render_item(self, item: TreeRow, selected: bool) -> Text:
        """Drawing, fold mark, path mark, label, entry text."""
        entry = item.node.entry
        row = Text(item.prefix, style=DIM)
        if item.id in self.folded:
            row.append("⊞ ", style=ACCENT)
        if item.id in self.active:
            row.append("• ", style=ACCENT)
        if item.node.label is not None:
            label = item.node.label
            if self.show_timestamps and item.node.label_timestamp:
                label += f" {item.node.label_timestamp[:16].replace('T', ' ')}"
            row.append(f"[{label}] ", style=WARNING)
        text = entry_text(entry)
        row.append(text, style=_style(entry) + (" bold" if selected else ""))
        return row

    def render_rows(self) -> list[Text]:
        """The rows, and always the position with the filter name."""
        rows = super().render_rows()
        position = f"  ({self.selected + 1 if self.shown else 0}/{len(self.shown)})"
        position += _FILTER_LABEL[self.filter_mode]
        if rows and rows[-1].plain.startswith("  (") and self.shown:
            rows[-1] = Text(position, style=MUTED)
        else:
            rows.append(Text(position, style=MUTED))
        return rows

    def render_body(self) -> Text:
        """Search line and list, or the label prompt."""
        if self.editing is not None:
            return Text("  Label (empty to remove): enter save · esc cancel", style=MUTED)
        search = Text("  Search: ", style=MUTED).append(self.query_text, style=ACCENT)
        body = Text("\n").join([search, *self.render_rows()])
        if self.status:
            body.append("\n  " + self.status, style=ACCENT)
        return body

    def hint_text(self) -> str:
        """The keys, as bound."""

        def key(action: str) -> str:
            return (self.keys.keys_for(action) or ("(unbound)",))[0]

        return " · ".join(
            (
                "↑↓ move",
                f"{key('app.tree.foldOrUp')}/{key('app.tree.unfoldOrDown')} fold",
                f"{key('app.tree.editLabel')} label",
                f"{key('app.tree.filter.cycleForward')} filter",
                f"{key('app.message.copy')} copy",
                "type to search",
            )
        )

    # --- actions ----------------------------------------------------------------------------

    def _jump(self, delta: int) -> None:
        """To the previous/next segment start among the shown rows (down: else the end)."""
        index = self.selected + delta
        while 0 <= index < len(self.shown):
            if self.shown[index].segment_start:
                self.selected = index
                return
            index += delta
        self.selected = 0 if delta < 0 else max(0, len(self.shown) - 1)

    def _set_filter(self, mode: FilterMode) -> None:
        self.filter_mode = mode
        self.refilter()

    async def perform(self, action: str) -> bool:
        """Every action of the tree context (and the list's)."""
        if self.editing is not None:
            return await self._perform_editing(action)
        row = self.current
        self.status = None
        if action == "app.tree.foldOrUp":
            if (
                row is not None
                and row.segment_start
                and row.node.children
                and (row.id not in self.folded)
            ):
                self.folded.add(row.id)
                self._reflatten(row)
            else:
                self._jump(-1)
        elif action == "app.tree.unfoldOrDown":
            if row is not None and row.id in self.folded:
                self.folded.discard(row.id)
                self._reflatten(row)
            else:
                self._jump(1)
        elif action == "app.tree.editLabel":
            if row is not None and self._on_label is not None:
                self.editing = row
                self.label_field.value = row.node.label or ""
                self.label_field.display = True
                self.label_field.focus()
        elif action == "app.tree.toggleLabelTimestamp":
            self.show_timestamps = not self.show_timestamps
        elif action == "app.tree.filter.default":
            self._set_filter("default")
        elif action in _FILTER_ACTIONS:
            mode = _FILTER_ACTIONS[action]
            self._set_filter("default" if self.filter_mode == mode else mode)
        elif action in ("app.tree.filter.cycleForward", "app.tree.filter.cycleBackward"):
            step = 1 if action == "app.tree.filter.cycleForward" else -1
            index = FILTER_MODES.index(self.filter_mode)
            self._set_filter(FILTER_MODES[(index + step) % len(FILTER_MODES)])
        elif action == "app.message.copy":
            if row is not None:
                self.app.copy_to_clipboard(entry_text(row.node.entry))
                self.status = "Copied to the clipboard"
        elif action == "tui.select.cancel" and self.query_text:
            self.set_query("")
        else:
            return await super().perform(action)
        return True

    async def perform_key(self, event: events.Key) -> bool:
        """Typing searches, except while the label field has the keys."""
        if self.editing is not None:
            return False
        return await super().perform_key(event)

    async def _perform_editing(self, action: str) -> bool:
        row = self.editing
        if action == "tui.select.confirm" and row is not None and self._on_label is not None:
            label = self.label_field.value.strip() or None
            await self._on_label(row.id, label)
            row.node.label = label
            row.node.label_timestamp = (
                None if label is None else datetime.now(UTC).isoformat(timespec="milliseconds")
            )
        elif action != "tui.select.cancel":
            return False  # the field edits
        self.editing = None
        self.label_field.display = False
        self.focus()
        self.refilter()
        return True

    async def confirm(self, item: TreeRow) -> None:
        """Navigate to ``item``."""
        self.resolve(item.id)


class Summarize(enum.Enum):
    """Whether to summarize the branch being left."""

    NO = "no"
    YES = "yes"
    CUSTOM = "custom"


@dataclass(frozen=True)
class SummaryRequest:
    """The answers for ``navigate_tree(summarize=..., custom_instructions=...)``."""

    summarize: bool
    instructions: str | None = None


_CHOICE_LABELS: dict[Summarize, str] = {
    Summarize.NO: "No summary",
    Summarize.YES: "Summarize",
    Summarize.CUSTOM: "Summarize with custom instructions…",
}


class SummarizeChoice(ListDialog[Summarize, Summarize]):
    """Asks "Summarize the branch you leave?": no / yes / yes with custom instructions."""

    search_mode = "none"

    def __init__(self, *, keys: KeyRegistry | None = None) -> None:
        super().__init__("Summarize the branch you leave?", list(Summarize), keys=keys)

    def render_item(self, item: Summarize, selected: bool) -> Text:
        """The choice's label."""
        return Text(_CHOICE_LABELS[item], style=ACCENT if selected else "")

    async def confirm(self, item: Summarize) -> None:
        """The choice."""
        self.resolve(item)


async def ask_summary(
    container: Widget, *, keys: KeyRegistry | None = None
) -> SummaryRequest | None:
    """Ask :class:`SummarizeChoice`, then the instructions for a custom summary (an
    :class:`~knightcode._modes.interactive.dialogs.select.EditorDialog`); None when cancelled.
    """
    choice = await ask(container, SummarizeChoice(keys=keys))
    if choice is None:
        return None
    if choice is Summarize.NO:
        return SummaryRequest(False)
    if choice is Summarize.YES:
        return SummaryRequest(True)
    text = await ask(container, EditorDialog("Custom summary instructions", keys=keys))
    if text is None:
        return None
    return SummaryRequest(True, text.strip() or None)
