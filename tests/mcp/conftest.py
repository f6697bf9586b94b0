"""Real MCP servers for the tests: ``server.py`` (written with the SDK) over stdio as a
subprocess of knightcode, or over streamable HTTP on 127.0.0.1 as a subprocess of the test."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVER = str(Path(__file__).with_name("server.py"))


def stdio_entry(mode: str = "stdio", **extra: object) -> dict[str, object]:
    """An mcp.json entry that runs ``server.py MODE`` with this Python."""
    return {"command": sys.executable, "args": [SERVER, mode], **extra}


def write_mcp_json(agent_dir: Path, servers: dict[str, dict[str, object]]) -> None:
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _serve(script: str, *args: str) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """Run ``script PORT ARGS`` and yield its port once it accepts connections."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, script, *args, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"the MCP HTTP test server {script} did not start") from None
                time.sleep(0.1)
        yield port, process
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def http_server() -> Iterator[str]:
    """``server.py`` over streamable HTTP; yields its URL once it accepts connections."""
    for port, _ in _serve(SERVER, "http"):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def auth_server() -> Iterator[str]:
    """``auth_server.py``: an MCP server behind OAuth (its own authorization server)."""
    for port, _ in _serve(str(Path(__file__).with_name("auth_server.py"))):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def short_auth_server() -> Iterator[str]:
    """``auth_server.py`` whose access tokens live 2 seconds (refresh tokens do not expire)."""
    for port, _ in _serve(str(Path(__file__).with_name("auth_server.py")), "2"):
        yield f"http://127.0.0.1:{port}/mcp"
