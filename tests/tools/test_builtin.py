"""The built-in tool set: names, defaults, definitions."""

from __future__ import annotations

from knightcode._plugins.definitions import ToolDefinition
from knightcode._tools import BUILTIN_TOOL_NAMES, DEFAULT_ACTIVE_TOOLS, create_builtin_tools


def test_names_and_order() -> None:
    tools = create_builtin_tools()
    assert (
        tuple(tools)
        == BUILTIN_TOOL_NAMES
        == ("read", "bash", "edit", "write", "grep", "find", "ls")
    )
    assert all(
        isinstance(tool, ToolDefinition) and tool.name == name for name, tool in tools.items()
    )


def test_default_active_set_is_the_reference_coding_set() -> None:
    assert DEFAULT_ACTIVE_TOOLS == ("read", "bash", "edit", "write")


def test_definitions_are_complete() -> None:
    for tool in create_builtin_tools().values():
        assert tool.parameters["type"] == "object"
        assert set(tool.parameters.get("required", [])) <= set(tool.parameters["properties"])
        assert tool.description and tool.prompt_snippet and tool.label == tool.name
        assert callable(tool.execute)


def test_fresh_definitions_each_call() -> None:
    assert create_builtin_tools()["read"] is not create_builtin_tools()["read"]
