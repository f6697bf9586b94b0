"""Embed knightcode in a Python program: drive ``knightcode --mode rpc`` as a subprocess.

::

    from knightcode.rpc import Client

    async with Client(["--model", "anthropic/claude-sonnet-4-5"], cwd="/path/to/project") as kc:
        events = await kc.prompt_and_wait("Summarise README.md")
        print(await kc.get_last_assistant_text())

See ``docs/rpc.md`` for the protocol and every command.
"""

from __future__ import annotations

from knightcode.rpc._client import Client, RpcClosedError, RpcError

__all__ = ["Client", "RpcClosedError", "RpcError"]
