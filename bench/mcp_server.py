"""A small MCP stdio server for ``bench.resources``: 20 tools, written with the SDK.

Run: ``python bench/mcp_server.py`` (knightcode starts it from mcp.json).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("knightcode-bench")


def _tool(n: int) -> None:
    def tool(text: str, count: int = 1) -> str:
        return text * count

    tool.__name__ = f"tool_{n}"
    tool.__doc__ = f"Bench tool {n}: repeats the text."
    server.tool()(tool)


for _n in range(20):
    _tool(_n)

if __name__ == "__main__":
    server.run("stdio")
