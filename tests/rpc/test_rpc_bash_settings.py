"""Settings ``shellPath`` and ``shellCommandPrefix`` for the user's own commands (RPC ``bash``,
the interactive ``!cmd``): a real wrapper script as the shell, a real alias file as the prefix.
"""

from __future__ import annotations

import json
import stat

import pytest

from knightcode.rpc import RpcError

from .conftest import Rpc


def _settings(rpc: Rpc, **values: object) -> None:
    (rpc.agent_dir / "settings.json").write_text(
        json.dumps({"retry": {"baseDelayMs": 10}, **values})
    )


async def test_shell_path_and_prefix_run_the_users_command(rpc: Rpc) -> None:
    log = rpc.project.parent / "shell.log"
    shell = rpc.project.parent / "my-shell"
    # A custom shell that records how it was called, then hands over to bash.
    shell.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {log}\nexec /bin/bash "$@"\n')
    shell.chmod(shell.stat().st_mode | stat.S_IXUSR)
    aliases = rpc.project.parent / "aliases.sh"
    aliases.write_text("alias greet='echo hello from alias'\n")
    prefix = f"shopt -s expand_aliases\nsource {aliases}"
    _settings(rpc, shellPath=str(shell), shellCommandPrefix=prefix)
    client = await rpc.start()
    result = await client.bash("greet")
    assert (result["exitCode"], result["output"]) == (0, "hello from alias\n")
    called = log.read_text().splitlines()
    assert called[0] == "-c" and called[1:] == [*prefix.splitlines(), "greet"]
    # The recorded message keeps what the user typed, not the prefix.
    messages = await client.get_messages()
    assert messages[-1]["command"] == "greet"


async def test_a_prefix_with_set_e_stops_at_the_first_failure(rpc: Rpc) -> None:
    _settings(rpc, shellCommandPrefix="set -e")
    client = await rpc.start()
    result = await client.bash("false; echo not reached")
    assert (result["exitCode"], result["output"]) == (1, "")


async def test_a_missing_shell_path_is_a_clear_error(rpc: Rpc) -> None:
    _settings(rpc, shellPath="/no/such/shell")
    client = await rpc.start()
    with pytest.raises(RpcError, match="Custom shell path not found: /no/such/shell"):
        await client.bash("echo hi")
