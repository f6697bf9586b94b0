"""An example tool that stays inside the sandbox: ``line_count`` counts the lines of files.

Load it with ``knightcode -e plugins_examples/line_count.py``. It never touches ``os`` or
``subprocess``: it reads and runs through its ``ctx`` — ``ctx.read_text``, ``ctx.run``,
``ctx.resolve`` — which go through the session's execution backend. With a sandbox on
(``--sandbox bwrap``), the command runs inside it, relative paths resolve against
``/workspace``, and the tool can reach nothing the built-in tools cannot.

A tool that must run on the host (a clipboard, a browser) says so with
``ToolDefinition(host_access=True)``; ``knightcode config list`` then lists its plugin as
having host access.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from knightcode import ToolContext, ToolDefinition, ToolResult, hookimpl

PARAMETERS = {
    "type": "object",
    "properties": {
        "paths": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Files to count, relative to the working directory",
        }
    },
    "required": ["paths"],
}


async def count_lines(
    tool_call_id: str, args: Mapping[str, object], ctx: ToolContext, on_update: object
) -> ToolResult:
    """Count lines with ``wc -l`` run through the backend, and say where it ran."""
    given = args.get("paths")
    paths = [path for path in given if isinstance(path, str)] if isinstance(given, list) else []
    if not paths:
        raise ValueError("give at least one path")
    result = await ctx.run(["wc", "-l", "--", *paths], timeout=30)
    where = await ctx.run("pwd", timeout=10)
    text = result.output.decode("utf-8", "replace").rstrip()
    ran_in = where.output.decode("utf-8", "replace").strip()
    if result.exit_code != 0:
        raise ValueError(f"wc failed ({result.exit_code}): {text}")
    return {
        "content": [{"type": "text", "text": f"{text}\n(counted in {ran_in})"}],
        "details": {"cwd": ran_in},
    }


@hookimpl
def register_tools(register: Callable[..., None]) -> None:
    """The ``line_count`` tool."""
    register(
        ToolDefinition(
            name="line_count",
            description="Count the lines of files (wc -l).",
            parameters=PARAMETERS,
            execute=count_lines,
            prompt_snippet="line_count: count the lines of files",
        )
    )
