"""LocalBackend: the ExecutionBackend every tool uses on this machine."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from knightcode import AbortSignal
from knightcode._tools import DirEntry, ExecutionBackend, LocalBackend

from .helpers import is_alive


@pytest.fixture
def backend(project_dir: Path) -> LocalBackend:
    return LocalBackend(project_dir)


def test_satisfies_the_protocol(backend: LocalBackend) -> None:
    assert isinstance(backend, ExecutionBackend)
    assert not isinstance(object(), ExecutionBackend)


async def test_files_round_trip(backend: LocalBackend, project_dir: Path) -> None:
    target = str(project_dir / "a" / "b" / "c.bin")
    await backend.write_file(target, b"\x00data")
    assert await backend.read_file(target) == b"\x00data"
    info = await backend.stat(target)
    assert info is not None and info.is_file and not info.is_dir and info.size == 5
    assert await backend.exists(target)
    assert await backend.stat(str(project_dir / "missing")) is None
    with pytest.raises(FileNotFoundError):
        await backend.read_file(str(project_dir / "missing"))


async def test_list_dir_follows_links_and_skips_dangling(
    backend: LocalBackend, project_dir: Path
) -> None:
    (project_dir / "dir").mkdir()
    (project_dir / "file").write_text("x")
    (project_dir / "link-to-dir").symlink_to(project_dir / "dir")
    (project_dir / "dangling").symlink_to(project_dir / "nowhere")
    entries = sorted(await backend.list_dir(str(project_dir)), key=lambda e: e.name)
    assert entries == [
        DirEntry("dir", True),
        DirEntry("file", False),
        DirEntry("link-to-dir", True),
    ]


async def test_exec_collects_merged_output(backend: LocalBackend) -> None:
    result = await backend.exec(["sh", "-c", "echo out; echo err >&2; exit 4"])
    assert result.exit_code == 4
    assert result.output == b"out\nerr\n"
    assert not result.timed_out and not result.aborted


async def test_exec_keeps_stderr_apart_on_request(backend: LocalBackend) -> None:
    result = await backend.exec(["sh", "-c", "echo out; echo err >&2"], merge_stderr=False)
    assert (result.output, result.stderr) == (b"out\n", b"err\n")


async def test_exec_shell_command_cwd_and_env(backend: LocalBackend, project_dir: Path) -> None:
    result = await backend.exec(
        shell_command="pwd; echo $KC_TEST", env={"KC_TEST": "set", "PATH": os.environ["PATH"]}
    )
    assert result.output == f"{project_dir}\nset\n".encode()
    with pytest.raises(ValueError):
        await backend.exec(["true"], shell_command="true")


async def test_exec_streams_to_callback(backend: LocalBackend) -> None:
    chunks: list[tuple[float, bytes]] = []
    result = await backend.exec(
        ["sh", "-c", "echo one; sleep 0.3; echo two"],
        on_output=lambda chunk: chunks.append((time.monotonic(), chunk)),
    )
    assert result.output == b""
    assert b"".join(chunk for _, chunk in chunks) == b"one\ntwo\n"
    assert chunks[-1][0] - chunks[0][0] > 0.2  # "one" arrived before the command ended


async def test_exit_by_signal_has_no_code(backend: LocalBackend) -> None:
    result = await backend.exec(["sh", "-c", "kill -9 $$"])
    assert result.exit_code is None


async def test_timeout_kills_group(backend: LocalBackend, project_dir: Path) -> None:
    pid_file = project_dir / "pid"
    started = time.monotonic()
    result = await backend.exec(
        ["sh", "-c", f"sleep 300 & echo $! > {pid_file}; wait"], timeout=0.3
    )
    assert result.timed_out and not result.aborted
    assert time.monotonic() - started < 3
    await asyncio.sleep(0.1)
    assert not is_alive(int(pid_file.read_text()))


async def test_term_ignoring_process_is_killed(backend: LocalBackend) -> None:
    started = time.monotonic()
    script = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ready', flush=True); time.sleep(60)"
    )
    stop = AbortSignal()
    task = asyncio.ensure_future(
        backend.exec(
            [sys.executable, "-c", script], signal=stop, on_output=lambda chunk: stop.abort()
        )
    )
    result = await asyncio.wait_for(task, 5)
    assert result.aborted
    assert time.monotonic() - started < 5


async def test_no_zombie_left(backend: LocalBackend) -> None:
    stop = AbortSignal()
    pids: list[int] = []
    task = asyncio.ensure_future(
        backend.exec(
            ["sh", "-c", "echo $$; sleep 300"],
            signal=stop,
            on_output=lambda c: pids.append(int(c.split()[0])),
        )
    )
    while not pids:
        await asyncio.sleep(0.01)
    stop.abort()
    await task
    assert not is_alive(pids[0])
    if Path("/proc/self").exists():
        # Reaped, not a zombie: the /proc entry of our direct child is gone entirely.
        assert not Path(f"/proc/{pids[0]}").exists()


async def test_missing_program_raises_oserror(backend: LocalBackend) -> None:
    with pytest.raises(FileNotFoundError):
        await backend.exec(["/no/such/program"])


async def test_finds_rg_beside_the_interpreter(backend: LocalBackend) -> None:
    rg = await backend.find_executable("rg")
    assert rg is not None and os.access(rg, os.X_OK)
    beside = Path(sys.executable).parent / "rg"
    if beside.exists():
        assert rg == str(beside)
    assert await backend.find_executable("definitely-not-a-program-kc") is None
