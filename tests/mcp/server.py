"""A real MCP server written with the SDK (``MCPServer``, formerly FastMCP), run by the tests as
a subprocess: ``python server.py stdio``, ``python server.py http PORT``, or a misbehaving one:
``crash`` (exits before the handshake), ``hang`` (never answers), ``slow SECONDS`` (starts
late). Its ``die`` tool exits the process in the middle of the call.
"""

from __future__ import annotations

import base64
import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image

# A 1x1 red PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)

server = MCPServer("knightcode-test")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Echo the text back, with the server's TEST_TOKEN (set through mcp.json env)."""
    return f"{text} token={os.environ.get('TEST_TOKEN', '')}"


@server.tool()
def pixel() -> Image:
    """A 1x1 red PNG."""
    return Image(data=PIXEL, format="png")


@server.tool()
def die() -> str:
    """Exit the server process mid-call."""
    sys.stderr.write("dying on purpose\n")
    sys.stderr.flush()
    os._exit(3)


def main() -> None:
    mode = sys.argv[1]
    if mode == "crash":
        sys.stderr.write("cannot start: missing config\n")
        sys.exit(2)
    if mode == "hang":
        time.sleep(3600)
    if mode == "slow":  # ``slow SECONDS``: a server that takes its time to start
        time.sleep(float(sys.argv[2]))
    if mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()


if __name__ == "__main__":
    main()
