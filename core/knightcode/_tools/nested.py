"""Tool calls made by a running tool: what :meth:`ToolContext.call_tool` returns and who serves it.

A tool such as codemode's ``code`` runs other tools on the model's behalf. Those *nested* calls
go through the same pipeline as the model's own (lookup, argument validation, the ``tool_call``
and ``tool_result`` hooks, the execution events), but their results go back to the calling tool,
not into the conversation: only the outer call gets a ``toolResult`` message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from knightcode._plugins.definitions import ToolDefinition
    from knightcode._types.messages import ToolResultContent

__all__ = ["NestedResult", "ToolCaller"]


@dataclass(frozen=True)
class NestedResult:
    """The result of a nested tool call, after the ``tool_result`` hook.

    :param content: the result's content blocks (text, images)
    :param details: the tool's ``details`` (None when it gave none)
    :param is_error: the call failed: unknown tool, invalid arguments, blocked by a plugin, the
        tool raised, timed out or was aborted; ``text`` then says why
    :param tool_call_id: the nested call's id, ``<parent id>.<n>``
    """

    content: list[ToolResultContent]
    details: object
    is_error: bool
    tool_call_id: str

    @property
    def text(self) -> str:
        """The text blocks of :attr:`content`, joined by newlines (images left out)."""
        return "\n".join(block["text"] for block in self.content if block["type"] == "text")


class ToolCaller(Protocol):
    """Runs nested calls for one running tool call (the kernel provides it while a session
    runs; :attr:`ToolContext.caller`).
    """

    @property
    def tools(self) -> Mapping[str, ToolDefinition]:
        """Every tool a nested call may name: the session's available tools, active or not."""
        ...

    async def call(self, name: str, args: dict[str, object]) -> NestedResult:
        """Run tool ``name`` with ``args`` through the whole pipeline; never raises for a failed
        call (the result says ``is_error``), only when the caller itself is cancelled.
        """
        ...
