"""``read`` and ``bash`` stay bounded, through the real executable (issue 11).

The scripted model asks for the tool call; the knightcode process is measured from outside: its
peak RSS (``wait4``), how long it took, the spill file it left (size, mode, and that it is gone
once the process has exited).
"""

from __future__ import annotations

import json
import os
import re
import resource
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from knightcode.testing import text_reply, tool_call, tool_call_reply

from .conftest import MODEL, PROVIDER, Scripted

RSS_BOUND_MB = 200
SPILL_CAP = 16 * 1024 * 1024 + 4096  # head + tail (knightcode._tools.spill) + the marker


@dataclass
class Measured:
    returncode: int
    stdout: str
    stderr: str
    max_rss_mb: float
    seconds: float


def run_measured(
    s: Scripted,
    tmp: Path,
    *args: str,
    timeout: float = 60,
    max_file_size: int | None = None,
    **env: str,
) -> Measured:
    """``knightcode -p`` in the project; its own peak RSS comes from ``wait4`` on it alone.

    ``max_file_size``: RLIMIT_FSIZE, so that writing past it fails (``EFBIG``) as on a full disk.
    """

    def limit_files() -> None:
        if max_file_size is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_size, max_file_size))

    out, err = tmp / "stdout.txt", tmp / "stderr.txt"
    command = [sys.executable, "-m", "knightcode", "--model", f"{PROVIDER}/{MODEL}", *args]
    started = time.monotonic()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            command,
            cwd=s.project,
            env=s.env(**env),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            preexec_fn=limit_files,
        )
    watchdog = threading.Timer(timeout, process.kill)
    watchdog.start()
    try:
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        watchdog.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return Measured(
        process.returncode,
        out.read_text(),
        err.read_text(),
        usage.ru_maxrss / 1024,  # KiB on Linux
        time.monotonic() - started,
    )


def tool_texts(s: Scripted, request: int) -> list[str]:
    """The tool results the model got in request ``request`` (earlier turns' included)."""
    return [
        m["content"] for m in s.server.requests[request].body["messages"] if m["role"] == "tool"
    ]


def script_calls(s: Scripted, *calls: tuple[str, dict[str, object]]) -> None:
    for index, (name, args) in enumerate(calls):
        s.server.add(tool_call_reply([tool_call(f"call_{index}", name, args)]))
    s.server.add(text_reply("done"))


def set_settings(s: Scripted, **settings: object) -> None:
    (s.agent_dir / "settings.json").write_text(
        json.dumps({"retry": {"baseDelayMs": 10}, **settings})
    )


# --- read ---


def test_read_of_a_2_gb_sparse_file_stays_small(scripted: Scripted, tmp_path: Path) -> None:
    sparse = scripted.project / "sparse.bin"
    with sparse.open("wb") as handle:
        handle.truncate(2 * 1024**3)
    script_calls(scripted, ("read", {"path": "sparse.bin"}))
    run = run_measured(scripted, tmp_path, "-p", "read it")
    assert run.returncode == 0, run.stderr
    (text,) = tool_texts(scripted, 1)
    # One 2 GB line of NULs: too long to show, and not read to its end to say how long.
    assert re.fullmatch(
        r"\[Line 1 is over \d+\.\dMB, exceeds 50\.0KB limit\. Use bash: sed -n '1p' sparse\.bin "
        r"\| head -c 51200\]",
        text,
    ), text
    assert run.max_rss_mb < RSS_BOUND_MB, f"peak RSS {run.max_rss_mb:.0f} MB"  # was 6.2 GB


def test_read_of_devices_and_a_fifo_is_refused_at_once(scripted: Scripted, tmp_path: Path) -> None:
    fifo = scripted.project / "pipe"
    os.mkfifo(fifo)  # nobody ever writes: opening it for reading would block forever
    script_calls(scripted, ("read", {"path": "pipe"}), ("read", {"path": "/dev/zero"}))
    run = run_measured(scripted, tmp_path, "-p", "read them", timeout=30)
    assert run.returncode == 0, run.stderr
    assert tool_texts(scripted, 2) == [
        f"Cannot read {fifo}: not a regular file (a FIFO, socket or device). "
        "read only reads regular files.",
        "Cannot read /dev/zero: not a regular file (a FIFO, socket or device). "
        "read only reads regular files.",
    ]
    assert run.seconds < 20 and run.max_rss_mb < RSS_BOUND_MB  # /dev/zero reached 5.4 GB


def test_read_honours_the_tool_timeout(scripted: Scripted, tmp_path: Path) -> None:
    # Skipping to line 2 of a 1 TB file of NULs means reading all of it: minutes of work.
    sparse = scripted.project / "huge.bin"
    with sparse.open("wb") as handle:
        handle.truncate(1024**4)
    set_settings(scripted, toolTimeoutMs=1000)
    script_calls(scripted, ("read", {"path": "huge.bin", "offset": 2}))
    run = run_measured(scripted, tmp_path, "-p", "read it", timeout=60)
    assert run.returncode == 0, run.stderr
    (text,) = tool_texts(scripted, 1)
    assert text.startswith('Tool "read" timed out after 1 seconds.'), text
    assert run.seconds < 15, f"took {run.seconds:.1f} s"  # the process does not wait for it
    assert run.max_rss_mb < RSS_BOUND_MB


# --- bash spill file ---


def spill_path(text: str) -> Path:
    found = re.search(r"Full output(?: so far)?: (\S+\.log)", text)
    assert found, text
    return Path(found.group(1))


def test_bash_spill_file_is_capped_private_named_and_removed(
    scripted: Scripted, tmp_path: Path
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    # The second call looks at the first one's spill file while knightcode still runs.
    script_calls(
        scripted,
        ("bash", {"command": "yes", "timeout": 2}),
        (
            "bash",
            {
                "command": "stat -c '%a %s %n' $TMPDIR/knightcode-*/knightcode-bash-*.log; "
                "stat -c '%a' $TMPDIR/knightcode-*/",
                "timeout": 10,
            },
        ),
    )
    run = run_measured(scripted, tmp_path, "-p", "go", TMPDIR=str(temp), timeout=90)
    assert run.returncode == 0, run.stderr
    (timed_out,) = tool_texts(scripted, 1)
    assert timed_out.endswith("Command timed out after 2 seconds"), timed_out[-300:]
    path = spill_path(timed_out)
    assert "left out)" in timed_out  # yes wrote far more than the cap keeps
    assert path.parent.parent == temp
    stat_file, stat_dir = tool_texts(scripted, 2)[-1].split("\n")[:2]
    mode, size, name = stat_file.split(" ")
    assert (mode, Path(name)) == ("600", path)
    assert int(size) <= SPILL_CAP  # was ~268 MB/s, 48 GB in 180 s
    assert stat_dir == "700"
    # Gone with the process, directory and all.
    assert not path.exists() and not path.parent.exists()
    assert list(temp.iterdir()) == []


def test_a_bash_call_stopped_by_the_tool_timeout_names_its_spill_file(
    scripted: Scripted, tmp_path: Path
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    set_settings(scripted, toolTimeoutMs=1500)
    script_calls(
        scripted,
        ("bash", {"command": "yes"}),
        (
            "bash",
            {"command": "head -c 30 $TMPDIR/knightcode-*/knightcode-bash-*.log", "timeout": 10},
        ),
    )
    run = run_measured(scripted, tmp_path, "-p", "go", TMPDIR=str(temp), timeout=90)
    assert run.returncode == 0, run.stderr
    (timed_out,) = tool_texts(scripted, 1)
    assert timed_out.startswith('Tool "bash" timed out after 1.5 seconds.'), timed_out
    path = spill_path(timed_out)
    assert path.parent.parent == temp
    assert tool_texts(scripted, 2)[-1] == "y\n" * 15
    assert not path.parent.exists()


def test_a_spill_file_that_cannot_be_written_does_not_stop_the_command(
    scripted: Scripted, tmp_path: Path
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    script_calls(scripted, ("bash", {"command": "seq 1 3000000; echo end", "timeout": 60}))
    run = run_measured(
        scripted, tmp_path, "-p", "go", TMPDIR=str(temp), max_file_size=2_000_000, timeout=90
    )
    assert run.returncode == 0, run.stderr
    (text,) = tool_texts(scripted, 1)
    # All the output was read (its end is shown); the file has what fitted and says so.
    path = spill_path(text)
    assert "\n3000000\nend\n\n\n[Showing lines 2998003-3000002 of 3000002. " in text, text[-300:]
    assert text.endswith(f"Full output: {path} (incomplete: File too large)]"), text[-300:]
    assert not path.exists()  # removed at exit like any other


SPILL_AND_WAIT = """
import sys, time
from knightcode._tools.spill import SpillFile
spill = SpillFile("knightcode-bash")
spill.write(b"x" * 100)
print(spill.path, flush=True)
if sys.argv[1] == "hang":
    time.sleep(600)
"""


def test_a_killed_process_spill_directory_is_removed_by_the_next_one(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    killed = subprocess.Popen(
        [sys.executable, "-c", SPILL_AND_WAIT, "hang"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert killed.stdout is not None
    left = Path(killed.stdout.readline().strip())
    killed.kill()  # SIGKILL: no atexit
    killed.wait()
    assert left.exists() and stat.S_IMODE(left.stat().st_mode) == 0o600
    live = temp / "knightcode-unrelated"
    live.mkdir()  # not a spill directory (no lock): left alone
    done = subprocess.run(
        [sys.executable, "-c", SPILL_AND_WAIT, "exit"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert not left.parent.exists()
    assert not Path(done.stdout.strip()).parent.exists()  # its own: removed at exit
    assert [p.name for p in temp.iterdir()] == ["knightcode-unrelated"]
