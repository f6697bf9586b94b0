"""``BuiltinToolDefinition``: the definition type of the built-in tools.

It is :class:`knightcode._plugins.definitions.ToolDefinition` itself (which has the
``prepare_arguments`` hook the edit tool needs); the name stays for readability at call sites.
"""

from __future__ import annotations

from knightcode._plugins.definitions import ToolDefinition

__all__ = ["BuiltinToolDefinition"]

BuiltinToolDefinition = ToolDefinition
