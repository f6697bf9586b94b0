"""Hooks that hang, print or answer nonsense, through the real executable (``-p`` and
``--mode json``): the hook deadline, stop signals, stdout kept for the protocol, result checks,
and Ctrl-C while a plugin loads.

A hanging plugin first creates a marker file, so the tests signal it while it is inside the hook
rather than after a guessed delay.
"""

from __future__ import annotations

import json
import signal
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from knightcode._session.manager import SessionManager
from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.noisy_plugin import NOISE, NOISY

from .conftest import Scripted


def plugin(tmp_path: Path, source: str, name: str = "ext") -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text("from knightcode import hookimpl\n" + textwrap.dedent(source))
    return path


WAITS = {
    "sync": ["time.sleep(1000)"],
    "async": ["await asyncio.sleep(1000)"],
    # Swallows the first interruption: only a second signal ends it.
    "stubborn": [
        "while True:",
        "    try:",
        "        time.sleep(1000)",
        "    except BaseException:",
        "        pass",
    ],
    # Swallows its cancellation and waits again: abandoned after the grace (watchdog.GRACE).
    "stubborn-async": [
        "while True:",
        "    try:",
        "        await asyncio.sleep(1000)",
        "    except asyncio.CancelledError:",
        "        pass",
    ],
}


def hanging(tmp_path: Path, hook: str, how: str) -> Path:
    """A plugin whose ``hook`` handler marks that it started, then hangs ``how``."""
    marker = tmp_path / "started"
    prefix = "async " if how.endswith("async") else ""
    lines = [
        "import asyncio, pathlib, time",
        "",
        "@hookimpl",
        f"{prefix}def {hook}(ctx):",
        f"    pathlib.Path({str(marker)!r}).touch()",
        *("    " + line for line in WAITS[how]),
    ]
    return plugin(tmp_path, "\n".join(lines) + "\n")


def start(scripted: Scripted, *args: str, settings: dict[str, object] | None = None) -> Popen:
    if settings is not None:
        (scripted.agent_dir / "settings.json").write_text(json.dumps(settings))
    process = scripted.popen(*args)
    STARTED.append(process)
    return process


Popen = subprocess.Popen[bytes]
STARTED: list[Popen] = []


@pytest.fixture(autouse=True)
def no_process_left() -> Iterator[None]:
    """A failing test must not leave a hanging knightcode behind."""
    yield
    while STARTED:
        process = STARTED.pop()
        if process.poll() is None:
            process.kill()
            process.communicate()


def wait_for_file(path: Path, process: Popen, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def assert_loadable(scripted: Scripted) -> list[dict[str, object]]:
    """The one session file: whole lines only, and the session loader reads every entry."""
    (path,) = scripted.session_files()
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    lines = [json.loads(line) for line in raw.split(b"\n") if line]
    session = SessionManager.open(path)
    assert len(session.get_entries()) == len(lines) - 1  # the header is not an entry
    session.build_context()
    session.close()
    assert path.read_bytes() == raw  # nothing was repaired or moved aside
    return lines


def json_records(stdout: bytes) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.split(b"\n") if line]


# --- stop signals ---------------------------------------------------------------------------


CASES = [
    ("tool_call", "async"),
    ("tool_call", "stubborn-async"),
    ("tool_call", "sync"),
    ("before_agent_start", "sync"),
    ("context", "sync"),
    ("context", "async"),
    ("input", "sync"),
    ("message_update", "sync"),
    ("session_start", "async"),
]


@pytest.mark.parametrize(("hook", "how"), CASES, ids=[f"{h}-{w}" for h, w in CASES])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_a_stop_signal_aborts_a_run_hanging_in_a_hook(
    scripted: Scripted, tmp_path: Path, hook: str, how: str, signum: signal.Signals
) -> None:
    scripted.server.add(tool_call_reply([tool_call("c1", "bash", {"command": "echo hi"})]))
    scripted.server.add(text_reply("done"))
    process = start(scripted, "-e", str(hanging(tmp_path, hook, how)), "--mode", "json", "hi")
    wait_for_file(tmp_path / "started", process)
    sent = time.monotonic()
    process.send_signal(signum)
    out, err = process.communicate(timeout=20)
    assert time.monotonic() - sent < 3, "the run was not aborted promptly"
    assert process.returncode == 1, err
    assert b"knightcode: aborted" in err and b"Traceback" not in err
    records = json_records(out)
    assert all("type" in record for record in records)
    if hook != "session_start":
        assert records[-1] == {"type": "agent_settled", "aborted": True}
        assert_loadable(scripted)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_a_second_signal_exits_at_once_and_the_session_stays_loadable(
    scripted: Scripted, tmp_path: Path, signum: signal.Signals
) -> None:
    scripted.server.add(tool_call_reply([tool_call("c1", "bash", {"command": "echo hi"})]))
    process = start(scripted, "-e", str(hanging(tmp_path, "tool_call", "stubborn")), "-p", "hi")
    wait_for_file(tmp_path / "started", process)
    process.send_signal(signum)
    time.sleep(0.5)
    assert process.poll() is None  # the plugin swallowed the first one
    sent = time.monotonic()
    process.send_signal(signum)
    _out, err = process.communicate(timeout=10)
    # At once, not after the stubborn hook (which never returns): the bound leaves room for a
    # loaded machine (it failed once at 2 s with other test suites sharing the 2 cores).
    assert time.monotonic() - sent < 5
    assert process.returncode == 128 + signum
    assert b"knightcode: stopped" in err and b"Traceback" not in err
    lines = assert_loadable(scripted)
    assert [line["message"]["role"] for line in lines if line["type"] == "message"] == [
        "user",
        "assistant",
    ]


# --- the hook deadline ----------------------------------------------------------------------


@pytest.fixture
def short_deadline(scripted: Scripted) -> None:
    (scripted.agent_dir / "settings.json").write_text(json.dumps({"hookTimeoutMs": 500}))


@pytest.mark.parametrize("how", ["sync", "async"])
@pytest.mark.usefixtures("short_deadline")
def test_a_tool_call_hook_past_the_deadline_is_reported_and_blocks_the_call(
    scripted: Scripted, tmp_path: Path, how: str
) -> None:
    scripted.server.add(
        tool_call_reply([tool_call("c1", "bash", {"command": "touch ran"})]), text_reply("done")
    )
    ext = hanging(tmp_path, "tool_call", how)
    started = time.monotonic()
    result = scripted.run("-e", str(ext), "-p", "hi", timeout=30)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 10
    assert result.stdout == "done\n"
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert f"plugin ext:{ext} failed in tool_call" in result.stderr
    assert "did not answer within 0.5 s (hookTimeoutMs)" in result.stderr
    assert not (scripted.project / "ran").exists()  # fail closed: the call was blocked
    sent = scripted.server.requests[1].body["messages"]
    assert "did not answer within 0.5 s" in json.dumps(sent[-1])


@pytest.mark.parametrize("hook", ["context", "before_agent_start", "message_end"])
@pytest.mark.usefixtures("short_deadline")
def test_a_slow_handler_of_another_hook_is_reported_and_skipped(
    scripted: Scripted, tmp_path: Path, hook: str
) -> None:
    scripted.server.add(text_reply("done"))
    ext = hanging(tmp_path, hook, "sync")
    result = scripted.run("-e", str(ext), "-p", "hi", timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n"
    assert f"plugin ext:{ext} failed in {hook}: HookTimeout: did not answer within 0.5 s" in (
        result.stderr
    )


def test_a_deadline_of_zero_means_none(scripted: Scripted, tmp_path: Path) -> None:
    (scripted.agent_dir / "settings.json").write_text(json.dumps({"hookTimeoutMs": 0}))
    ext = plugin(
        tmp_path,
        """
        import time

        @hookimpl
        def before_agent_start(ctx):
            time.sleep(1.2)
            return {"system_prompt": "patient"}
        """,
    )
    scripted.server.add(text_reply("done"))
    result = scripted.run("-e", str(ext), "-p", "hi")
    assert result.returncode == 0 and result.stderr == ""
    assert scripted.server.requests[0].body["messages"][0]["content"] == "patient"


def test_an_invalid_hook_timeout_is_a_settings_error(scripted: Scripted) -> None:
    (scripted.agent_dir / "settings.json").write_text(json.dumps({"hookTimeoutMs": "soon"}))
    result = scripted.run("-p", "hi")
    assert result.returncode == 2
    assert "hookTimeoutMs" in result.stderr and result.stderr.count("\n") == 1


# --- stdout belongs to knightcode -------------------------------------------------------------


def test_plugin_output_never_reaches_the_json_stream(scripted: Scripted, tmp_path: Path) -> None:
    scripted.server.add(text_reply("ok"))
    records, result = scripted.run_json("-e", str(plugin(tmp_path, NOISY)), "hi")
    assert result.returncode == 0, result.stderr
    assert records[0]["type"] == "session" and records[-1]["type"] == "agent_settled"
    for text in NOISE:
        assert text not in result.stdout
        assert text in result.stderr


def test_plugin_output_stays_out_of_the_printed_answer(scripted: Scripted, tmp_path: Path) -> None:
    scripted.server.add(text_reply("the answer"))
    result = scripted.run("-e", str(plugin(tmp_path, NOISY)), "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "the answer\n"
    assert all(text in result.stderr for text in NOISE)


def test_help_still_goes_to_stdout(scripted: Scripted) -> None:
    result = scripted.run("--mode", "json", "--help")
    assert result.returncode == 0 and "--mode" in result.stdout


# --- hook results -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "hook", "problem"),
    [
        (
            "@hookimpl\ndef context(messages):\n    return 'not messages'\n",
            "context",
            "expected a list of messages or None, not str",
        ),
        (
            "@hookimpl\ndef context(messages):\n    return [{'role': 'user'}]\n",
            "context",
            "messages[0].content must be a list of text or image blocks",
        ),
        (
            "@hookimpl\ndef tool_result():\n    return {'content': 5}\n",
            "tool_result",
            "content must be a list of text or image blocks, not int",
        ),
        (
            "@hookimpl\ndef tool_result():\n    return {'content': [{'type': 'text'}]}\n",
            "tool_result",
            "content[0] (text) needs 'text' as str",
        ),
        (
            "from knightcode import ToolResultPatch\n\n"
            "@hookimpl\ndef tool_result():\n"
            "    return ToolResultPatch(content=[{'type': 'img'}])\n",
            "tool_result",
            "content[0] has type 'img'",
        ),
    ],
    ids=["context-str", "context-no-content", "patch-int", "patch-block", "patch-typed"],
)
def test_a_wrong_result_is_reported_naming_plugin_and_hook_and_ignored(
    scripted: Scripted, tmp_path: Path, source: str, hook: str, problem: str
) -> None:
    scripted.server.add(
        tool_call_reply([tool_call("c1", "bash", {"command": "echo from-the-tool"})]),
        text_reply("done"),
    )
    ext = plugin(tmp_path, source)
    result = scripted.run("-e", str(ext), "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n"
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines and all(f"plugin ext:{ext} failed in {hook}: " in line for line in lines)
    assert problem in lines[0]
    if hook == "tool_result":  # the patch was ignored: the model saw the tool's own output
        assert "from-the-tool" in json.dumps(scripted.server.requests[1].body["messages"][-1])


# --- KeyboardInterrupt while plugins load -------------------------------------------------------


def test_a_plugin_raising_keyboard_interrupt_at_import_fails_to_load(
    scripted: Scripted, tmp_path: Path
) -> None:
    ext = tmp_path / "interrupting.py"
    ext.write_text("raise KeyboardInterrupt\n")
    scripted.server.add(text_reply("done"))
    result = scripted.run("-e", str(ext), "-p", "hi")
    assert result.returncode == 0
    assert result.stdout == "done\n"
    assert result.stderr == (
        f"knightcode: plugin ext:{ext} not loaded: KeyboardInterrupt (interrupting.py, line 1)\n"
    )


def test_ctrl_c_while_a_slow_plugin_loads_names_it(scripted: Scripted, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    ext = tmp_path / "slow.py"
    ext.write_text(f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\ntime.sleep(60)\n")
    process = start(scripted, "-e", str(ext), "-p", "hi")
    wait_for_file(marker, process)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=10)
    assert process.returncode == 130
    assert out == b""
    assert err.decode() == f"knightcode: error: interrupted while loading plugin ext:{ext}\n"
