"""A tool the model can call: ``word_count`` counts the words of a text."""

from __future__ import annotations

from collections.abc import Callable

from knightcode import ToolContext, ToolDefinition, ToolResult, hookimpl


def count_words(
    tool_call_id: str,
    args: dict[str, object],
    ctx: ToolContext,
    on_update: Callable[[ToolResult], object],
) -> ToolResult:
    """The tool's ``execute``: the arguments were validated against ``parameters``."""
    words = len(str(args["text"]).split())
    return {"content": [{"type": "text", "text": f"{words} words"}], "details": {"words": words}}


@hookimpl
def register_tools(register: Callable[..., None]) -> None:
    """Register ``word_count``."""
    register(
        ToolDefinition(
            name="word_count",
            description="Count the words in a text.",
            parameters={
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The text to count"}},
                "required": ["text"],
            },
            execute=count_words,
        )
    )
