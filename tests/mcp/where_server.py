"""An MCP stdio server (SDK) that reports where it runs: its working directory, whether a given
path exists for it, and a few variables. Run under the bwrap sandbox by ``test_sandbox.py``,
it sees ``/workspace`` and not the host's files outside the project.
"""

from __future__ import annotations

import json
import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("knightcode-where")


@server.tool()
def where(path: str) -> str:
    """The server's cwd, whether ``path`` exists for it, and its TEST_TOKEN, HOME and USER."""
    return json.dumps(
        {
            "cwd": os.getcwd(),
            "exists": os.path.exists(path),
            "token": os.environ.get("TEST_TOKEN"),
            "home": os.environ.get("HOME"),
            "user": os.environ.get("USER"),
        }
    )


if __name__ == "__main__":
    server.run("stdio")
