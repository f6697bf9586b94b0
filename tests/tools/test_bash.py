"""The bash tool: the reference's bash cases plus streaming, spill file, abort and timeout."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import stat
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from knightcode._tools import LocalBackend, ToolContext, ToolError
from knightcode._tools.bash import shell_environment

from .helpers import is_alive, run, text_of


async def test_simple_command(ctx: ToolContext) -> None:
    result = await run("bash", {"command": "echo 'test output'"}, ctx)
    assert text_of(result) == "test output\n"
    assert result["details"] is None


async def test_runs_in_cwd_with_stderr_merged(ctx: ToolContext, project_dir: Path) -> None:
    result = await run("bash", {"command": "pwd; echo oops >&2"}, ctx)
    assert text_of(result) == f"{project_dir}\noops\n"


async def test_no_output(ctx: ToolContext) -> None:
    assert text_of(await run("bash", {"command": "true"}, ctx)) == "(no output)"


async def test_command_error(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as info:
        await run("bash", {"command": "exit 1"}, ctx)
    assert str(info.value) == "(no output)\n\nCommand exited with code 1"


async def test_command_error_keeps_output(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as info:
        await run("bash", {"command": "echo failing; exit 3"}, ctx)
    assert str(info.value) == "failing\n\n\nCommand exited with code 3"


async def test_killed_by_signal_is_not_an_error(ctx: ToolContext) -> None:
    # The reference treats a null exit code (death by signal) as success.
    result = await run("bash", {"command": "echo before; kill -9 $$"}, ctx)
    assert text_of(result) == "before\n"


async def test_timeout(ctx: ToolContext) -> None:
    started = time.monotonic()
    with pytest.raises(ToolError) as info:
        await run("bash", {"command": "echo started; sleep 5", "timeout": 1}, ctx)
    assert str(info.value) == "started\n\n\nCommand timed out after 1 seconds"
    assert time.monotonic() - started < 3


async def test_fractional_timeout_text(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"^Command timed out after 0\.3 seconds$"):
        await run("bash", {"command": "sleep 5", "timeout": 0.3}, ctx)


async def test_missing_cwd(tmp_path: Path) -> None:
    missing = "/this/directory/definitely/does/not/exist/12345"
    ctx = ToolContext(Path(missing), LocalBackend(tmp_path))
    with pytest.raises(ToolError) as info:
        await run("bash", {"command": "echo test"}, ctx)
    assert (
        str(info.value)
        == f"Working directory does not exist: {missing}\nCannot execute bash commands."
    )


async def test_spawn_error(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        LocalBackend, "default_shell", lambda self: "/nonexistent-shell-path-xyz123"
    )
    with pytest.raises(ToolError, match=r"^spawn /nonexistent-shell-path-xyz123 ENOENT$"):
        await run("bash", {"command": "echo test"}, ctx)


async def test_custom_shell_path(ctx: ToolContext, project_dir: Path) -> None:
    shell = project_dir / "myshell"
    shell.write_text('#!/bin/sh\necho "custom shell got: $2"\n')
    shell.chmod(shell.stat().st_mode | stat.S_IXUSR)
    ctx = dataclasses.replace(ctx, shell_path=str(shell))
    assert text_of(await run("bash", {"command": "ls"}, ctx)) == "custom shell got: ls\n"


async def test_missing_custom_shell(ctx: ToolContext) -> None:
    ctx = dataclasses.replace(ctx, shell_path="/no/such/shell")
    with pytest.raises(ToolError, match=r"^Custom shell path not found: /no/such/shell$"):
        await run("bash", {"command": "echo x"}, ctx)


async def test_command_prefix(ctx: ToolContext) -> None:
    ctx = dataclasses.replace(ctx, shell_command_prefix="export TEST_VAR=testValue")
    assert text_of(await run("bash", {"command": "echo $TEST_VAR"}, ctx)).strip() == "testValue"


async def test_command_prefix_output_comes_first(ctx: ToolContext) -> None:
    ctx = dataclasses.replace(ctx, shell_command_prefix="echo init-ready")
    result = await run("bash", {"command": "echo command-ready"}, ctx)
    assert text_of(result) == "init-ready\ncommand-ready\n"


async def test_agent_bin_first_on_path(ctx: ToolContext, agent_dir: Path) -> None:
    tool = agent_dir / "bin" / "kc-helper"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho helper ran\n")
    tool.chmod(0o755)
    ctx = dataclasses.replace(ctx, agent_dir=agent_dir)
    assert text_of(await run("bash", {"command": "kc-helper"}, ctx)) == "helper ran\n"


def test_shell_environment_prepends_once() -> None:
    env = shell_environment({"PATH": "/usr/bin"}, "/agent")
    assert env["PATH"] == f"/agent/bin{os.pathsep}/usr/bin"
    assert shell_environment(env, "/agent")["PATH"] == env["PATH"]
    assert shell_environment({"Path": ""}, "/a") == {"Path": "/a/bin"}
    assert shell_environment({"PATH": "/x"}, None) == {"PATH": "/x"}


async def test_spills_large_output_by_lines(ctx: ToolContext) -> None:
    result = await run("bash", {"command": "seq 1 30000"}, ctx)
    text = text_of(result)
    notice = re.search(r"\n\n\[Showing lines 28002-30001 of 30001\. Full output: (.+)\]$", text)
    assert notice is not None
    spill = Path(notice.group(1))
    assert re.fullmatch(r"knightcode-bash-[0-9a-f]{16}\.log", spill.name)
    assert spill.read_text() == "".join(f"{i}\n" for i in range(1, 30001))
    assert text.startswith("28002\n")
    details = result["details"]
    assert details["fullOutputPath"] == str(spill)
    assert details["truncation"]["truncatedBy"] == "lines"
    spill.unlink()


async def test_spills_large_output_by_bytes(ctx: ToolContext) -> None:
    result = await run(
        "bash", {"command": "for i in $(seq 1 1000); do printf '%0100d\\n' $i; done"}, ctx
    )
    text = text_of(result)
    notice = re.search(
        r"\[Showing lines (\d+)-1001 of 1001 \(50\.0KB limit\)\. Full output: (.+)\]$", text
    )
    assert notice is not None
    assert int(notice.group(1)) > 1
    assert len(Path(notice.group(2)).read_bytes()) == 101000
    Path(notice.group(2)).unlink()


async def test_partial_last_line(ctx: ToolContext) -> None:
    result = await run("bash", {"command": "head -c 100000 /dev/zero | tr '\\0' a"}, ctx)
    text = text_of(result)
    assert text.startswith(
        "a" * 51200 + "\n\n[Showing last 50.0KB of line 1 (line is 97.7KB). Full output: "
    )
    Path(text.rsplit("Full output: ", 1)[1][:-1]).unlink()


async def test_streams_partial_output_throttled(ctx: ToolContext) -> None:
    updates: list[dict[str, Any]] = []
    command = "for i in $(seq 1 60); do echo line$i; sleep 0.01; done"
    started = time.monotonic()
    result = await run("bash", {"command": command}, ctx, updates.append)
    elapsed = time.monotonic() - started
    assert updates[0] == {"content": [], "details": None}
    texts = [u["content"][0]["text"] for u in updates[1:]]
    assert len(texts) >= 2, "expected partial output while the command ran"
    assert texts[-1] == text_of(result)
    assert all(later.startswith(earlier) for earlier, later in pairwise(texts))
    # 60 lines arrive in 60 chunks, but updates go out at most every 100 ms (+ the final flush).
    assert len(texts) <= elapsed / 0.1 + 2


async def test_async_update_callback_is_awaited(ctx: ToolContext) -> None:
    seen: list[str] = []

    async def on_update(partial: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        seen.append("".join(block["text"] for block in partial["content"]))

    await run("bash", {"command": "echo hi"}, ctx, on_update)
    assert seen[-1] == "hi\n"


async def _wait_for_file(path: Path) -> str:
    for _ in range(200):
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} was not written")


async def test_abort_kills_the_whole_process_group(ctx: ToolContext, project_dir: Path) -> None:
    pid_file = project_dir / "grandchild.pid"
    task = asyncio.ensure_future(
        run("bash", {"command": f"echo started; sleep 300 & echo $! > {pid_file}; wait"}, ctx)
    )
    grandchild = int(await _wait_for_file(pid_file))
    assert is_alive(grandchild)
    ctx.signal.abort()
    with pytest.raises(ToolError) as info:
        await asyncio.wait_for(task, 5)
    assert str(info.value) == "started\n\n\nCommand aborted"
    for _ in range(50):
        if not is_alive(grandchild):
            break
        await asyncio.sleep(0.02)
    assert not is_alive(grandchild)


async def test_timeout_kills_background_grandchild(ctx: ToolContext, project_dir: Path) -> None:
    pid_file = project_dir / "bg.pid"
    with pytest.raises(ToolError, match="timed out"):
        await run(
            "bash", {"command": f"sleep 300 & echo $! > {pid_file}; wait", "timeout": 0.5}, ctx
        )
    grandchild = int(pid_file.read_text())
    for _ in range(50):
        if not is_alive(grandchild):
            break
        await asyncio.sleep(0.02)
    assert not is_alive(grandchild)


async def test_cancelling_the_task_kills_the_group(ctx: ToolContext, project_dir: Path) -> None:
    pid_file = project_dir / "c.pid"
    task = asyncio.ensure_future(
        run("bash", {"command": f"sleep 300 & echo $! > {pid_file}; wait"}, ctx)
    )
    grandchild = int(await _wait_for_file(pid_file))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(100):
        if not is_alive(grandchild):
            break
        await asyncio.sleep(0.02)
    assert not is_alive(grandchild)


async def test_aborted_before_start(ctx: ToolContext, project_dir: Path) -> None:
    ctx.signal.abort()
    with pytest.raises(ToolError, match=r"^Command aborted$"):
        await run("bash", {"command": f"touch {project_dir / 'ran'}"}, ctx)
    assert not (project_dir / "ran").exists()


async def test_background_job_does_not_hold_the_result(ctx: ToolContext, project_dir: Path) -> None:
    # Like the reference, a job the command leaves behind keeps running but is not waited for.
    pid_file = project_dir / "bg.pid"
    started = time.monotonic()
    result = await run("bash", {"command": f"sleep 30 & echo $! > {pid_file}; echo done"}, ctx)
    assert text_of(result) == "done\n"
    assert time.monotonic() - started < 5
    os.kill(int(pid_file.read_text()), 9)
