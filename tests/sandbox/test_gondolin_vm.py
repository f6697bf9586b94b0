"""``GondolinRunner`` with a real Gondolin VM under TCG (QEMU software emulation).

Prerequisites come from ``scripts/ci/sandbox_gondolin.sh`` (see ``factory_gondolin``); without
them these tests skip locally and fail in CI (``KNIGHTCODE_REQUIRE_SANDBOXES=1``), naming the
command that installs them.
A boot costs about 10 s under TCG, so one VM serves the whole module, and the lifecycle test
(crash, restart, close) runs last on it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from knightcode import AbortSignal
from knightcode_builtins.gondolin.bridge import _dead
from knightcode_builtins.gondolin.config import SandboxConfig
from knightcode_builtins.gondolin.vm import GondolinRunner
from tests.sandbox import factory_gondolin
from tests.sandbox.conftest import need

pytestmark = pytest.mark.asyncio(loop_scope="module")

ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "TMPDIR": "/tmp"}
# Live (not zombie) processes inside the guest whose name is $1: sandboxd, as PID 1, leaves the
# orphans of a killed group as zombies, which are dead and hold nothing.
LIVE = (
    'for d in /proc/[0-9]*; do [ "$(cat $d/comm 2>/dev/null)" = "$1" ] || continue; '
    'grep -q "^State:.*Z" $d/status 2>/dev/null || echo ${d#/proc/}; done; true'
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gondolin-ws")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runner(workspace: Path) -> AsyncIterator[GondolinRunner]:
    need(factory_gondolin)
    config = factory_gondolin.config_for(SandboxConfig(backend="gondolin"))
    runner = GondolinRunner(workspace, config, state_dir=workspace.parent / "state")
    try:
        yield runner
    finally:
        await runner.close()


async def live(runner: GondolinRunner, name: str) -> list[str]:
    result = await runner.exec(["sh", "-c", LIVE, "live", name], cwd="/", env=ENV)
    return result.output.decode().split()


async def wait_none_live(runner: GondolinRunner, name: str, within: float = 5.0) -> list[str]:
    deadline = time.monotonic() + within
    while (left := await live(runner, name)) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return left


def host_group(runner: GondolinRunner) -> set[int]:
    """The host processes in the bridge's process group (Node and QEMU)."""
    pgid = runner.bridge_pid
    assert pgid is not None
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == pgid:
                    found.add(int(entry.name))
            except ProcessLookupError:
                continue
    return found


async def test_boot_and_first_exec(runner: GondolinRunner) -> None:
    started = time.monotonic()
    result = await runner.exec(["echo", "hello"], cwd="/workspace", env=ENV)
    print(f"boot + first exec: {time.monotonic() - started:.1f} s (boot {runner.boot_seconds} s)")
    assert result.exit_code == 0 and result.output == b"hello\n"
    assert runner.describe() == "gondolin micro-VM (tcg)"
    assert runner.shell() == "/bin/sh"  # the CI guest is busybox only


async def test_streaming_exit_codes_and_stderr(runner: GondolinRunner) -> None:
    chunks: list[tuple[float, bytes]] = []
    started = time.monotonic()
    result = await runner.exec(
        ["sh", "-c", "echo one; sleep 0.8; echo two"],
        cwd="/workspace",
        env=ENV,
        on_output=lambda data: chunks.append((time.monotonic() - started, data)),
    )
    total = time.monotonic() - started
    assert result.exit_code == 0 and b"".join(d for _, d in chunks) == b"one\ntwo\n"
    assert chunks[0][0] < total - 0.5, f"first chunk at {chunks[0][0]:.2f} s of {total:.2f} s"
    for code in (0, 3, 127):
        assert (await runner.exec(["sh", "-c", f"exit {code}"], cwd="/", env=ENV)).exit_code == code
    apart = await runner.exec(
        ["sh", "-c", "echo out; echo err >&2; exit 5"], cwd="/", env=ENV, merge_stderr=False
    )
    assert (apart.exit_code, apart.output, apart.stderr) == (5, b"out\n", b"err\n")
    with pytest.raises(FileNotFoundError):
        await runner.exec(["no-such-program"], cwd="/", env=ENV)
    with pytest.raises(FileNotFoundError):
        await runner.exec(["true"], cwd="/workspace/no/such/dir", env=ENV)


async def test_cwd_env_and_stdin(runner: GondolinRunner, workspace: Path) -> None:
    (workspace / "sub").mkdir(exist_ok=True)
    pwd = await runner.exec(["pwd"], cwd="/workspace/sub", env=ENV)
    assert pwd.output == b"/workspace/sub\n"
    env = await runner.exec(["env"], cwd="/", env={"PATH": ENV["PATH"], "FOO": "a b"})
    lines = env.output.decode().splitlines()
    assert "FOO=a b" in lines
    names = {line.split("=", 1)[0] for line in lines}
    assert names - {"PWD", "OLDPWD", "SHLVL"} == {"PATH", "FOO"}, (
        "the guest's HOME etc. are dropped"
    )
    data = bytes(range(256)) * 64
    echoed = await runner.exec(["cat"], cwd="/", env=ENV, stdin=data)
    assert echoed.output == data


async def test_write_through_both_ways(runner: GondolinRunner, workspace: Path) -> None:
    (workspace / "from-host.txt").write_bytes(b"host bytes \xff\n")
    inside = await runner.exec(["cat", "from-host.txt"], cwd="/workspace", env=ENV)
    assert inside.output == b"host bytes \xff\n"
    await runner.exec(["sh", "-c", "echo guest > /workspace/from-guest.txt"], cwd="/", env=ENV)
    assert (workspace / "from-guest.txt").read_bytes() == b"guest\n"
    outside = await runner.exec(["sh", "-c", "echo x > /tmp/only-inside"], cwd="/", env=ENV)
    assert outside.exit_code == 0 and not Path("/tmp/only-inside").exists()


async def test_network_is_off_by_default(runner: GondolinRunner) -> None:
    result = await runner.exec(["ls", "/sys/class/net"], cwd="/", env=ENV)
    assert result.output.split() == [b"lo"]


async def test_timeout_kills_the_whole_tree_inside(runner: GondolinRunner) -> None:
    await runner.start()
    before = host_group(runner)
    started = time.monotonic()
    result = await runner.exec(
        ["sh", "-c", "sleep 300 & sleep 300; wait"], cwd="/", env=ENV, timeout=1.0
    )
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 4
    assert await wait_none_live(runner, "sleep") == []
    assert host_group(runner) == before, "nothing new on the host: only Node and QEMU"


async def test_term_ignored_then_killed(runner: GondolinRunner) -> None:
    result = await runner.exec(
        ["sh", "-c", "trap '' TERM; sleep 300 & sleep 300; wait"], cwd="/", env=ENV, timeout=0.5
    )
    assert result.timed_out
    assert await wait_none_live(runner, "sleep") == []


async def test_abort_and_cancel_kill_the_tree(runner: GondolinRunner) -> None:
    abort = AbortSignal()
    asyncio.get_running_loop().call_later(0.5, abort.abort)
    started = time.monotonic()
    result = await runner.exec(
        ["sh", "-c", "sleep 300 & sleep 300"], cwd="/", env=ENV, signal=abort
    )
    assert result.aborted and time.monotonic() - started < 2.5
    assert await wait_none_live(runner, "sleep") == []

    task = asyncio.ensure_future(
        runner.exec(["sh", "-c", "sleep 300 & sleep 300"], cwd="/", env=ENV)
    )
    deadline = time.monotonic() + 5
    while not await live(runner, "sleep") and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_none_live(runner, "sleep") == []


async def test_three_execs_at_once(runner: GondolinRunner) -> None:
    started = time.monotonic()
    results = await asyncio.gather(
        *(runner.exec(["sh", "-c", f"sleep 1; echo {n}"], cwd="/", env=ENV) for n in range(3))
    )
    assert [r.output for r in results] == [b"0\n", b"1\n", b"2\n"]
    assert time.monotonic() - started < 2.5, "they ran one after another"


async def test_lifecycle_crash_restart_close(runner: GondolinRunner) -> None:
    """Last: kill the bridge's group (Node and QEMU), exec again (a new boot), then close."""
    first = runner.bridge_pid
    assert first is not None
    os.killpg(first, signal.SIGKILL)
    while not _dead(first):
        await asyncio.sleep(0.01)
    started = time.monotonic()
    again = await runner.exec(["echo", "again"], cwd="/workspace", env=ENV)
    print(f"restart after a crash: {time.monotonic() - started:.1f} s")
    assert again.output == b"again\n"
    second, temp = runner.bridge_pid, runner.temp_dir
    assert second not in (None, first) and temp is not None and temp.is_dir()
    await runner.close()
    await runner.close()
    with pytest.raises(ProcessLookupError):
        os.killpg(second, 0)
    assert not temp.exists(), "Gondolin's qcow2 overlay and sockets go with the private TMPDIR"
