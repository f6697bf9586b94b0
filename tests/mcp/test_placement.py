"""Where a stdio server's command runs (``_placement.py``) and the backend side of it
(:class:`knightcode.HostCommands`): bwrap's host command line runs the process inside with the
caller's variables passed in the environment (never in argv) and the spawner's own additions
kept out; a sandbox that cannot run such a process fails the server with the opt-out named; a
start before the session's backend is known waits for it (the listing while plugins register
excepted). Real bwrap, a real (unstarted) container runner; no fakes.
"""

from __future__ import annotations

import asyncio
import errno
import subprocess
from pathlib import Path

import pytest

from knightcode import HostCommand
from knightcode_builtins.gondolin.backend import SandboxBackend
from knightcode_builtins.gondolin.config import parse_config
from knightcode_builtins.gondolin.vm import GondolinRunner
from knightcode_builtins.mcp._placement import Placement, PlacementError
from knightcode_builtins.mcp.config import ServerConfig
from tests.sandbox import factory_bwrap, factory_container


def _server(tmp_path: Path, **extra: object) -> ServerConfig:
    return ServerConfig(
        name="s", source=tmp_path / "mcp.json", command="sh", args=("-c", "true"), **extra
    )  # type: ignore[arg-type]


def _spawn(command: HostCommand) -> subprocess.CompletedProcess[str]:
    """Start ``command`` as the SDK does: its environment plus host variables the SDK adds on
    its own (LOGNAME, which must stay out), a line on stdin.
    """
    return subprocess.run(
        command.argv,
        env={**command.env, "LOGNAME": "host-user"},
        input="piped\n",
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_bwrap_host_command_runs_inside_with_the_environment_out_of_argv(
    tmp_path: Path,
) -> None:
    factory_bwrap.require()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = parse_config({"backend": "bwrap"})

    async def run() -> tuple[tuple[str, ...], subprocess.CompletedProcess[str]]:
        runner = await factory_bwrap.create(workspace, config)
        backend = SandboxBackend(runner, workspace, config, host_environment={})
        try:
            script = 'echo "$SECRET_X|${LOGNAME:-unset}|$HOME"; pwd; cat'
            command = backend.host_command(
                ["sh", "-c", script], env={"SECRET_X": "tok-123"}, scrub=["LOGNAME"]
            )
            return command.argv, _spawn(command)
        finally:
            await runner.close()

    argv, done = asyncio.run(run())
    assert "tok-123" not in " ".join(argv)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["tok-123|unset|/tmp", "/workspace", "piped"]


def test_a_program_missing_inside_names_the_fixes(tmp_path: Path) -> None:
    factory_bwrap.require()
    config = parse_config({"backend": "bwrap"})

    async def attempt() -> None:
        runner = await factory_bwrap.create(tmp_path, config)
        placement = Placement(pending=True)
        placement.decide(SandboxBackend(runner, tmp_path, config, host_environment={}))
        try:
            server = ServerConfig(name="s", source=tmp_path / "mcp.json", command="/opt/nowhere")
            await placement.parameters(server)
        finally:
            await runner.close()

    with pytest.raises(PlacementError) as raised:
        asyncio.run(attempt())
    assert str(raised.value) == (
        "cannot run '/opt/nowhere' in the bwrap sandbox: /opt/nowhere is not inside it; bind "
        "its folder in (settings sandbox.bwrap.roBinds) or set \"sandbox\": false for 's' in "
        f"{tmp_path / 'mcp.json'} to run it on this machine"
    )


def test_container_host_command_runs_inside_with_the_environment_in_a_file(
    tmp_path: Path,
) -> None:
    factory_container.require()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = factory_container.container_config()

    async def run() -> tuple[tuple[str, ...], subprocess.CompletedProcess[str]]:
        runner = await factory_container.create(workspace, config)
        backend = SandboxBackend(runner, workspace, config, host_environment={})
        await backend.prepare()
        try:
            command = backend.host_command(
                ["sh", "-c", 'echo "$SECRET_X|${LOGNAME:-unset}"; pwd; cat'],
                env={"SECRET_X": "tok-456"},
            )
            return command.argv, _spawn(command)
        finally:
            await backend.aclose()

    argv, done = asyncio.run(run())
    assert "tok-456" not in " ".join(argv)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["tok-456|unset", "/workspace", "piped"]


def test_a_sandbox_without_pipes_fails_the_server_naming_the_opt_out(tmp_path: Path) -> None:
    config = parse_config({"backend": "gondolin"})
    runner = GondolinRunner(tmp_path, config, state_dir=tmp_path / "state")
    backend = SandboxBackend(runner, tmp_path, config)
    with pytest.raises(OSError) as raised:
        backend.host_command(["true"])
    assert raised.value.errno == errno.ENOTSUP
    placement = Placement(pending=True)
    placement.decide(backend)
    with pytest.raises(PlacementError, match=r"set \"sandbox\": false for 's' in .*mcp.json"):
        asyncio.run(placement.parameters(_server(tmp_path)))
    # The opt-out runs it on this machine.
    params, provisional = asyncio.run(placement.parameters(_server(tmp_path, sandbox=False)))
    assert (params.command, provisional) == ("sh", False)


def test_a_start_before_the_session_waits_for_its_backend(tmp_path: Path) -> None:
    placement = Placement(pending=True)
    # The listing while plugins register runs on this machine, marked to be moved.
    params, provisional = asyncio.run(placement.parameters(_server(tmp_path), True))
    assert (params.command, provisional) == ("sh", True)
    # Any other start waits, up to the server's timeout.
    with pytest.raises(PlacementError, match="not ready in time"):
        asyncio.run(placement.parameters(_server(tmp_path, timeout=0.2)))

    async def decided_meanwhile() -> bool:
        waiting = asyncio.ensure_future(placement.parameters(_server(tmp_path, timeout=10)))
        await asyncio.sleep(0.1)
        assert not waiting.done()
        placement.decide(None)  # no sandbox: this machine
        _, provisional = await waiting
        return provisional

    assert asyncio.run(decided_meanwhile()) is False
