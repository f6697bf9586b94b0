"""Damaged session files and unusable session paths, through the real executable.

Each case is one clear line on stderr (never a traceback), a record in JSON and RPC modes, and
nothing the user had is destroyed: a damaged original is kept aside, a file that is not a
session is left alone, and an answer whose session cannot be written is still shown.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from knightcode.testing import text_reply
from tests.agent.conftest import MODEL, PROVIDER, Scripted
from tests.harness import text_of

HEADER = {"type": "session", "version": 3, "id": "s-1", "timestamp": "2026-01-01T00:00:00.000Z"}
STAMP = "2026-01-01T00:00:01.000Z"


def _entry(entry_id: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {"id": entry_id, "parentId": parent, "timestamp": STAMP, **fields}


def _user(text: object) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def _assistant(content: object) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": PROVIDER,
        "model": MODEL,
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "stop",
        "timestamp": 2,
    }


def _text(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


def _write(path: Path, records: list[dict[str, Any]], extra: bytes = b"") -> bytes:
    data = b"".join(json.dumps(record).encode() + b"\n" for record in records) + extra
    path.write_bytes(data)
    return data


def _conversation() -> list[dict[str, Any]]:
    """A header and a branched conversation: a1 → a2 → {b1 → b2, c1}; b2 last."""
    return [
        {**HEADER},
        _entry("a1", None, type="message", message=_user("first question")),
        _entry("a2", "a1", type="message", message=_assistant(_text("first answer"))),
        _entry("c1", "a2", type="message", message=_user("abandoned branch")),
        _entry("b1", "a2", type="message", message=_user("second question")),
        _entry("b2", "b1", type="message", message=_assistant(_text("second answer"))),
    ]


def _sent_texts(scripted: Scripted, request: int = 0) -> list[str]:
    messages = scripted.server.requests[request].body["messages"]  # type: ignore[index]
    return [text_of(message) for message in messages if message["role"] != "system"]


def _one_line(stderr: str, level: str) -> str:
    """The single ``knightcode: <level>:`` line of stderr (and no traceback)."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith(f"knightcode: {level}:")]
    assert len(lines) == 1, stderr
    return lines[0]


def _records(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.split("\n") if line]


# --- damaged files ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["3", 99, None, 0])
def test_a_header_of_unknown_version_is_kept_aside_not_migrated(
    scripted: Scripted, version: object
) -> None:
    file = scripted.project / "s.jsonl"
    records = _conversation()
    records[0]["version"] = version
    original = _write(file, records)
    scripted.server.add(text_reply("fresh answer"))

    result = scripted.run("-p", "hello", "--session", str(file))

    assert result.returncode == 0, result.stderr
    assert result.stdout == "fresh answer\n"
    kept = file.with_name("s.jsonl.corrupt-1")
    line = _one_line(result.stderr, "warning")
    assert "unknown version" in line and str(kept) in line
    assert kept.read_bytes() == original  # the branches and ids, exactly as they were
    written = [json.loads(text) for text in file.read_text().splitlines()]
    assert written[0]["version"] == 3 and written[0]["id"] != "s-1"
    assert not {"a1", "a2", "b1", "b2", "c1"} & {entry.get("id") for entry in written}
    assert _sent_texts(scripted) == ["hello"]  # a new session: nothing of the old one sent


def test_the_repair_is_a_record_in_json_mode(scripted: Scripted) -> None:
    file = scripted.project / "s.jsonl"
    _write(file, [{"type": "message", "id": "x1", "parentId": None}])  # no header
    scripted.server.add(text_reply("ok"))

    records, result = scripted.run_json("hello", "--session", str(file))

    assert result.returncode == 0, result.stderr
    assert records[0]["type"] == "session"
    (repaired,) = [r for r in records if r["type"] == "session_repaired"]
    assert repaired["problem"] == "invalid_header"
    assert repaired["file"] == str(file)
    assert repaired["movedTo"] == str(file.with_name("s.jsonl.corrupt-1"))
    assert repaired["message"] in result.stderr


def test_the_repair_is_a_record_in_rpc_mode(scripted: Scripted) -> None:
    file = scripted.project / "s.jsonl"
    _write(file, _conversation(), extra=b"not json\n")

    result = scripted.run("--mode", "rpc", "--session", str(file), stdin='{"type":"get_state"}\n')

    assert result.returncode == 0, result.stderr
    records = _records(result.stdout)
    (repaired,) = [r for r in records if r["type"] == "session_repaired"]
    assert repaired["problem"] == "skipped_lines" and repaired["skippedLines"] == 1
    assert "skipped 1 unreadable line" in _one_line(result.stderr, "warning")
    assert any(r["type"] == "response" and r["command"] == "get_state" for r in records)


def test_a_line_nested_too_deeply_is_skipped_and_the_rest_loads(scripted: Scripted) -> None:
    file = scripted.project / "s.jsonl"
    records = _conversation()
    deep = b'{"type":"custom","id":"d1","parentId":"a2","data":' + b"[" * 1000 + b"]" * 1000
    _write(file, records[:3], extra=deep + b"}\n")
    with file.open("ab") as handle:
        handle.write(b"".join(json.dumps(r).encode() + b"\n" for r in records[3:]))
    scripted.server.add(text_reply("ok"))

    result = scripted.run("-p", "third question", "--session", str(file))

    assert result.returncode == 0, result.stderr
    assert "skipped 1 unreadable line" in _one_line(result.stderr, "warning")
    sent = _sent_texts(scripted)
    assert sent[0] == "first question" and sent[-1] == "third question"
    assert "second question" in sent


DAMAGED_FIELDS = {
    "compaction summary 7": _entry(
        "bad", "b2", type="compaction", summary=7, firstKeptEntryId="b1", tokensBefore=5
    ),
    "assistant content 5": _entry("bad", "b2", type="message", message=_assistant(5)),
    "user without content": _entry(
        "bad", "b2", type="message", message={"role": "user", "timestamp": 1}
    ),
    "tool result block without text": _entry(
        "bad",
        "b2",
        type="message",
        message={
            "role": "toolResult",
            "toolCallId": "call-1",
            "toolName": "read",
            "content": [{"type": "text"}],
            "isError": False,
            "timestamp": 3,
        },
    ),
    "custom_message content 5": _entry(
        "bad", "b2", type="custom_message", customType="note", content=5, display=True
    ),
    "text block with a number": _entry(
        "bad", "b2", type="message", message=_assistant([{"type": "text", "text": 7}])
    ),
    "tool call without arguments": _entry(
        "bad",
        "b2",
        type="message",
        message=_assistant([{"type": "toolCall", "id": "call-1", "name": "read"}]),
    ),
}


@pytest.mark.parametrize("case", DAMAGED_FIELDS)
def test_an_entry_with_damaged_fields_is_left_out_and_kept(scripted: Scripted, case: str) -> None:
    file = scripted.project / "s.jsonl"
    records = [
        *_conversation(),
        DAMAGED_FIELDS[case],
        _entry("after", "bad", type="message", message=_user("after the damage")),
        _entry("last", "after", type="message", message=_assistant(_text("answer after"))),
    ]
    original = _write(file, records)
    scripted.server.add(text_reply("one"), text_reply("two"))

    for run, prompt in enumerate(("next question", "and another")):
        result = scripted.run("-p", prompt, "--session", str(file))
        assert result.returncode == 0, result.stderr
        line = _one_line(result.stderr, "warning")  # once per run, naming the entry
        assert "entry bad left out of the context" in line
        sent = _sent_texts(scripted, run)
        assert sent[:2] == ["first question", "first answer"]
        assert "after the damage" in sent and sent[-1] == prompt

    assert file.read_bytes().startswith(original)  # untouched; the new turns appended


# --- unusable paths --------------------------------------------------------------------------


def _refused(result: subprocess.CompletedProcess[str], scripted: Scripted, *words: str) -> None:
    assert result.returncode == 2, result.stderr
    line = _one_line(result.stderr, "error")
    assert all(word in line for word in words), line
    assert result.stdout == ""
    assert not scripted.server.requests  # refused before any model call


def test_session_that_is_a_directory(scripted: Scripted) -> None:
    directory = scripted.project / "sessions.d"
    directory.mkdir()
    result = scripted.run("-p", "hi", "--session", str(directory))
    _refused(result, scripted, str(directory), "is a directory")


def test_session_that_is_a_device_does_not_hang(scripted: Scripted) -> None:
    result = scripted.run("-p", "hi", "--session", "/dev/full", timeout=20)
    _refused(result, scripted, "/dev/full", "not a regular file")


def test_a_text_file_is_never_taken_over(scripted: Scripted) -> None:
    notes = scripted.project / "NOTES.md"
    notes.write_text("# my notes\n\n- buy milk\n")
    result = scripted.run("-p", "hi", "--session", "NOTES.md")
    _refused(result, scripted, str(notes), "not a session file", "refusing to overwrite")
    assert notes.read_text() == "# my notes\n\n- buy milk\n"
    assert sorted(p.name for p in scripted.project.iterdir()) == ["NOTES.md"]


def test_session_dir_that_is_a_file(scripted: Scripted) -> None:
    file = scripted.project / "not-a-dir"
    file.write_text("x")
    for args in (["--session-dir", str(file)], ["-c", "--session-dir", str(file)]):
        _refused(scripted.run("-p", "hi", *args), scripted, str(file), "is not a directory")
    below = file / "sub"
    result = scripted.run("-p", "hi", "--session-dir", str(below))
    _refused(result, scripted, str(below), "cannot be created", f"{file} is not a directory")


def test_per_project_session_dir_that_is_a_file(scripted: Scripted) -> None:
    sessions = scripted.agent_dir / "sessions"
    sessions.mkdir()
    project_dir = sessions / ("--" + str(scripted.project).strip("/").replace("/", "-") + "--")
    project_dir.write_text("")
    result = scripted.run("-p", "hi")
    _refused(result, scripted, str(project_dir), "is not a directory")


# --- writes that fail ------------------------------------------------------------------------


def _limit_file_size(limit: int) -> None:
    # In the child: a write past `limit` bytes fails with EFBIG, as on a full disk
    # (CPython ignores SIGXFSZ, so the write returns the error instead of killing the process).
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def _run_limited(scripted: Scripted, limit: int, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "knightcode", "--model", f"{PROVIDER}/{MODEL}", *args]
    return subprocess.run(
        command,
        cwd=scripted.project,
        env=scripted.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=lambda: _limit_file_size(limit),
    )


def test_a_full_disk_keeps_the_answer_and_says_where(scripted: Scripted) -> None:
    file = scripted.project / "s.jsonl"
    original = _write(file, _conversation())
    scripted.server.add(text_reply("the answer"), text_reply("the json answer"))

    result = _run_limited(scripted, len(original), "-p", "hello", "--session", str(file))

    assert result.returncode == 1
    assert result.stdout == "the answer\n"
    line = _one_line(result.stderr, "error")
    assert f"cannot write the session to {file}" in line and "File too large" in line
    assert file.read_bytes() == original  # nothing half-written

    result = _run_limited(scripted, len(original), "--mode", "json", "hi", "--session", str(file))
    assert result.returncode == 1
    records = _records(result.stdout)
    (failed,) = [r for r in records if r["type"] == "session_write_failed"]
    assert failed["file"] == str(file) and failed["error"] == "File too large"
    answers = [r for r in records if r["type"] == "message_end"]
    assert answers[-1]["message"]["content"] == _text("the json answer")
    assert records[-1] == {"type": "agent_settled", "aborted": False}


UNPRIVILEGED = 65534  # nobody: root ignores file modes, so root runs the child as nobody


@pytest.fixture
def writable_by_child(scripted: Scripted) -> Iterator[tuple[Scripted, dict[str, Any]]]:
    """The scripted setup where the child can write, and a command prefix that runs it as a
    user file modes apply to (``nobody`` through ``setpriv`` when the tests run as root)."""
    if os.geteuid() != 0:
        yield scripted, {}
        return
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file modes cannot be tested")
    base = Path(tempfile.mkdtemp(prefix="kc-unprivileged-"))
    try:
        os.chmod(base, 0o755)
        agent_dir, project = base / "agent", base / "project"
        shutil.copytree(scripted.agent_dir, agent_dir)
        project.mkdir()
        for path in (base, *base.rglob("*")):
            os.chown(path, UNPRIVILEGED, UNPRIVILEGED)
        moved = Scripted(scripted.server, agent_dir, project)
        ids = f"--reuid={UNPRIVILEGED}", f"--regid={UNPRIVILEGED}", "--clear-groups"
        yield moved, {"prefix": [setpriv, *ids]}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _run_as(
    scripted: Scripted, options: dict[str, Any], *args: str
) -> subprocess.CompletedProcess[str]:
    prefix: list[str] = options.get("prefix", [])
    command = [*prefix, sys.executable, "-m", "knightcode", "--model", f"{PROVIDER}/{MODEL}", *args]
    env = scripted.env(
        KNIGHTCODE_CODING_AGENT_DIR=str(scripted.agent_dir), HOME=str(scripted.project)
    )
    return subprocess.run(
        command,
        cwd=scripted.project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_read_only_session_file_keeps_the_answer(
    writable_by_child: tuple[Scripted, dict[str, Any]],
) -> None:
    scripted, options = writable_by_child
    file = scripted.project / "s.jsonl"
    original = _write(file, _conversation())
    if options:
        os.chown(file, UNPRIVILEGED, UNPRIVILEGED)
    file.chmod(0o444)
    scripted.server.add(text_reply("still shown"))

    result = _run_as(scripted, options, "-p", "hello", "--session", str(file))

    assert result.returncode == 1
    assert result.stdout == "still shown\n"
    line = _one_line(result.stderr, "error")
    assert f"cannot write the session to {file}" in line and "Permission denied" in line
    assert file.read_bytes() == original


def test_an_unwritable_sessions_dir_keeps_the_answer(
    writable_by_child: tuple[Scripted, dict[str, Any]],
) -> None:
    scripted, options = writable_by_child
    sessions = scripted.agent_dir / "sessions"
    sessions.mkdir()
    if options:
        os.chown(sessions, UNPRIVILEGED, UNPRIVILEGED)
    sessions.chmod(0o555)
    scripted.server.add(text_reply("shown anyway"))
    try:
        result = _run_as(scripted, options, "--mode", "json", "hello")
    finally:
        sessions.chmod(0o755)

    assert result.returncode == 1
    records = _records(result.stdout)
    assert [r for r in records if r["type"] == "message_end"][-1]["message"]["content"] == _text(
        "shown anyway"
    )
    (failed,) = [r for r in records if r["type"] == "session_write_failed"]
    assert failed["file"].startswith(str(sessions)) and failed["error"].startswith(
        "Permission denied"
    )
    assert str(sessions) in _one_line(result.stderr, "error")
    assert not list(sessions.rglob("*.jsonl"))


def test_enospc_while_appending_keeps_the_answer(scripted: Scripted) -> None:
    # A real ENOSPC: the new session's path becomes a link to /dev/full after knightcode
    # started and before its first append (sessions are written after the first answer,
    # whose stream is slowed down until the link exists).
    file = scripted.project / "new.jsonl"
    scripted.server.add(text_reply("kept", " in memory", delay=0.3))
    command = [sys.executable, "-m", "knightcode", "--model", f"{PROVIDER}/{MODEL}"]
    process = subprocess.Popen(
        [*command, "-p", "hello", "--session", str(file)],
        cwd=scripted.project,
        env=scripted.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    scripted.server.wait_for_requests(1, timeout=30)
    file.symlink_to("/dev/full")
    out, err = process.communicate(timeout=60)

    assert process.returncode == 1
    assert out == "kept in memory\n"
    line = _one_line(err, "error")
    assert f"cannot write the session to {file}" in line and "No space left on device" in line


def test_session_stats_survive_damaged_messages_and_usage(scripted: Scripted) -> None:
    """``get_session_stats`` counts what it can: a damaged message is left out (as from the
    context), an odd usage count is 0."""
    file = scripted.project / "s.jsonl"
    records = _conversation()
    records[2]["message"]["usage"] = {"input": "many", "output": None, "cost": {"total": "x"}}
    records[5]["message"]["content"] = 5  # b2: damaged, left out
    _write(file, records)

    result = scripted.run(
        "--mode", "rpc", "--session", str(file), stdin='{"type":"get_session_stats"}\n'
    )

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    (response,) = [r for r in _records(result.stdout) if r.get("command") == "get_session_stats"]
    assert response["success"] is True, response
    stats = response["data"]
    assert (stats["userMessages"], stats["assistantMessages"], stats["totalMessages"]) == (3, 1, 4)
    assert stats["tokens"]["input"] == 0 and stats["cost"] == 0
