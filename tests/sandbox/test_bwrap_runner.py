"""BwrapRunner: commands in a real bubblewrap sandbox (bwrap must be installed; CI installs it)."""

from __future__ import annotations

import asyncio
import errno
import os
import pwd
import secrets
import shutil
import socket
import stat
import subprocess
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path

import pytest

from knightcode import AbortSignal, ExecResult, LocalBackend
from knightcode_builtins.gondolin.bwrap import (
    BwrapRunner,
    Mount,
    extra_mounts,
    split_environment,
    system_mounts,
)
from knightcode_builtins.gondolin.config import BwrapConfig, SandboxConfig
from knightcode_builtins.gondolin.runner import Runner, SandboxUnavailable

from . import factory_bwrap
from .conftest import need

BWRAP = SandboxConfig(backend="bwrap")


@pytest.fixture(scope="module", autouse=True)
def bwrap_works() -> None:
    need(factory_bwrap)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
async def runner(workspace: Path, state_dir: Path) -> AsyncIterator[BwrapRunner]:
    runner = BwrapRunner(workspace, BWRAP, state_dir=state_dir)
    yield runner
    await runner.close()


def env_of(runner: Runner, **more: str) -> dict[str, str]:
    return {**runner.base_environment(), **more}


async def sh(runner: Runner, script: str, cwd: str = "/workspace") -> tuple[int | None, str]:
    """Run ``script`` with the sandbox's shell: its exit code and merged output."""
    result = await runner.exec([runner.shell(), "-c", script], cwd=cwd, env=env_of(runner))
    return result.exit_code, result.output.decode()


def token() -> str:
    """A unique ``sleep`` duration: it names our processes in the host's process table."""
    return f"4242.{secrets.randbelow(10**9)}"


def _argvs() -> Iterator[tuple[int, list[bytes]]]:
    """Every live (not zombie) host process: its pid and argv."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            yield int(entry), argv.split(b"\0")


def host_processes(mark: str) -> list[int]:
    """Host processes with an argument starting with ``mark`` (our ``sleep`` processes, not
    the shells and bwraps whose script merely mentions it).
    """
    return [pid for pid, argv in _argvs() if any(a.startswith(mark.encode()) for a in argv)]


async def until(condition: object, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return True
        await asyncio.sleep(0.02)
    return False


# --- the root built from parts ---


def test_merged_usr_host_gets_the_same_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for name in ("usr/bin", "usr/lib", "usr/lib64", "usr/sbin", "etc/ssh", "etc/ssl/private"):
        (root / name).mkdir(parents=True)
    for name in ("bin", "lib", "lib64", "sbin"):
        (root / name).symlink_to(f"usr/{name}")
    (root / "etc/shadow").write_text("root:$6$hash:::\n")
    (root / "etc/ssh/ssh_host_ed25519_key").write_text("private")
    (root / "etc/ssh/ssh_host_ed25519_key.pub").write_text("public")
    (root / "root").mkdir()
    (root / "home").mkdir()
    mounts = system_mounts(root)
    assert Mount("ro-bind", "/usr", str(root / "usr")) in mounts
    assert Mount("symlink", "/bin", "usr/bin") in mounts
    assert Mount("symlink", "/lib64", "usr/lib64") in mounts
    assert Mount("ro-bind", "/etc", str(root / "etc")) in mounts
    assert Mount("mask", "/etc/shadow") in mounts
    assert Mount("mask", "/etc/ssh/ssh_host_ed25519_key") in mounts
    assert Mount("mask", "/etc/ssh/ssh_host_ed25519_key.pub") not in mounts
    assert Mount("empty", "/etc/ssl/private") in mounts
    assert not {"/root", "/home", "/run", "/lib32"} & {mount.dest for mount in mounts}


def test_split_usr_host_gets_read_only_binds(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for name in ("usr/bin", "bin", "sbin", "lib", "etc"):
        (root / name).mkdir(parents=True)
    mounts = system_mounts(root)
    kinds = {mount.dest: mount.kind for mount in mounts}
    assert kinds == {"/usr": "ro-bind", "/bin": "ro-bind", "/sbin": "ro-bind",
                     "/lib": "ro-bind", "/etc": "ro-bind"}  # fmt: skip
    assert Mount("ro-bind", "/bin", str(root / "bin")).args() == [
        "--ro-bind", str(root / "bin"), "/bin"
    ]  # fmt: skip


def test_ro_binds_must_exist_and_be_absolute(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable, match="absolute"):
        extra_mounts(["opt/tools"])
    with pytest.raises(SandboxUnavailable, match="does not exist") as missing:
        extra_mounts([str(tmp_path / "nope")])
    assert "roBinds" in missing.value.hint


async def test_the_inside_view(runner: BwrapRunner, workspace: Path) -> None:
    expected = {"dev", "proc", "tmp", "workspace", "etc"}
    expected |= {name for name in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
                 if os.path.lexists(f"/{name}")}  # fmt: skip
    code, out = await sh(runner, "pwd; ls -A /; id -u")
    lines = out.split()
    assert code == 0 and lines[0] == "/workspace"
    assert set(lines[1:-1]) == expected
    assert lines[-1] == str(os.getuid())
    code, out = await sh(runner, "test -e /root || test -e /home || test -e /run || echo absent")
    assert out == "absent\n"


async def test_capabilities_dropped_and_root_read_only(runner: BwrapRunner) -> None:
    code, out = await sh(runner, "grep CapEff /proc/self/status")
    assert out.split() == ["CapEff:", "0000000000000000"]
    for path in ("/kc-probe", "/etc/kc-probe", "/usr/kc-probe", "/bin/kc-probe"):
        code, out = await sh(runner, f"echo x > {path}")
        assert code != 0 and "Read-only file system" in out, path
        assert not os.path.exists(path)
    code, out = await sh(runner, "mkdir /root 2>&1; echo $?")
    assert out.strip().endswith("1") and "Read-only" in out


async def test_etc_secrets_are_masked(runner: BwrapRunner) -> None:
    code, out = await sh(runner, "cat /etc/shadow /etc/gshadow 2>/dev/null")
    assert code != 0 and out == ""
    code, out = await sh(runner, "head -c 10 /etc/passwd")
    assert code == 0 and out


# --- what the sandbox must not see ---


async def test_agent_dir_ssh_and_home_are_invisible(
    runner: BwrapRunner, agent_dir: Path, tmp_path: Path
) -> None:
    home = Path(os.environ["HOME"])
    (home / ".ssh").mkdir()
    key = home / ".ssh" / "id_ed25519"
    key.write_text("PRIVATE-KEY-MATERIAL")
    auth = agent_dir / "auth.json"
    auth.write_text('{"key": "sk-host-secret"}')
    real_home = pwd.getpwuid(os.getuid()).pw_dir
    local = await LocalBackend().exec(["cat", str(key), str(auth)])
    assert b"PRIVATE-KEY-MATERIAL" in local.output  # the same command on the host does see them
    for path in (key, auth, agent_dir, home, Path(real_home) / ".ssh", tmp_path):
        result = await runner.exec(["ls", "-a", str(path)], cwd="/", env=env_of(runner))
        assert result.exit_code != 0, path
    result = await runner.exec(
        ["grep", "-rs", "sk-host-secret", "/tmp", "/workspace", "/etc"],
        cwd="/",
        env=env_of(runner),
    )
    assert result.exit_code in (1, 2) and result.output == b""  # 2: unreadable files in /etc


async def test_host_processes_are_invisible(runner: BwrapRunner) -> None:
    mark = token()
    host = subprocess.Popen(["sleep", mark])
    try:
        script = "cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo; ls -d /proc/[0-9]* | wc -l"
        local = await LocalBackend().exec(["sh", "-c", script])
        assert mark in local.output.decode()  # visible from the host: the check can fail
        code, out = await sh(runner, script)
        assert code == 0 and mark not in out
        assert int(out.split()[-1]) <= 6  # bwrap's init, sh, cat/tr/ls: nothing else
    finally:
        host.kill()
        host.wait()


def _outbound_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a route
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") else address


@pytest.fixture
def listener() -> Iterator[int]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", 0))
    server.listen(8)
    try:
        yield int(server.getsockname()[1])
    finally:
        server.close()


async def test_network_is_off_by_default(runner: BwrapRunner, listener: int) -> None:
    addresses = ["127.0.0.1"] + [a for a in [_outbound_address()] if a]
    for address in addresses:
        probe = f"echo > /dev/tcp/{address}/{listener} && echo connected"
        local = await LocalBackend().exec(["bash", "-c", probe])
        assert local.output == b"connected\n"  # reachable from the host
        code, out = await sh(runner, probe + " 2>/dev/null")
        assert code != 0 and "connected" not in out, address
    code, out = await sh(runner, "tail -n +3 /proc/net/dev | cut -d: -f1")
    assert out.split() == ["lo"]


async def test_network_on_when_configured(workspace: Path, state_dir: Path, listener: int) -> None:
    runner = BwrapRunner(
        workspace, SandboxConfig(backend="bwrap", network=True), state_dir=state_dir
    )
    try:
        assert "network on" in runner.describe()
        _, out = await sh(runner, f"echo > /dev/tcp/127.0.0.1/{listener} && echo connected")
        assert out == "connected\n"
    finally:
        await runner.close()


async def test_environment_reaches_the_command_but_not_the_host_ps(runner: BwrapRunner) -> None:
    mark = token()
    secret = f"sk-{secrets.token_hex(8)}"
    chunks: list[bytes] = []
    stop = AbortSignal()
    task = asyncio.ensure_future(
        runner.exec(
            ["sh", "-c", f'echo "$KC_SECRET"; echo "$HOME $TMPDIR $LANG"; sleep {mark}'],
            cwd="/workspace",
            env=env_of(runner, KC_SECRET=secret),
            on_output=chunks.append,
            signal=stop,
        )
    )
    assert await until(lambda: bool(host_processes(mark)) and b"C.UTF-8" in b"".join(chunks))
    everyone = b"\0".join(arg for _, argv in _argvs() for arg in argv)
    assert mark.encode() in everyone
    assert secret.encode() not in everyone  # no argv on the host carries the value
    stop.abort()
    assert (await task).aborted
    assert b"".join(chunks).decode().splitlines() == [secret, "/tmp /tmp C.UTF-8"]
    assert await until(lambda: not host_processes(mark), 2)


def test_a_setuid_bwrap_gets_what_glibc_would_strip_as_arguments() -> None:
    env = {"PATH": "/bin", "TMPDIR": "/tmp", "LD_LIBRARY_PATH": "/x", "API_KEY": "k"}
    assert split_environment(env, setuid=False) == (env, [])
    own, setenv = split_environment(env, setuid=True)
    assert own == {"PATH": "/bin", "API_KEY": "k"}
    assert setenv == ["--setenv", "LD_LIBRARY_PATH", "/x", "--setenv", "TMPDIR", "/tmp"]


async def test_nothing_of_the_host_environment_leaks_in(
    runner: BwrapRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KC_HOST_ONLY", "leak")
    result = await runner.exec(["env"], cwd="/workspace", env={"A": "1", "PATH": "/usr/bin"})
    names = {line.split("=", 1)[0] for line in result.output.decode().splitlines()}
    assert names == {"A", "PATH", "PWD"}  # PWD: bwrap's --chdir


# --- exec ---


async def test_exit_codes_and_missing_things(runner: BwrapRunner, workspace: Path) -> None:
    assert (await sh(runner, "true"))[0] == 0
    assert (await sh(runner, "kill -9 $$"))[0] == 137  # bwrap reports a signal as 128 + N
    assert (await sh(runner, "exit 3"))[0] == 3
    assert (await sh(runner, "kc-no-such-command"))[0] == 127
    with pytest.raises(FileNotFoundError):
        await runner.exec(["kc-no-such-command"], cwd="/workspace", env=env_of(runner))
    with pytest.raises(FileNotFoundError):
        await runner.exec(["/workspace/nope"], cwd="/workspace", env=env_of(runner))
    with pytest.raises(FileNotFoundError):
        await runner.exec(["true"], cwd="/workspace/missing", env=env_of(runner))
    with pytest.raises(FileNotFoundError):  # exists on the host, not inside
        await runner.exec(["true"], cwd=str(workspace), env=env_of(runner))
    (workspace / "sub").mkdir()
    (workspace / "sub" / "tool").write_text("#!/bin/sh\necho tool ran in $PWD\n")
    (workspace / "sub" / "tool").chmod(0o755)
    result = await runner.exec(["./tool"], cwd="sub", env=env_of(runner))
    assert result.output == b"tool ran in /workspace/sub\n"
    # A symlinked program resolves inside (/bin -> usr/bin on merged-/usr hosts).
    result = await runner.exec(["/bin/sh", "-c", "echo ok"], cwd="/", env=env_of(runner))
    assert result.output == b"ok\n"


async def test_paths_resolve_as_the_sandbox_sees_them(runner: BwrapRunner, workspace: Path) -> None:
    (workspace / "real").mkdir()
    (workspace / "real" / "tool").write_text("#!/bin/sh\necho ran\n")
    (workspace / "real" / "tool").chmod(0o755)
    # An absolute link that only means something inside (no /workspace on the host).
    (workspace / "link").symlink_to("/workspace/real")
    result = await runner.exec(["/workspace/link/tool"], cwd="/workspace/link", env=env_of(runner))
    assert result.output == b"ran\n"
    (workspace / "loop").symlink_to("/workspace/loop")
    with pytest.raises(OSError) as loop:
        await runner.exec(["true"], cwd="/workspace/loop", env=env_of(runner))
    assert loop.value.errno == errno.ELOOP


async def test_stderr_apart_and_stdin(runner: BwrapRunner, workspace: Path) -> None:
    result = await runner.exec(
        ["sh", "-c", "echo out; echo err >&2"],
        cwd="/workspace",
        env=env_of(runner),
        merge_stderr=False,
    )
    assert (result.output, result.stderr) == (b"out\n", b"err\n")
    payload = bytes(range(256)) * 64
    result = await runner.exec(["cat"], cwd="/", env=env_of(runner), stdin=payload)
    assert result.output == payload
    await runner.exec(
        ["sh", "-c", 'cat > "$1"', "sh", "/workspace/in.bin"],
        cwd="/",
        env=env_of(runner),
        stdin=payload,
    )
    assert (workspace / "in.bin").read_bytes() == payload


async def test_output_streams_before_exit(runner: BwrapRunner) -> None:
    arrivals: list[tuple[float, bytes]] = []
    started = time.monotonic()
    result = await runner.exec(
        ["sh", "-c", "echo first; sleep 1; echo second"],
        cwd="/workspace",
        env=env_of(runner),
        on_output=lambda chunk: arrivals.append((time.monotonic() - started, chunk)),
    )
    ended = time.monotonic() - started
    assert result.exit_code == 0 and result.output == b""
    assert arrivals[0][1] == b"first\n" and arrivals[0][0] < ended - 0.5
    assert b"".join(chunk for _, chunk in arrivals) == b"first\nsecond\n"


async def test_large_output(runner: BwrapRunner) -> None:
    result = await runner.exec(
        ["head", "-c", str(8 << 20), "/dev/zero"], cwd="/", env=env_of(runner)
    )
    assert len(result.output) == 8 << 20


async def test_three_at_once(runner: BwrapRunner) -> None:
    await runner.start()
    started = time.monotonic()
    results = await asyncio.gather(*(sh(runner, f"sleep 0.6; echo {n}") for n in range(3)))
    assert [out for _, out in results] == ["0\n", "1\n", "2\n"]
    assert time.monotonic() - started < 1.6


async def test_write_through_both_ways(runner: BwrapRunner, workspace: Path) -> None:
    (workspace / "from-host.txt").write_text("host wrote this")
    _, out = await sh(runner, "cat from-host.txt; mkdir -p d && echo guest > d/g.txt")
    assert out == "host wrote this"
    assert (workspace / "d" / "g.txt").read_text() == "guest\n"


# --- killing the whole tree ---

TREE = (
    "(trap '' TERM; sleep {m}1) & "  # ignores SIGTERM
    "setsid sleep {m}2 & "  # left the session and the process group
    "sh -c 'sleep {m}3' & "
    "echo started; wait"
)


async def _run_tree(
    runner: BwrapRunner, timeout: float | None = None, signal: AbortSignal | None = None
) -> tuple[asyncio.Task[ExecResult], str]:
    """Start a tree of three ``sleep``s that resist a group kill; return once all run."""
    mark = token()
    task = asyncio.ensure_future(
        runner.exec(
            ["sh", "-c", TREE.format(m=mark)],
            cwd="/workspace",
            env=env_of(runner),
            timeout=timeout,
            signal=signal,
        )
    )
    assert await until(lambda: len(host_processes(mark)) == 3), "the tree did not start"
    return task, mark


async def test_timeout_kills_the_whole_tree(runner: BwrapRunner) -> None:
    await runner.start()
    started = time.monotonic()
    task, mark = await _run_tree(runner, timeout=1.0)
    result = await task
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 4
    assert await until(lambda: not host_processes(mark), 2), host_processes(mark)
    code, out = await sh(runner, "cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
    assert code == 0 and "cmdline" in out and mark not in out  # nothing left inside either


async def test_abort_kills_the_whole_tree(runner: BwrapRunner) -> None:
    await runner.start()
    stop = AbortSignal()
    task, mark = await _run_tree(runner, signal=stop)
    started = time.monotonic()
    stop.abort()
    result = await task
    assert result.aborted
    assert time.monotonic() - started < 1
    assert await until(lambda: not host_processes(mark), 2), host_processes(mark)


async def test_cancelling_the_task_kills_the_whole_tree(runner: BwrapRunner) -> None:
    await runner.start()
    task, mark = await _run_tree(runner)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await until(lambda: not host_processes(mark), 2), host_processes(mark)


async def test_already_aborted_runs_nothing(runner: BwrapRunner, workspace: Path) -> None:
    stop = AbortSignal()
    stop.abort()
    result = await runner.exec(
        ["sh", "-c", "touch ran"], cwd="/workspace", env=env_of(runner), signal=stop
    )
    assert result.aborted and not (workspace / "ran").exists()


# --- lifecycle ---


async def test_tmp_is_private_lasts_the_session_and_close_removes_it(
    runner: BwrapRunner, state_dir: Path
) -> None:
    name = f"kc-{secrets.token_hex(4)}"
    code, _ = await sh(runner, f"echo kept > /tmp/{name}")
    assert code == 0 and not Path(f"/tmp/{name}").exists()  # not the host's /tmp
    [private] = list(state_dir.iterdir())
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    assert (private / name).read_text() == "kept\n"
    assert (await sh(runner, f"cat /tmp/{name}"))[1] == "kept\n"  # a later command sees it
    await sh(runner, "mkdir -p /tmp/locked/deep && touch /tmp/locked/deep/f && chmod 0 /tmp/locked")
    await runner.close()
    assert list(state_dir.iterdir()) == []
    await runner.close()  # idempotent
    assert (await sh(runner, f"cat /tmp/{name} 2>&1 || echo gone"))[1].endswith("gone\n")


async def test_starts_again_after_its_tmp_vanished(runner: BwrapRunner, state_dir: Path) -> None:
    assert (await sh(runner, "echo a > /tmp/a"))[0] == 0
    for entry in state_dir.iterdir():
        subprocess.run(["rm", "-rf", str(entry)], check=True)
    code, out = await sh(runner, "test -d /tmp && echo b > /tmp/b && cat /tmp/b")
    assert (code, out) == (0, "b\n")


async def test_close_kills_what_is_running(runner: BwrapRunner, state_dir: Path) -> None:
    await runner.start()
    task, mark = await _run_tree(runner)
    await runner.close()
    result = await task
    assert result.aborted
    assert await until(lambda: not host_processes(mark), 2), host_processes(mark)
    assert list(state_dir.iterdir()) == []


async def test_extra_args_reach_bwrap(workspace: Path, state_dir: Path) -> None:
    config = SandboxConfig(
        backend="bwrap", bwrap=BwrapConfig(extra_args=("--hostname", "kc-sandbox-test"))
    )
    runner = BwrapRunner(workspace, config, state_dir=state_dir)
    try:
        assert (await sh(runner, "cat /proc/sys/kernel/hostname"))[1] == "kc-sandbox-test\n"
    finally:
        await runner.close()


async def test_ro_binds_are_read_only(workspace: Path, tmp_path: Path, state_dir: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "hello").write_text("#!/bin/sh\necho hello from tools\n")
    (tools / "hello").chmod(0o755)
    config = SandboxConfig(backend="bwrap", bwrap=BwrapConfig(ro_binds=(str(tools),)))
    runner = BwrapRunner(workspace, config, state_dir=state_dir)
    try:
        result = await runner.exec([str(tools / "hello")], cwd="/", env=env_of(runner))
        assert result.output == b"hello from tools\n"
        assert (await sh(runner, f"touch {tools}/x"))[0] != 0
    finally:
        await runner.close()


async def test_shell_and_base_environment(runner: BwrapRunner) -> None:
    assert runner.shell() == ("/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh")
    base: Mapping[str, str] = runner.base_environment()
    assert base["PATH"].split(":")[-1] == "/bin" and base["HOME"] == base["TMPDIR"] == "/tmp"


async def test_missing_bwrap_says_how_to_install(workspace: Path, state_dir: Path) -> None:
    config = SandboxConfig(backend="bwrap", bwrap=BwrapConfig(binary="kc-no-such-bwrap"))
    runner = BwrapRunner(workspace, config, state_dir=state_dir)
    with pytest.raises(SandboxUnavailable) as raised:
        await runner.start()
    assert raised.value.message == "bwrap is not installed"
    assert "apt-get install bubblewrap" in raised.value.hint


async def test_disabled_user_namespaces_are_named(
    workspace: Path, state_dir: Path, tmp_path: Path
) -> None:
    # The real bwrap, in a user namespace whose own limit for new user namespaces is 0.
    wrapper = tmp_path / "bwrap-no-userns"
    wrapper.write_text(
        "#!/bin/sh\n"
        "exec unshare --user --map-root-user sh -c "
        '\'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" "$@"\' '
        f'{shutil.which("bwrap")} "$@"\n'
    )
    wrapper.chmod(0o755)
    config = SandboxConfig(backend="bwrap", bwrap=BwrapConfig(binary=str(wrapper)))
    runner = BwrapRunner(workspace, config, state_dir=state_dir)
    with pytest.raises(SandboxUnavailable) as raised:
        await runner.start()
    assert "user namespaces" in raised.value.message
    assert "max_user_namespaces" in raised.value.hint
    await runner.close()
    assert list(state_dir.iterdir()) == []


async def test_factory_gives_a_started_runner(workspace: Path) -> None:
    runner = await factory_bwrap.create(workspace, BWRAP)
    try:
        result = await runner.exec(["pwd"], cwd="/workspace", env=runner.base_environment())
        assert result.output == b"/workspace\n"
    finally:
        await runner.close()
