"""The set of built-in tools and which of them are active by default."""

from __future__ import annotations

from collections.abc import Callable

from knightcode._plugins.definitions import ToolDefinition
from knightcode._tools.bash import create_bash_tool
from knightcode._tools.edit import create_edit_tool
from knightcode._tools.find import create_find_tool
from knightcode._tools.grep import create_grep_tool
from knightcode._tools.ls import create_ls_tool
from knightcode._tools.read import create_read_tool
from knightcode._tools.write import create_write_tool

__all__ = ["BUILTIN_TOOL_NAMES", "DEFAULT_ACTIVE_TOOLS", "create_builtin_tools"]

BUILTIN_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write", "grep", "find", "ls")
"""Every built-in tool, in the order the reference lists them (and the system prompt shows them)."""

DEFAULT_ACTIVE_TOOLS: tuple[str, ...] = ("read", "bash", "edit", "write")
"""Active when neither ``--tools`` nor settings choose: the reference's coding set. ``grep``,
``find`` and ``ls`` are available (``--tools read,grep,find,ls``) but off by default, because
``bash`` already covers them and fewer tools mean a shorter prompt."""

_FACTORIES: dict[str, Callable[[], ToolDefinition]] = {
    "read": create_read_tool,
    "bash": create_bash_tool,
    "edit": create_edit_tool,
    "write": create_write_tool,
    "grep": create_grep_tool,
    "find": create_find_tool,
    "ls": create_ls_tool,
}


def create_builtin_tools() -> dict[str, ToolDefinition]:
    """Fresh definitions of all built-in tools, keyed by name in :data:`BUILTIN_TOOL_NAMES` order.

    The definitions hold no state: where and how they run comes from the context passed to
    ``execute`` (cwd, backend, abort signal), so one set serves every session.
    """
    return {name: _FACTORIES[name]() for name in BUILTIN_TOOL_NAMES}
