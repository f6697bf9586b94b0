"""Writing: lazy first write, on disk before append returns, whole lines under concurrency and
SIGKILL, private file modes, fsync on sync/close."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from knightcode._session import SessionManager, file_store
from knightcode._session.loading import read_session_file

from .helpers import assistant_msg, read_records, user_msg

REPO = Path(__file__).resolve().parents[2]


def test_nothing_is_written_before_an_assistant_message(tmp_path: Path) -> None:
    session = SessionManager.create(tmp_path, tmp_path / "sessions")
    ids = [session.append_message(user_msg("hi")), session.append_thinking_level_change("high")]
    assert session.session_file is not None
    assert not session.session_file.exists() and not (tmp_path / "sessions").exists()
    ids.append(session.append_message(assistant_msg("hello")))
    records = read_records(session.session_file)
    assert records[0]["type"] == "session"
    assert [r["id"] for r in records[1:]] == ids  # buffered entries flushed in order


def test_an_appended_entry_is_in_the_file_when_append_returns(tmp_path: Path) -> None:
    session = SessionManager.create(tmp_path, tmp_path)
    session.append_message(assistant_msg("first"))
    assert session.session_file is not None
    for n in range(5):
        entry_id = session.append_message(user_msg(f"n{n}"))
        # Read through a separate descriptor: no buffer in this process may hold the line.
        assert read_records(session.session_file)[-1]["id"] == entry_id


def test_files_are_private(tmp_path: Path) -> None:
    old = os.umask(0)  # even with a permissive umask
    try:
        session = SessionManager.create(tmp_path, tmp_path / "a" / "b")
        session.append_message(assistant_msg("x"))
        assert session.session_file is not None
        assert stat.S_IMODE(session.session_file.stat().st_mode) == 0o600
        assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
        assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o700
        fork = session.create_branched_session(session.leaf_id)  # type: ignore[arg-type]
        assert fork is not None and stat.S_IMODE(fork.stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_sync_and_close_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(file_store.os, "fsync", counting_fsync)
    session = SessionManager.create(tmp_path, tmp_path)
    session.sync()  # nothing written yet: nothing to sync
    assert synced == []
    session.append_message(assistant_msg("x"))
    session.sync()
    assert len(synced) >= 1
    before = len(synced)
    session.close()
    assert len(synced) > before


APPENDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from knightcode._session import SessionManager

    path, tag, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    session = SessionManager.open(Path(path))
    # Built once, so most of each iteration is spent encoding and writing the entry.
    payloads = ["x" * size, "é😀" * (size // 3)]
    for n in range(count):
        text = f"{tag}-{n}-" + payloads[n % 2 if tag != "K" else 0]
        entry_id = session.append_message({"role": "user", "content": text, "timestamp": n})
        print(entry_id, flush=True)
    session.close()
    """
)


def _start_appender(file: Path, tag: str, count: int, size: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", APPENDER, str(file), tag, str(count), str(size)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )


def _seeded_session(tmp_path: Path) -> Path:
    session = SessionManager.create(tmp_path, tmp_path)
    session.append_message(user_msg("start"))
    session.append_message(assistant_msg("ok"))  # from here on every append is written
    session.close()
    assert session.session_file is not None
    return session.session_file


def test_two_processes_appending_write_only_whole_lines(tmp_path: Path) -> None:
    file = _seeded_session(tmp_path)
    # Lines of ~300 KB make interleaving likely if a line were written in pieces.
    writers = [_start_appender(file, tag, 40, 300_000) for tag in ("A", "B")]
    printed = [proc.communicate(timeout=120)[0].split() for proc in writers]
    assert all(proc.returncode == 0 for proc in writers)
    loaded = read_session_file(file)
    assert loaded.report.skipped_lines == 0
    ids = [e["id"] for e in loaded.entries]
    assert len(ids) == 2 + 80
    for tag, tag_ids in zip(("A", "B"), printed, strict=True):
        assert set(tag_ids) <= set(ids)
        contents = [e["message"]["content"] for e in loaded.entries if e["id"] in set(tag_ids)]  # type: ignore[typeddict-item]
        assert sorted(int(c.split("-")[1]) for c in contents) == list(range(40))
        assert all(c.startswith(f"{tag}-") for c in contents)
    for raw in file.read_bytes().split(b"\n")[:-1]:
        assert raw.startswith(b"{") and raw.endswith(b"}")


@pytest.mark.parametrize("kill_after", [3, 17, 40])
def test_sigkill_while_appending_loses_at_most_the_entry_being_written(
    tmp_path: Path, kill_after: int
) -> None:
    file = _seeded_session(tmp_path)
    proc = _start_appender(file, "K", 100_000, 1_000_000)
    assert proc.stdout is not None
    reported = [proc.stdout.readline().strip() for _ in range(kill_after)]
    proc.send_signal(signal.SIGKILL)
    rest, _ = proc.communicate(timeout=30)
    reported += rest.split()  # ids printed before the kill landed
    assert proc.returncode == -signal.SIGKILL

    loaded = read_session_file(file)
    on_disk = [e["id"] for e in loaded.entries][2:]
    assert on_disk[: len(reported)] == reported  # every entry reported appended is there
    assert len(on_disk) <= len(reported) + 1  # at most one more (written, not yet reported)
    assert loaded.report.skipped_lines <= 1  # at most one partial line
    assert loaded.report.skipped_lines == int(loaded.report.truncated_tail)

    # The session goes on: the next append is whole and the partial line stays one skipped line.
    session = SessionManager.open(file)
    new_id = session.append_message(user_msg("after the crash"))
    session.close()
    again = read_session_file(file)
    assert again.entries[-1]["id"] == new_id
    assert (
        again.report.skipped_lines == loaded.report.skipped_lines
        and not again.report.truncated_tail
    )


KILLED_MID_WRITE = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from knightcode._session import SessionManager, file_store

    real_write = os.write
    calls = 0

    def dying_write(fd, data):
        # The 4th append dies after writing half of its line: a kill in the middle of write().
        global calls
        calls += 1
        if calls == 4:
            real_write(fd, bytes(data[: len(data) // 2]))
            os.kill(os.getpid(), signal.SIGKILL)
        return real_write(fd, data)

    file_store.os.write = dying_write
    session = SessionManager.open(Path(sys.argv[1]))
    for n in range(10):
        message = {"role": "user", "content": f"entry {n} " + "y" * 5000, "timestamp": n}
        print(session.append_message(message), flush=True)
    """
)


def test_kill_in_the_middle_of_a_write_leaves_one_partial_line(tmp_path: Path) -> None:
    file = _seeded_session(tmp_path)
    before = file.read_bytes()
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_MID_WRITE, str(file)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,  # it is meant to die
    )
    assert proc.returncode == -signal.SIGKILL
    reported = proc.stdout.split()
    assert len(reported) == 3
    data = file.read_bytes()
    assert data.startswith(before) and not data.endswith(b"\n")  # the 4th line is cut short

    loaded = read_session_file(file)
    assert [e["id"] for e in loaded.entries][2:] == reported  # only the entry being written is lost
    assert loaded.report.skipped_lines == 1 and loaded.report.truncated_tail

    session = SessionManager.open(file)
    new_id = session.append_message(user_msg("after the crash"))
    again = read_session_file(file)
    assert [e["id"] for e in again.entries][2:] == [*reported, new_id]
    assert again.report.skipped_lines == 1 and not again.report.truncated_tail
