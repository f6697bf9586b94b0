"""The gondolin bridge protocol and ``GondolinRunner``, against a fake Gondolin module.

``fake_gondolin/`` stands in for ``@earendil-works/gondolin``: the same SDK calls, commands run
as host processes. So these tests run ``bridge.mjs`` for real with any Node (>= 18), in about a
second each, and check what the real VM cannot show cheaply: the requests the bridge makes of
the SDK, the kill wrapper's process-group handling, crash and shutdown clean-up. The real VM
runs the same runner in ``test_gondolin_vm.py``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from knightcode import AbortSignal
from knightcode_builtins.gondolin.bridge import Bridge, BridgeError
from knightcode_builtins.gondolin.config import GondolinConfig, SandboxConfig
from knightcode_builtins.gondolin.node import Prerequisites, module_root
from knightcode_builtins.gondolin.runner import SandboxUnavailable
from knightcode_builtins.gondolin.vm import GondolinRunner

FAKE = Path(__file__).with_name("fake_gondolin")
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root"}


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("the bridge tests need node on PATH (any version >= 18)")
    return node


@pytest.fixture
def package_dir(tmp_path: Path) -> Path:
    """A folder whose node_modules holds the fake under Gondolin's package name."""
    root = module_root(tmp_path / "pkg")
    root.parent.mkdir(parents=True)
    root.symlink_to(FAKE, target_is_directory=True)
    return tmp_path / "pkg"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


def make_runner(
    workspace: Path, package_dir: Path, state_dir: Path, config: SandboxConfig | None = None
) -> GondolinRunner:
    needs = Prerequisites(_node(), package_dir, None, "qemu-system-x86_64")
    config = config or SandboxConfig(backend="gondolin")
    return GondolinRunner(workspace, config, state_dir=state_dir, needs=needs)


@pytest.fixture
async def runner(
    workspace: Path, package_dir: Path, state_dir: Path
) -> AsyncIterator[GondolinRunner]:
    runner = make_runner(workspace, package_dir, state_dir)
    try:
        yield runner
    finally:
        await runner.close()


def options_file(runner: GondolinRunner) -> Path:
    """What the fake recorded of the bridge's VM.create options (in the private TMPDIR)."""
    assert runner.temp_dir is not None
    return runner.temp_dir / "fake-gondolin-options.json"


def host_processes(marker: str) -> list[str]:
    """Host processes whose command line contains ``marker`` (the fake's 'guest' is the host)."""
    out = subprocess.run(["ps", "-eo", "pid,stat,args"], capture_output=True, text=True).stdout
    return [
        line
        for line in out.splitlines()
        if marker in line and "ps -eo" not in line and " Z" not in line
    ]


def sleep_marker() -> str:
    """A sleep duration nothing else on the machine uses, to find its processes."""
    return f"42{secrets.randbelow(10**6):06d}"


async def wait_gone(marker: str, within: float = 3.0) -> list[str]:
    deadline = time.monotonic() + within
    while (left := host_processes(marker)) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return left


async def test_exec_streams_output_and_reports_exit_codes(runner: GondolinRunner) -> None:
    chunks: list[tuple[float, bytes]] = []
    started = time.monotonic()
    result = await runner.exec(
        ["sh", "-c", "echo first; sleep 0.6; echo second"],
        cwd="/workspace",
        env=ENV,
        on_output=lambda data: chunks.append((time.monotonic() - started, data)),
    )
    total = time.monotonic() - started
    assert result.exit_code == 0 and result.output == b""
    assert b"".join(data for _, data in chunks) == b"first\nsecond\n"
    assert chunks[0][0] < total - 0.4, "the first chunk must arrive while the command runs"
    for code in (0, 3, 127):
        result = await runner.exec(["sh", "-c", f"exit {code}"], cwd="/workspace", env=ENV)
        assert result.exit_code == code


async def test_stderr_apart_or_merged(runner: GondolinRunner) -> None:
    argv = ["sh", "-c", "echo out; echo err >&2"]
    apart = await runner.exec(argv, cwd="/workspace", env=ENV, merge_stderr=False)
    assert (apart.output, apart.stderr) == (b"out\n", b"err\n")
    merged = await runner.exec(argv, cwd="/workspace", env=ENV)
    assert sorted(merged.output.splitlines()) == [b"err", b"out"] and merged.stderr == b""


async def test_missing_program_or_cwd_is_enoent(runner: GondolinRunner) -> None:
    with pytest.raises(FileNotFoundError) as program:
        await runner.exec(["no-such-program-kc"], cwd="/workspace", env=ENV)
    assert program.value.filename == "no-such-program-kc"
    with pytest.raises(FileNotFoundError) as cwd:
        await runner.exec(["true"], cwd="/workspace/missing", env=ENV)
    assert cwd.value.filename == "/workspace/missing"
    with pytest.raises(FileNotFoundError):
        await runner.exec(["/workspace/nothing-here"], cwd="/workspace", env=ENV)
    # a program that exists but exits 127 itself is an ordinary result
    result = await runner.exec(
        ["sh", "-c", "echo x >&2; exit 127"], cwd="/", env=ENV, merge_stderr=False
    )
    assert (result.exit_code, result.stderr) == (127, b"x\n")


async def test_stdin_bytes_reach_the_process(runner: GondolinRunner) -> None:
    data = bytes(range(256)) * 300
    result = await runner.exec(["cat"], cwd="/workspace", env=ENV, stdin=data)
    assert result.exit_code == 0 and result.output == data
    empty = await runner.exec(["cat"], cwd="/workspace", env=ENV)
    assert empty.output == b""


async def test_environment_is_exactly_the_one_given(runner: GondolinRunner) -> None:
    result = await runner.exec(["env"], cwd="/workspace", env={**ENV, "FOO": "bar baz"})
    names = {line.split("=", 1)[0] for line in result.output.decode().splitlines()}
    assert "FOO=bar baz" in result.output.decode().splitlines()
    # the fake guest's own FAKE_GUEST and TMPDIR are dropped: not in the request
    assert names - {"PWD", "OLDPWD", "SHLVL", "_"} == {"PATH", "HOME", "FOO"}


async def test_timeout_kills_the_whole_tree(runner: GondolinRunner) -> None:
    marker = sleep_marker()
    started = time.monotonic()
    result = await runner.exec(
        ["sh", "-c", f"sleep {marker} & sleep {marker}; wait"],
        cwd="/workspace",
        env=ENV,
        timeout=0.5,
    )
    assert result.timed_out and not result.aborted and result.exit_code is None
    assert time.monotonic() - started < 3
    assert await wait_gone(marker) == []


async def test_a_tree_that_ignores_term_is_killed(runner: GondolinRunner) -> None:
    marker = sleep_marker()
    result = await runner.exec(
        ["sh", "-c", f"trap '' TERM; sleep {marker} & sleep {marker}; wait"],
        cwd="/workspace",
        env=ENV,
        timeout=0.3,
    )
    assert result.timed_out
    assert await wait_gone(marker) == []


async def test_abort_kills_the_tree_at_once(runner: GondolinRunner) -> None:
    await runner.start()
    marker = sleep_marker()
    signal_ = AbortSignal()
    asyncio.get_running_loop().call_later(0.3, signal_.abort)
    started = time.monotonic()
    result = await runner.exec(
        ["sh", "-c", f"sleep {marker} & sleep {marker}"], cwd="/", env=ENV, signal=signal_
    )
    assert result.aborted and not result.timed_out
    assert time.monotonic() - started < 2
    assert await wait_gone(marker) == []
    already = await runner.exec(["true"], cwd="/", env=ENV, signal=signal_)
    assert already.aborted


async def test_cancelling_the_caller_kills_the_tree(runner: GondolinRunner) -> None:
    await runner.start()
    marker = sleep_marker()
    task = asyncio.ensure_future(
        runner.exec(["sh", "-c", f"sleep {marker} & sleep {marker}"], cwd="/", env=ENV)
    )
    await asyncio.sleep(0.5)
    assert host_processes(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(marker) == []
    # the runner goes on working
    assert (await runner.exec(["echo", "ok"], cwd="/", env=ENV)).output == b"ok\n"


async def test_three_execs_run_at_once(runner: GondolinRunner) -> None:
    await runner.start()
    started = time.monotonic()
    results = await asyncio.gather(
        *(runner.exec(["sh", "-c", f"sleep 0.6; echo {n}"], cwd="/", env=ENV) for n in range(3))
    )
    assert [r.output for r in results] == [b"0\n", b"1\n", b"2\n"]
    assert time.monotonic() - started < 1.6


async def test_start_passes_the_settings_to_gondolin(
    workspace: Path, package_dir: Path, state_dir: Path
) -> None:
    config = SandboxConfig(
        backend="gondolin",
        network=True,
        gondolin=GondolinConfig(memory="512M", cpus=1, allowed_hosts=("api.example.com",)),
    )
    runner = make_runner(workspace, package_dir, state_dir, config)
    try:
        await runner.start()
        record = json.loads(options_file(runner).read_text())
        assert record == {
            "accel": "tcg",
            "netEnabled": True,
            "imagePath": None,
            "memory": "512M",
            "cpus": 1,
            "console": "none",
            "allowedHosts": ["api.example.com"],
            "workspace": str(workspace.resolve()),
        }
        assert runner.describe() == "gondolin micro-VM (tcg)"
        assert runner.shell() in ("/bin/bash", "/bin/sh")
        assert runner.base_environment() == {
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": "/root",
            "TMPDIR": "/tmp",
        }
    finally:
        await runner.close()


async def test_network_is_off_by_default(runner: GondolinRunner, state_dir: Path) -> None:
    await runner.start()
    assert json.loads(options_file(runner).read_text())["netEnabled"] is False


async def test_auto_accel_falls_back_to_tcg(
    workspace: Path, package_dir: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = SandboxConfig(backend="gondolin", gondolin=GondolinConfig(accel="auto"))
    monkeypatch.setenv("FAKE_GONDOLIN_FAIL_ACCEL", "kvm")
    runner = make_runner(workspace, package_dir, state_dir, config)
    try:
        assert runner.describe() == "gondolin micro-VM (auto)"
        assert (await runner.exec(["echo", "up"], cwd="/", env=ENV)).output == b"up\n"
        assert runner.describe() == "gondolin micro-VM (tcg)"
        temp = runner.temp_dir
        assert temp is not None and temp.is_dir()
    finally:
        await runner.close()
    assert not temp.exists()


async def test_auto_accel_keeps_a_working_kvm(
    workspace: Path, package_dir: Path, state_dir: Path
) -> None:
    config = SandboxConfig(backend="gondolin", gondolin=GondolinConfig(accel="auto"))
    runner = make_runner(workspace, package_dir, state_dir, config)
    try:
        await runner.start()
        kvm = os.access("/dev/kvm", os.R_OK | os.W_OK)
        assert runner.describe() == f"gondolin micro-VM ({'kvm' if kvm else 'tcg'})"
    finally:
        await runner.close()


async def test_a_failed_image_download_names_the_guest_files(
    workspace: Path, package_dir: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "FAKE_GONDOLIN_FAIL_START",
        "failed to fetch builtin image registry from https://example.invalid/x: fetch failed",
    )
    runner = make_runner(workspace, package_dir, state_dir)
    with pytest.raises(SandboxUnavailable) as failure:
        await runner.exec(["true"], cwd="/", env=ENV)
    text = str(failure.value)
    for name in ("vmlinuz-virt", "initramfs.cpio.lz4", "rootfs.ext4", "GONDOLIN_GUEST_DIR"):
        assert name in text
    assert "build_gondolin_guest.py" in failure.value.hint
    assert runner.temp_dir is None, "the private TMPDIR must go with the failed bridge"
    assert not any(state_dir.glob("kc-gondolin-*"))
    await runner.close()


async def test_restart_after_the_bridge_was_killed(runner: GondolinRunner) -> None:
    await runner.start()
    first = runner.bridge_pid
    assert first is not None
    os.killpg(first, signal.SIGKILL)
    while (
        Path(f"/proc/{first}").exists() and b") Z" not in Path(f"/proc/{first}/stat").read_bytes()
    ):
        await asyncio.sleep(0.01)  # dead (a zombie), not yet noticed by the event loop
    result = await runner.exec(["echo", "again"], cwd="/", env=ENV)
    assert result.output == b"again\n"
    assert runner.bridge_pid not in (None, first)


async def test_an_exec_in_flight_when_the_bridge_dies_raises(runner: GondolinRunner) -> None:
    await runner.start()
    pid = runner.bridge_pid
    assert pid is not None
    asyncio.get_running_loop().call_later(0.3, os.killpg, pid, signal.SIGKILL)
    with pytest.raises(SandboxUnavailable, match="bridge ended"):
        await runner.exec(["sleep", "5"], cwd="/", env=ENV)


async def test_close_leaves_no_process_or_file(
    workspace: Path, package_dir: Path, state_dir: Path
) -> None:
    runner = make_runner(workspace, package_dir, state_dir)
    marker = sleep_marker()
    task = asyncio.ensure_future(runner.exec(["sleep", marker], cwd="/", env=ENV))
    while not host_processes(marker):
        await asyncio.sleep(0.05)
    pid, temp = runner.bridge_pid, runner.temp_dir
    assert pid is not None and temp is not None and temp.is_dir()
    await runner.close()
    # the VM's close may end the command first (killed), or the bridge may go first
    with contextlib.suppress(SandboxUnavailable):
        assert (await task).exit_code is None
    await runner.close()  # idempotent
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)
    assert await wait_gone(marker) == []
    assert not temp.exists() and not any(state_dir.glob("kc-gondolin-*"))
    # closed is not broken: the next exec boots again
    assert (await runner.exec(["echo", "back"], cwd="/", env=ENV)).output == b"back\n"
    await runner.close()


# --- the protocol itself, without the runner ---


@pytest.fixture
async def bridge(workspace: Path, package_dir: Path, tmp_path: Path) -> AsyncIterator[Bridge]:
    tmp = tmp_path / "t"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    bridge = await Bridge.launch(_node(), package_dir, module_root(package_dir), env)
    try:
        ready = await bridge.request(
            "start", workspace=str(workspace), accel="tcg", net={"enabled": False}
        )
        assert ready.event == "ready"
        yield bridge
    finally:
        await bridge.close()


async def test_fs_calls(bridge: Bridge, workspace: Path) -> None:
    payload = base64.b64encode(b"\x00\xffbytes").decode()
    await bridge.request("fs", call="mkdir", path="/workspace/d/e")
    await bridge.request("fs", call="writeFile", path="/workspace/d/e/f.bin", data=payload)
    assert (workspace / "d" / "e" / "f.bin").read_bytes() == b"\x00\xffbytes"
    read = await bridge.request("fs", call="readFile", path="/workspace/d/e/f.bin")
    assert read.fields["value"] == payload
    stat = await bridge.request("fs", call="stat", path="/workspace/d/e/f.bin")
    value = stat.fields["value"]
    assert isinstance(value, dict) and value["size"] == 7 and value["isFile"] and not value["isDir"]
    listing = await bridge.request("fs", call="listDir", path="/workspace/d/e")
    assert listing.fields["value"] == ["f.bin"]
    await bridge.request("fs", call="deleteFile", path="/workspace/d", recursive=True)
    assert not (workspace / "d").exists()
    with pytest.raises(BridgeError, match="ENOENT"):
        await bridge.request("fs", call="readFile", path="/workspace/nothing")


async def test_unknown_requests_are_errors_not_crashes(bridge: Bridge) -> None:
    with pytest.raises(BridgeError, match="unknown op"):
        await bridge.request("launch-missiles")
    with pytest.raises(BridgeError, match="already started"):
        await bridge.request("start", workspace="/tmp", accel="tcg")
    killed = await bridge.request("kill", target=12345, grace=0)
    assert killed.event == "killed" and killed.fields["found"] is False
    assert bridge.alive


async def test_end_of_stdin_closes_the_vm_and_exits(bridge: Bridge) -> None:
    stdin = bridge.process.stdin
    assert stdin is not None
    stdin.close()
    assert await asyncio.wait_for(bridge.process.wait(), 10) == 0


async def test_close_request_answers_then_exits(bridge: Bridge) -> None:
    closed = await bridge.request("close")
    assert closed.event == "closed"
    assert await asyncio.wait_for(bridge.process.wait(), 10) == 0
    with pytest.raises(BridgeError):
        await bridge.request("exec", argv=["true"], cwd="/", env={})


async def test_an_abort_during_the_boot_stops_waiting_not_the_boot(
    workspace: Path, package_dir: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_GONDOLIN_BOOT_MS", "1500")
    runner = make_runner(workspace, package_dir, state_dir)
    try:
        abort = AbortSignal()
        asyncio.get_running_loop().call_later(0.3, abort.abort)
        started = time.monotonic()
        result = await runner.exec(["echo", "x"], cwd="/", env=ENV, signal=abort, timeout=0.5)
        assert result.aborted and time.monotonic() - started < 1.0
        pid = runner.bridge_pid
        assert pid is not None, "the boot goes on"
        # the timeout counts the command, not the boot it waited for
        again = await runner.exec(["echo", "y"], cwd="/", env=ENV, timeout=0.5)
        assert again.output == b"y\n" and not again.timed_out
        assert runner.bridge_pid == pid
    finally:
        await runner.close()


async def test_close_during_the_boot(
    workspace: Path, package_dir: Path, state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_GONDOLIN_BOOT_MS", "5000")
    runner = make_runner(workspace, package_dir, state_dir)
    task = asyncio.ensure_future(runner.exec(["echo", "x"], cwd="/", env=ENV))
    while runner.bridge_pid is None:
        await asyncio.sleep(0.02)
    pid, temp = runner.bridge_pid, runner.temp_dir
    await runner.close()
    with pytest.raises(SandboxUnavailable, match="closed while the VM booted"):
        await task
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)
    assert temp is not None and not temp.exists()
