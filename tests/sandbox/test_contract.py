"""The execution-backend contract, for real, over every backend: local, bwrap, container (podman
here) and gondolin (a micro-VM under TCG).

Files, exec with streaming, exit codes, timeout/abort/cancellation killing the whole tree,
concurrency, the environment policy, write-through both ways, the seven tools routed, and escape
attempts. ``box`` (conftest) is one started backend per module and runner.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from pathlib import Path

import pytest

from knightcode import AbortSignal, ExecResult, ToolContext
from knightcode._tools import create_builtin_tools
from knightcode_builtins.gondolin.backend import SandboxBackend
from knightcode_builtins.gondolin.config import SandboxConfig

from .conftest import SANDBOXES, Box

pytestmark = pytest.mark.asyncio(loop_scope="module")

isolated = pytest.mark.parametrize("box", SANDBOXES, indirect=True)
"""For tests of what only a sandbox does (the local backend *is* the host)."""


def text(result: ExecResult) -> str:
    return result.output.decode("utf-8", "replace")


async def sh(box: Box, script: str, **kwargs: object) -> ExecResult:
    return await box.backend.exec(shell_command=script, **kwargs)  # type: ignore[arg-type]


def host_processes(token: str) -> list[str]:
    """Host processes whose command line holds ``token`` (a unique number: each ``sleep`` of a
    test sleeps its own) (the bwrap and container sandboxes'
    processes are host processes too; a VM's are not).
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if token.encode() in cmdline:
            found.append(cmdline.replace(b"\0", b" ").decode("utf-8", "replace"))
    return found


async def inside_processes(box: Box, token: str) -> str:
    """Processes inside the sandbox whose command line holds ``token`` (none for bwrap: each
    command has its own PID namespace, so the host check is the one that counts there).
    """
    # "[4]2" matches "42" but not the pattern itself, in the command line of this very grep
    pattern = f"[{token[0]}]{token[1:]}"
    result = await sh(box, f"grep -l '{pattern}' /proc/[0-9]*/cmdline 2>/dev/null")
    return text(result)


async def assert_tree_gone(box: Box, token: str) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if not host_processes(token) and not (await inside_processes(box, token)).strip():
            return
        await asyncio.sleep(0.2)
    raise AssertionError(
        f"left over: host {host_processes(token)}, inside {await inside_processes(box, token)}"
    )


# --- files ---


async def test_binary_bytes_round_trip_and_are_the_hosts(box: Box) -> None:
    host, agent = box.fresh()
    data = bytes(range(256)) * 64 + b"\xff\xfe not utf-8"
    await box.backend.write_file(f"{agent}/deep/er/blob.bin", data)
    assert (host / "deep/er/blob.bin").read_bytes() == data
    assert await box.backend.read_file(f"{agent}/deep/er/blob.bin") == data


async def test_stat_exists_and_list_dir(box: Box) -> None:
    host, agent = box.fresh()
    (host / "a.txt").write_text("12345")
    (host / "sub").mkdir()
    (host / "link-to-sub").symlink_to("sub")
    info = await box.backend.stat(f"{agent}/a.txt")
    assert info is not None and info.is_file and info.size == 5
    folder = await box.backend.stat(f"{agent}/sub")
    assert folder is not None and folder.is_dir
    assert await box.backend.stat(f"{agent}/missing") is None
    assert not await box.backend.exists(f"{agent}/missing")
    entries = {entry.name: entry.is_dir for entry in await box.backend.list_dir(agent)}
    assert entries == {"a.txt": False, "sub": True, "link-to-sub": True}


async def test_missing_file_and_directory_reads_fail_with_errno(box: Box) -> None:
    _, agent = box.fresh()
    with pytest.raises(FileNotFoundError):
        await box.backend.read_file(f"{agent}/nope.txt")
    with pytest.raises(IsADirectoryError):
        await box.backend.read_file(agent)


async def test_write_through_both_ways(box: Box) -> None:
    host, agent = box.fresh()
    written = await sh(box, "printf 'from inside' > inside.txt", cwd=agent)
    assert written.exit_code == 0, text(written)
    assert (host / "inside.txt").read_text() == "from inside"
    (host / "outside.txt").write_text("from the host")
    seen = await sh(box, "cat outside.txt", cwd=agent)
    assert text(seen) == "from the host"


@isolated
async def test_sandbox_only_paths_never_touch_the_hosts_files(box: Box) -> None:
    name = f"/tmp/kc-contract-{secrets.token_hex(4)}"
    await box.backend.write_file(name, b"guest file")
    assert not Path(name).exists()
    assert await box.backend.read_file(name) == b"guest file"
    seen = await sh(box, f"cat {name}")
    assert text(seen) == "guest file"  # the file layer and commands see the same /tmp


@isolated
async def test_a_link_out_of_the_workspace_is_refused(box: Box, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    host, agent = box.fresh()
    (host / "escape").symlink_to(secret)
    (host / "escape-dir").symlink_to(tmp_path)
    with pytest.raises(PermissionError, match="outside the workspace"):
        await box.backend.read_file(f"{agent}/escape")
    with pytest.raises(PermissionError):
        await box.backend.write_file(f"{agent}/escape-dir/new.txt", b"x")
    assert not (tmp_path / "new.txt").exists()
    assert await box.backend.stat(f"{agent}/escape") is None
    # ... and commands inside follow the link inside, where the host file does not exist
    result = await sh(box, "cat escape", cwd=agent, merge_stderr=True)
    assert "host secret" not in text(result)


@isolated
async def test_dotdot_and_host_paths_outside_reach_the_sandbox_not_the_host(
    box: Box, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    with pytest.raises(OSError):
        await box.backend.read_file(str(secret))
    with pytest.raises(OSError):
        await box.backend.read_file(f"/workspace/../{secret}")
    # a host-absolute path *inside* the working folder is accepted (the model may have seen one)
    host, _ = box.fresh()
    (host / "f.txt").write_text("inside")
    assert await box.backend.read_file(str(host / "f.txt")) == b"inside"


# --- exec ---


async def test_exit_codes_and_separate_streams(box: Box) -> None:
    assert (await sh(box, "true")).exit_code == 0
    assert (await sh(box, "exit 3")).exit_code == 3
    missing = await sh(box, "no-such-command-kc")
    assert missing.exit_code == 127
    split = await sh(box, "echo out; echo err >&2", merge_stderr=False)
    assert text(split) == "out\n" and split.stderr == b"err\n"
    merged = await sh(box, "echo out; echo err >&2")
    assert sorted(text(merged).split()) == ["err", "out"]


async def test_argv_runs_without_a_shell(box: Box) -> None:
    result = await box.backend.exec(["echo", "a b", "$HOME"])
    assert text(result) == "a b $HOME\n"


async def test_cwd_inside_the_workspace(box: Box) -> None:
    host, agent = box.fresh()
    (host / "sub").mkdir()
    result = await sh(box, "pwd", cwd=f"{agent}/sub")
    assert text(result).strip() == f"{agent}/sub"
    if box.isolated:
        default = await sh(box, "pwd")
        assert text(default).strip() == "/workspace"


async def test_output_streams_before_the_process_ends(box: Box) -> None:
    arrivals: list[tuple[float, bytes]] = []
    started = time.monotonic()
    result = await sh(
        box,
        "echo first; sleep 1.5; echo second",
        on_output=lambda chunk: arrivals.append((time.monotonic() - started, chunk)),
    )
    ended = time.monotonic() - started
    assert result.exit_code == 0 and result.output == b""
    assert b"".join(chunk for _, chunk in arrivals) == b"first\nsecond\n"
    assert arrivals[0][1].startswith(b"first")
    assert ended - arrivals[0][0] > 1.0, arrivals  # the first line came well before the end


async def test_stdin_and_large_output_do_not_deadlock(box: Box) -> None:
    result = await box.backend.exec(["wc", "-c"], stdin=b"x" * 300_000)  # type: ignore[call-arg]
    assert text(result).strip() == "300000"
    big = await sh(box, "head -c 4194304 /dev/zero | tr '\\0' a")
    assert len(big.output) == 4 * 1024 * 1024


async def test_timeout_kills_the_whole_tree(box: Box) -> None:
    token = f"{secrets.randbelow(10**6) + 4_000_000}"
    started = time.monotonic()
    result = await sh(box, f"sleep {token} & (sleep {token}; :) & sleep {token}; wait", timeout=1.0)
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 6
    await assert_tree_gone(box, token)


async def test_abort_kills_the_whole_tree(box: Box) -> None:
    token = f"{secrets.randbelow(10**6) + 5_000_000}"
    signal = AbortSignal()
    asyncio.get_running_loop().call_later(0.8, signal.abort)
    result = await sh(box, f"trap '' TERM; sleep {token} & sleep {token}; wait", signal=signal)
    assert result.aborted
    await assert_tree_gone(box, token)


async def test_cancelling_the_caller_kills_the_whole_tree(box: Box) -> None:
    token = f"{secrets.randbelow(10**6) + 6_000_000}"
    task = asyncio.ensure_future(sh(box, f"sleep {token} & sleep {token}; wait"))
    await asyncio.sleep(1.0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await assert_tree_gone(box, token)


async def test_three_commands_run_at_once(box: Box) -> None:
    started = time.monotonic()
    results = await asyncio.gather(*(sh(box, f"sleep 1; echo {n}") for n in range(3)))
    assert [text(result).strip() for result in results] == ["0", "1", "2"]
    assert time.monotonic() - started < 2.8


@isolated
async def test_environment_policy(box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(box.backend, SandboxBackend)
    monkeypatch.setenv("KC_CONTRACT_API_KEY", "sk-host-secret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    shown = text(await sh(box, "env"))
    assert "sk-host-secret" not in shown
    assert "LANG=C.UTF-8" in shown
    assert f"PATH={box.backend.environment()['PATH']}" in shown
    # a caller passing the host's environment gets it screened
    screened = text(await sh(box, "env", env={**os.environ, "MINE": "kept"}))
    assert "sk-host-secret" not in screened and "MINE=kept" in screened
    # "inherit" passes it, as documented; envSet always applies
    inherit = SandboxBackend(
        box.backend.runner,
        box.host_root,
        SandboxConfig(backend=box.name, env="inherit", env_set={"SET_INSIDE": "yes"}),
    )
    shown = text(await inherit.exec(shell_command="env"))
    assert "KC_CONTRACT_API_KEY=sk-host-secret" in shown and "SET_INSIDE=yes" in shown
    assert f"HOME={box.backend.environment()['HOME']}" in shown  # never the host's HOME


# --- the seven tools, routed ---


async def test_the_seven_tools_work_inside(box: Box) -> None:
    host, agent = box.fresh()
    (host / "src").mkdir()
    (host / "src" / "app.py").write_text("def main():\n    return 'needle'\n")
    tools = create_builtin_tools()
    ctx = ToolContext(cwd=Path(agent), backend=box.backend)

    async def call(name: str, **args: object) -> str:
        result = await tools[name].execute(f"c-{name}", dict(args), ctx, None)  # type: ignore[misc]
        return "".join(block.get("text", "") for block in result["content"])

    assert "needle" in await call("read", path="src/app.py")
    await call("write", path="notes/new.md", content="hello\n")
    assert (host / "notes" / "new.md").read_text() == "hello\n"
    await call("edit", path="notes/new.md", edits=[{"oldText": "hello", "newText": "bye"}])
    assert (host / "notes" / "new.md").read_text() == "bye\n"
    listing = await call("ls", path=".")
    assert "src/" in listing and "notes/" in listing
    assert "src/app.py" in await call("find", pattern="**/*.py")
    found = await call("grep", pattern="needle")
    assert "src/app.py:2:" in found and str(host) not in found
    assert "hello-from-bash" in await call("bash", command="echo hello-from-bash; pwd")
    assert agent in await call("bash", command="pwd")


@isolated
async def test_grep_outside_the_workspace_is_refused(box: Box) -> None:
    tools = create_builtin_tools()
    ctx = ToolContext(cwd=Path("/workspace"), backend=box.backend)
    with pytest.raises(Exception, match="outside the workspace"):
        await tools["grep"].execute("g", {"pattern": "root", "path": "/etc"}, ctx, None)  # type: ignore[misc]


@isolated
async def test_the_network_is_off_by_default(box: Box) -> None:
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        result = await sh(
            box,
            f"(command -v bash >/dev/null && bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' "
            f"|| nc -w 2 127.0.0.1 {port} </dev/null) 2>&1; echo rc=$?",
        )
    finally:
        server.close()
    assert "rc=0" not in text(result), text(result)
