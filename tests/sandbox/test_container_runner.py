"""The ``container`` runner for real: podman, runc and the local busybox test image.

Every check runs real containers (``scripts/ci/sandbox_container.sh`` sets them up); nothing is
skipped — a missing prerequisite fails with the reason (``factory_container.require``).
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import socket
import stat
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from knightcode import AbortSignal
from knightcode_builtins.gondolin.config import SandboxConfig
from knightcode_builtins.gondolin.container import (
    _KILLER,
    _WRAPPER,
    ContainerRunner,
    _env_file_lines,
    _run_failure,
    choose_cli,
)
from knightcode_builtins.gondolin.runner import SandboxUnavailable

from . import factory_container as factory

WS = "/workspace"


@pytest.fixture(scope="module", autouse=True)
def _prerequisites() -> None:
    factory.require()


def podman(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", *args], capture_output=True, text=True, timeout=120, check=False
    )


def session_containers(session_id: str) -> list[str]:
    listed = podman("ps", "-a", "-q", "--filter", f"label=knightcode.session={session_id}")
    return listed.stdout.split()


def host_processes(marker: str) -> list[str]:
    """Command lines of host processes (container processes included: root podman) with
    ``marker``.
    """
    found: list[str] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(cmdline.decode(errors="replace"))
    return found


def make_runner(workspace: Path, config: SandboxConfig | None = None) -> ContainerRunner:
    return ContainerRunner(
        workspace,
        config or factory.container_config(),
        session_id=f"test-{random.randrange(16**8):08x}",
        state_dir=factory.state_dir(),
    )


@pytest.fixture
async def runner(tmp_path: Path) -> AsyncIterator[ContainerRunner]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    made = make_runner(workspace)
    try:
        yield made
    finally:
        await made.close()
        assert session_containers(made.session_id) == []


def env_of(runner: ContainerRunner, **extra: str) -> dict[str, str]:
    return {**runner.base_environment(), **extra}


_LIST_PROCESSES = (
    'for d in /proc/[0-9]*; do c=$(tr "\\0" " " < $d/cmdline 2>/dev/null) && '
    'echo "${d#/proc/} ${c% }"; done'
)


async def inside(runner: ContainerRunner, marker: str) -> list[str]:
    """Processes inside the container whose command line has ``marker`` (``pid args``), read
    from /proc so that images without ``ps`` work too.
    """
    listing = await runner.exec(["sh", "-c", _LIST_PROCESSES], cwd=WS, env=env_of(runner))
    return [line for line in listing.output.decode().splitlines() if marker in line]


def marker_sleep() -> tuple[str, str]:
    """A ``sleep`` no other test runs: the command, and the text to look for."""
    seconds = str(random.randrange(70000, 79999))
    return f"sleep {seconds}", f"sleep {seconds}"


# --- running commands ---


async def test_exit_codes_cwd_and_lazy_start(runner: ContainerRunner) -> None:
    assert runner.container is None  # nothing runs before the first use
    env = env_of(runner)
    ok = await runner.exec(["sh", "-c", "pwd"], cwd=WS, env=env)
    assert ok.exit_code == 0 and ok.output == b"/workspace\n"
    assert runner.container is not None
    three = await runner.exec(["sh", "-c", "exit 3"], cwd=WS, env=env)
    assert three.exit_code == 3
    missing = await runner.exec(["sh", "-c", "no-such-command-here"], cwd=WS, env=env)
    assert missing.exit_code == 127
    assert b"not found" in missing.output
    (Path(runner.host_root) / "sub").mkdir()
    sub = await runner.exec(["pwd"], cwd=f"{WS}/sub", env=env)
    assert sub.output == b"/workspace/sub\n"


async def test_missing_program_or_cwd_raise_enoent(runner: ContainerRunner) -> None:
    env = env_of(runner)
    with pytest.raises(FileNotFoundError) as program:
        await runner.exec(["no-such-program"], cwd=WS, env=env)
    assert program.value.filename == "no-such-program"
    with pytest.raises(FileNotFoundError):
        await runner.exec(["/bin/no-such-program"], cwd=WS, env=env)
    with pytest.raises(FileNotFoundError) as cwd:
        await runner.exec(["true"], cwd=f"{WS}/missing", env=env)
    assert cwd.value.filename == f"{WS}/missing"


async def test_output_streams_before_the_command_ends(runner: ContainerRunner) -> None:
    await runner.start()
    arrivals: list[tuple[float, bytes]] = []
    began = time.monotonic()
    result = await runner.exec(
        ["sh", "-c", "echo one; sleep 1.5; echo two"],
        cwd=WS,
        env=env_of(runner),
        on_output=lambda chunk: arrivals.append((time.monotonic() - began, chunk)),
    )
    ended = time.monotonic() - began
    assert result.exit_code == 0 and result.output == b""  # streamed, not collected
    assert b"".join(chunk for _, chunk in arrivals) == b"one\ntwo\n"
    assert arrivals[0][1].startswith(b"one")
    assert arrivals[0][0] < ended - 1.0, arrivals


async def test_stderr_apart_or_merged(runner: ContainerRunner) -> None:
    command = ["sh", "-c", "echo out; echo err >&2; exit 5"]
    apart = await runner.exec(command, cwd=WS, env=env_of(runner), merge_stderr=False)
    assert (apart.exit_code, apart.output, apart.stderr) == (5, b"out\n", b"err\n")
    merged = await runner.exec(command, cwd=WS, env=env_of(runner))
    assert sorted(merged.output.splitlines()) == [b"err", b"out"] and merged.stderr == b""
    streamed: list[bytes] = []
    await runner.exec(command, cwd=WS, env=env_of(runner), on_output=streamed.append)
    assert sorted(b"".join(streamed).splitlines()) == [b"err", b"out"]


async def test_stdin_and_large_output(runner: ContainerRunner) -> None:
    data = bytes(range(256)) * 1000
    echoed = await runner.exec(["cat"], cwd=WS, env=env_of(runner), stdin=data)
    assert echoed.exit_code == 0 and echoed.output == data
    empty = await runner.exec(["cat"], cwd=WS, env=env_of(runner))
    assert empty.exit_code == 0 and empty.output == b""  # no stdin: end of file at once
    big = await runner.exec(
        ["sh", "-c", "head -c 8388608 /dev/zero; echo done >&2"], cwd=WS, env=env_of(runner)
    )
    assert big.exit_code == 0 and len(big.output) == 8388608 + len(b"done\n")


async def test_environment_is_exact_and_private(
    runner: ContainerRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KC_HOST_ONLY", "host-value")
    secret = f"secret-{random.randrange(10**9)}"
    values = {
        "PLAIN": "a b  c ",
        "QUOTES": "\"q\" 'r' $HOME `x` \\ end",
        "EQUALS": "a=b=c",
        "LINES": "one\ntwo\\n\r\tthree\n",
        "EMPTY": "",
        "TOKEN": secret,
    }
    env = env_of(runner, **values)
    dump = (
        'for n in PLAIN QUOTES EQUALS LINES EMPTY TOKEN; do eval "printf \'%s\\0\' \\"\\$$n\\""; '
        "done; env | grep -c -e KC_HOST_ONLY -e KC_W -e KC_ESCAPED"
    )
    run = asyncio.ensure_future(
        runner.exec(["sh", "-c", f"{dump}; sleep 1"], cwd=WS, env=env, merge_stderr=False)
    )
    await asyncio.sleep(0.8)
    # While it runs: the value is in no host command line; the env file is private.
    assert host_processes(secret) == []
    env_dir = runner._env_dir
    assert env_dir is not None
    files = list(env_dir.iterdir())
    assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert all(secret in f.read_text() for f in files)
    result = await run
    fields = result.output.split(b"\0")
    assert [f.decode() for f in fields[:6]] == list(values.values())
    assert fields[6].strip() == b"0"  # no host variable, no wrapper variable
    assert list(env_dir.iterdir()) == []  # deleted after the exec
    home = await runner.exec(["sh", "-c", "echo $HOME $TMPDIR"], cwd=WS, env=env_of(runner))
    assert home.output == b"/root /tmp\n"


async def test_environment_names_the_file_cannot_carry() -> None:
    for bad in ("", "A=B", "#X", " X", "KC_W", "KC_ESCAPED"):
        with pytest.raises(ValueError, match="cannot be passed"):
            _env_file_lines({bad: "v"})
    with pytest.raises(ValueError, match="multi-line"):
        _env_file_lines({"a.b": "x\ny"})
    assert _env_file_lines({"a.b": "x y"}).startswith("a.b=x y\n")
    with pytest.raises(ValueError, match="too long"):
        _env_file_lines({"BIG": "x" * 70000})


async def test_the_longest_value_the_env_file_carries(runner: ContainerRunner) -> None:
    value = "v" * (64 * 1024 - len("LONG=") - 2)
    result = await runner.exec(
        ["sh", "-c", 'printf %s "$LONG" | wc -c'], cwd=WS, env=env_of(runner, LONG=value)
    )
    assert result.output.strip() == str(len(value)).encode()


async def test_three_concurrent_execs(runner: ContainerRunner) -> None:
    await runner.start()
    began = time.monotonic()
    results = await asyncio.gather(
        *(
            runner.exec(["sh", "-c", f"sleep 1; echo {n}"], cwd=WS, env=env_of(runner))
            for n in range(3)
        )
    )
    assert [r.output for r in results] == [b"0\n", b"1\n", b"2\n"]
    assert time.monotonic() - began < 2.9  # one after the other: over 3 s


# --- killing the whole tree ---


async def assert_tree_gone(runner: ContainerRunner, marker: str) -> None:
    assert await inside(runner, marker) == []
    assert host_processes(marker) == []
    # and no container client of ours is left on the host
    assert runner.container is not None
    assert host_processes(f"exec -i --env-file {runner._env_dir}") == []


async def test_timeout_kills_the_whole_tree(runner: ContainerRunner) -> None:
    await runner.start()
    sleep, marker = marker_sleep()
    began = time.monotonic()
    result = await runner.exec(
        ["sh", "-c", f"echo start; ({sleep}) & {sleep}; wait"],
        cwd=WS,
        env=env_of(runner),
        timeout=1.0,
    )
    assert time.monotonic() - began < 4.0
    assert result.timed_out and not result.aborted and result.exit_code is None
    assert result.output == b"start\n"
    await assert_tree_gone(runner, marker)


async def test_timeout_kills_a_tree_that_ignores_term(runner: ContainerRunner) -> None:
    await runner.start()
    sleep, marker = marker_sleep()
    result = await runner.exec(
        ["sh", "-c", f"trap '' TERM; {sleep} & {sleep}; wait"],
        cwd=WS,
        env=env_of(runner),
        timeout=0.5,
    )
    assert result.timed_out and result.exit_code is None
    await assert_tree_gone(runner, marker)


async def test_abort_kills_the_whole_tree(runner: ContainerRunner) -> None:
    await runner.start()
    sleep, marker = marker_sleep()
    signal = AbortSignal()
    asyncio.get_running_loop().call_later(0.8, signal.abort)
    began = time.monotonic()
    result = await runner.exec(
        ["sh", "-c", f"({sleep}) & {sleep}; wait"], cwd=WS, env=env_of(runner), signal=signal
    )
    assert result.aborted and not result.timed_out and result.exit_code is None
    assert time.monotonic() - began < 3.0
    await assert_tree_gone(runner, marker)
    already = await runner.exec(["true"], cwd=WS, env=env_of(runner), signal=signal)
    assert already.aborted


async def test_cancelling_the_caller_kills_the_whole_tree(runner: ContainerRunner) -> None:
    await runner.start()
    sleep, marker = marker_sleep()
    task = asyncio.ensure_future(
        runner.exec(["sh", "-c", f"({sleep}) & {sleep}; wait"], cwd=WS, env=env_of(runner))
    )
    await asyncio.sleep(1.0)
    assert [line.split(None, 1)[1] for line in await inside(runner, marker)].count(sleep) == 2
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await assert_tree_gone(runner, marker)


async def test_cancel_during_startup_leaves_nothing(runner: ContainerRunner) -> None:
    await runner.start()
    sleep, marker = marker_sleep()
    task = asyncio.ensure_future(runner.exec(["sh", "-c", sleep], cwd=WS, env=env_of(runner)))
    await asyncio.sleep(0.02)  # the client has not reached the container yet
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.5)
    await assert_tree_gone(runner, marker)


async def test_setsid_fallback_when_the_wrapper_is_not_a_group_leader(
    runner: ContainerRunner,
) -> None:
    """Runtimes other than runc may not make the exec'd process a session leader; the wrapper
    then starts the command under setsid, and the killer still reaches its whole tree.
    """
    await runner.start()
    assert runner.container is not None
    sleep, marker = marker_sleep()
    # The wrapper runs as a child of another shell: not a group leader.
    nested = (
        'export KC_W="$KC_TEST_W"; unset KC_TEST_W; '
        f"sh -c 'eval \"$KC_W\"' kc fallback1 /workspace sh -c '({sleep}) & {sleep}; wait'"
        "; echo wrapper-exit=$?"
    )
    run = asyncio.ensure_future(
        runner.exec(["sh", "-c", nested], cwd=WS, env=env_of(runner, KC_TEST_W=_WRAPPER))
    )
    await asyncio.sleep(1.0)
    pids = await runner.exec(["cat", "/tmp/.kc/fallback1.pid"], cwd=WS, env=env_of(runner))
    pgid = pids.output.strip().decode()
    groups = await runner.exec(["ps", "-o", "pid,pgid,args"], cwd=WS, env=env_of(runner))
    in_group = [
        line
        for line in groups.output.decode().splitlines()
        if line.split()[1] == pgid and line.split(None, 2)[2] == sleep
    ]
    assert len(in_group) == 2, groups.output.decode()
    await runner._kill_inside(runner.container, "fallback1", 0.2)
    result = await asyncio.wait_for(run, 10)
    assert b"KC1 ok" in result.output and b"wrapper-exit=143" in result.output
    await assert_tree_gone(runner, marker)


async def test_killer_for_an_exec_that_never_started_blocks_it(
    runner: ContainerRunner,
) -> None:
    await runner.start()
    assert runner.container is not None
    await runner._kill_inside(runner.container, "never1", 0.1)
    late = await runner.exec(
        ["sh", "-c", 'KC_W="$KC_TEST_W" sh -c \'eval "$KC_W"\' kc never1 /workspace echo ran'],
        cwd=WS,
        env=env_of(runner, KC_TEST_W=_WRAPPER),
    )
    assert late.output == b"KC1 cancelled\n" and late.exit_code == 143
    assert "kill -TERM" in _KILLER


# --- files, network, lifecycle ---


async def test_workspace_writes_through_both_ways(runner: ContainerRunner) -> None:
    host_root = Path(runner.host_root)
    (host_root / "from-host.txt").write_bytes(b"host\x00bytes")
    seen = await runner.exec(["cat", "from-host.txt"], cwd=WS, env=env_of(runner))
    assert seen.output == b"host\x00bytes"
    await runner.exec(
        ["sh", "-c", "mkdir -p d && printf inside > d/from-container.txt"],
        cwd=WS,
        env=env_of(runner),
    )
    assert (host_root / "d" / "from-container.txt").read_bytes() == b"inside"
    outside = await runner.exec(
        ["sh", "-c", "echo x > /outside.txt && cat /outside.txt"], cwd=WS, env=env_of(runner)
    )
    assert outside.exit_code == 0
    assert not Path("/outside.txt").exists() and not (host_root / "outside.txt").exists()


async def test_network_is_off_by_default(tmp_path: Path) -> None:
    runners = [
        make_runner(tmp_path),
        make_runner(tmp_path, factory.container_config(SandboxConfig(network=True))),
    ]
    try:
        devices = []
        for each in runners:
            result = await each.exec(["cat", "/proc/net/dev"], cwd=WS, env=env_of(each))
            names = [
                line.split(":")[0].strip()
                for line in result.output.decode().splitlines()
                if ":" in line
            ]
            devices.append(sorted(names))
    finally:
        for each in runners:
            await each.close()
    assert devices[0] == ["lo"]
    assert len(devices[1]) > 1  # with sandbox.network the container gets an interface


async def test_restart_after_the_container_died(runner: ContainerRunner) -> None:
    first = await runner.exec(["echo", "one"], cwd=WS, env=env_of(runner))
    assert first.output == b"one\n"
    dead = runner.container
    assert dead is not None
    assert podman("rm", "-f", dead).returncode == 0
    again = await runner.exec(["echo", "two"], cwd=WS, env=env_of(runner))
    assert again.output == b"two\n" and again.exit_code == 0
    assert runner.container not in (None, dead)
    assert session_containers(runner.session_id) == [
        podman("inspect", "--format", "{{.Id}}", str(runner.container)).stdout.strip()[:12]
    ]


async def test_restart_after_the_container_was_killed(runner: ContainerRunner) -> None:
    await runner.start()
    killed = runner.container
    assert killed is not None
    podman("kill", killed)
    result = await runner.exec(["sh", "-c", "echo back"], cwd=WS, env=env_of(runner))
    assert result.output == b"back\n"
    assert runner.container != killed


async def test_close_is_idempotent_and_leaves_nothing(tmp_path: Path) -> None:
    made = make_runner(tmp_path)
    sleep, marker = marker_sleep()
    running = asyncio.ensure_future(made.exec(["sh", "-c", sleep], cwd=WS, env=env_of(made)))
    await asyncio.sleep(1.0)
    env_dir = made._env_dir
    assert env_dir is not None and env_dir.exists()
    assert session_containers(made.session_id) != []
    await made.close()
    await made.close()
    ended = await asyncio.wait_for(asyncio.gather(running, return_exceptions=True), 10)
    assert not isinstance(ended[0], TimeoutError)
    assert session_containers(made.session_id) == []
    assert not env_dir.exists()
    assert host_processes(marker) == []
    with pytest.raises(SandboxUnavailable, match="closed"):
        await made.exec(["true"], cwd=WS, env=env_of(made))


async def test_stale_containers_of_dead_owners_are_removed(tmp_path: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale_name = f"kc-stale-{random.randrange(16**6):06x}"
    started = podman(
        "run", "-d", "--rm", "--name", stale_name,
        "--label", "knightcode.session=stale-session",
        "--label", f"knightcode.pid={gone.pid}",
        "--label", f"knightcode.host={socket.gethostname()}",
        "--runtime", factory.RUNTIME,
        *(f"--ulimit={u}" for u in factory.ULIMITS),
        factory.IMAGE, "sleep", "600",
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    made = make_runner(tmp_path)
    try:
        await made.start()
        names = podman("ps", "-a", "--format", "{{.Names}}").stdout.split()
        assert stale_name not in names
        assert made.container in names
    finally:
        await made.close()
        podman("rm", "-f", stale_name)


# --- failures explained ---


async def test_missing_image_says_how_to_get_it(tmp_path: Path) -> None:
    made = make_runner(tmp_path, factory.container_config(image="localhost/kc-no-such:1"))
    with pytest.raises(SandboxUnavailable) as error:
        await made.start()
    await made.close()
    assert error.value.message == "image localhost/kc-no-such:1 not found locally"
    assert "podman pull localhost/kc-no-such:1" in error.value.hint
    assert "sandbox.container.image" in error.value.hint


async def test_rlimit_failure_names_the_setting(tmp_path: Path) -> None:
    """Without lowered ulimits podman fails here (no CAP_SYS_RESOURCE): the hint says what to
    set.
    """
    made = make_runner(tmp_path, factory.container_config(ulimits=()))
    with pytest.raises(SandboxUnavailable) as error:
        await made.start()
    await made.close()
    assert "resource limits" in error.value.message
    assert '"ulimits": ["nofile=1024:1024", "nproc=1024:1024"]' in error.value.hint


def test_crun_hybrid_cgroup_failure_names_the_setting() -> None:
    # crun's own words (podman 4.3 with crun 1.8 on a hybrid cgroup host, reference §2.6)
    failure = _run_failure(
        "/usr/bin/podman",
        "img",
        "Error: OCI runtime error: crun: cgroups in hybrid mode not supported, drop all "
        "controllers from cgroupv2\n",
    )
    assert "cgroup layout" in failure.message
    assert '"runtime": "runc"' in failure.hint


async def test_cli_choice() -> None:
    chosen = await choose_cli(None)
    docker = shutil.which("docker")
    docker_answers = (
        docker is not None
        and subprocess.run([docker, "info"], capture_output=True, check=False).returncode == 0
    )
    assert os.path.basename(chosen) == ("docker" if docker_answers else "podman")
    with pytest.raises(SandboxUnavailable, match="was not found"):
        await choose_cli("kc-no-such-container-cli")


async def test_describe_and_shell(runner: ContainerRunner) -> None:
    assert runner.name == "container"
    assert "not started" in runner.describe()
    await runner.start()
    assert runner.container is not None
    assert runner.describe().startswith(f"podman container {runner.container}")
    assert runner.shell() == "/bin/sh"  # busybox has no bash
    assert dict(runner.base_environment()) == {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": "/root",
        "TMPDIR": "/tmp",
    }


async def test_a_debian_image_with_bash_dash_and_coreutils(tmp_path: Path) -> None:
    """The Dockerfile's base image: bash is the shell, and the wrapper (run by dash there) passes
    the environment and kills whole trees as with busybox.
    """
    made = make_runner(tmp_path, factory.container_config(image=factory.BASE_IMAGE))
    try:
        await made.start()
        assert made.shell() == "/bin/bash"
        env = env_of(made, LINES="a\nb\\n\r", QUOTE="'\"$x")
        shown = await made.exec(
            ["/bin/bash", "-c", 'printf "%s|%s|%s" "$LINES" "$QUOTE" "${BASH_VERSION%%.*}"'],
            cwd=WS,
            env=env,
        )
        assert shown.output == b"a\nb\\n\r|'\"$x|5"
        sleep, marker = marker_sleep()
        result = await made.exec(
            ["sh", "-c", f"({sleep}) & {sleep}; wait"], cwd=WS, env=env, timeout=0.8
        )
        assert result.timed_out
        assert await inside(made, marker) == []
        assert host_processes(marker) == []
    finally:
        await made.close()


async def test_an_image_with_its_own_entrypoint(tmp_path: Path) -> None:
    """Images made to run one program (the repo's Dockerfile: ENTRYPOINT ["knightcode"]) still
    get the runner's own PID 1.
    """
    tag = f"localhost/kc-entrypoint-test:{random.randrange(16**6):06x}"
    (tmp_path / "Containerfile").write_text(
        f'FROM {factory.IMAGE}\nENTRYPOINT ["/bin/false"]\nCMD ["--version"]\n'
    )
    built = podman("build", "-q", "--runtime", factory.RUNTIME, "-t", tag, str(tmp_path))
    assert built.returncode == 0, built.stderr
    made = make_runner(tmp_path, factory.container_config(image=tag))
    try:
        result = await made.exec(["echo", "ran"], cwd=WS, env=env_of(made))
        assert result.output == b"ran\n"
    finally:
        await made.close()
        podman("rmi", "-f", tag)


async def test_cancelled_start_leaves_no_container(tmp_path: Path) -> None:
    made = make_runner(tmp_path)
    task = asyncio.ensure_future(made.start())
    await asyncio.sleep(0.15)  # `podman run` is under way
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await made.close()
    assert session_containers(made.session_id) == []


class _SlowCollector(ContainerRunner):
    """The stale-container collection that runs beside ``podman run`` takes longer than the run
    (as it can on a loaded machine): a seam in the runner itself, the engine is real.
    """

    async def _remove_stale(self) -> None:
        await asyncio.sleep(4)


async def test_a_start_cancelled_after_run_made_the_container_removes_it(tmp_path: Path) -> None:
    # `run` has finished (the container exists) but the start is still waiting for the stale
    # collection when it is cancelled: the container is not recorded yet, and must go anyway.
    made = _SlowCollector(
        tmp_path,
        factory.container_config(),
        session_id=f"test-{random.randrange(16**8):08x}",
        state_dir=factory.state_dir(),
    )
    task = asyncio.ensure_future(made.start())
    deadline = time.monotonic() + 20
    while not session_containers(made.session_id) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert session_containers(made.session_id), "podman run never made the container"
    await asyncio.sleep(1.0)  # the `run` client has exited; the collection sleeps on
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await made.close()
    assert session_containers(made.session_id) == []
