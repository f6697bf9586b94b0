"""The interactive UI used as a person uses it: typing, answers, tools, interrupting, queues,
exiting — the real executable in a real tmux against the scripted server."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, requires_tmux

pytestmark = requires_tmux


def _entries(scripted: Scripted) -> list[dict[str, object]]:
    (path,) = scripted.session_files()
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def test_type_submit_answer_and_ctrl_d_exit_with_the_session_complete(
    scripted: Scripted, launch: Launch
) -> None:
    scripted.server.add(text_reply("Hello ", "from ", "the **scripted** model."))
    ui = launch()
    ui.send_text("hi there")
    ui.send_keys("Enter")
    ui.wait_for("Hello from the scripted model.")
    # The answer went into the scrollback above the editor, the editor is empty again.
    assert ui.capture().index("hi there") < ui.capture().index("Hello from")
    ui.send_keys("C-d")
    assert ui.wait_exit() == 0
    messages = [e["message"] for e in _entries(scripted) if e["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant"]  # type: ignore[index]
    assert scripted.server.requests[0].body["messages"][-1]["content"] == [
        {"type": "text", "text": "hi there"}
    ]


def test_finished_messages_stay_in_the_terminal_scrollback(
    scripted: Scripted, launch: Launch
) -> None:
    scripted.server.add(*[text_reply(f"answer number {n}") for n in range(12)])
    ui = launch(height=15)
    for n in range(12):
        ui.send_text(f"question {n}")
        ui.send_keys("Enter")
        ui.wait_for(f"answer number {n}")
    history = ui.capture_history()
    # Scrolled off the 15-line screen, but every exchange is in the terminal's own history, once.
    lines = [line.strip() for line in history.splitlines()]
    for n in range(12):
        assert lines.count(f"answer number {n}") == 1, history
    assert history.count("knightcode v") == 1


def test_tool_output_is_collapsed_and_ctrl_o_expands_it(scripted: Scripted, launch: Launch) -> None:
    scripted.server.add(
        tool_call_reply([tool_call("c1", "bash", {"command": "seq 101 140"})], text="Running."),
        text_reply("Forty lines."),
    )
    ui = launch(height=60)
    ui.send_text("count")
    ui.send_keys("Enter")
    ui.wait_for("Forty lines.")
    screen = ui.capture()
    # The tail is shown, the head collapsed.
    assert re.search(r"^[▌\s]*140\s*$", screen, re.M)
    assert not re.search(r"^[▌\s]*101\s*$", screen, re.M)
    assert re.search(r"(earlier|more) lines \(ctrl\+o to expand\)", screen)
    ui.send_keys("C-o")
    ui.wait_for(re.compile(r"^[▌\s]*101\s*$", re.M))


def test_escape_interrupts_a_long_stream_then_a_new_prompt_is_answered(
    scripted: Scripted, launch: Launch
) -> None:
    scripted.server.add(
        text_reply(*[f"w{i} " for i in range(5000)], delay=0.002), text_reply("fresh answer")
    )
    ui = launch()
    ui.send_text("talk a lot")
    ui.send_keys("Enter")
    ui.wait_for(re.compile(r"w2\d\d "))
    ui.send_keys("Escape")
    ui.wait_for("Interrupted")
    ui.send_text("short please")
    ui.send_keys("Enter")
    ui.wait_for("fresh answer")
    last = scripted.server.requests[-1].body["messages"]
    assert last[-1]["content"] == [{"type": "text", "text": "short please"}]
    # The interrupted answer is recorded (and, like the reference, not sent back to the model).
    # The screen shows the answer a moment before its entry is written: wait for it (5 s at most).
    for _ in range(50):
        stops = [
            e["message"].get("stopReason")  # type: ignore[union-attr]
            for e in _entries(scripted)
            if e["type"] == "message" and e["message"]["role"] == "assistant"  # type: ignore[index]
        ]
        if len(stops) == 2:
            break
        time.sleep(0.1)
    assert stops == ["aborted", "stop"]


def test_enter_while_working_steers_and_alt_enter_queues_a_follow_up(
    scripted: Scripted, launch: Launch
) -> None:
    scripted.server.add(
        tool_call_reply(
            [tool_call("c1", "bash", {"command": "sleep 1; echo slept"})], text="Sleeping."
        ),
        text_reply("saw the steering"),
        text_reply("saw the follow-up"),
    )
    ui = launch()
    ui.send_text("start")
    ui.send_keys("Enter")
    ui.wait_for("Sleeping.")
    ui.send_text("steer this way")
    ui.send_keys("Enter")
    ui.wait_for("Steering: steer this way")
    ui.send_text("and then this")
    ui.send_keys("M-Enter")
    ui.wait_for("Follow-up: and then this")
    ui.wait_for("saw the follow-up", timeout=20)
    bodies = [r.body["messages"] for r in scripted.server.requests]
    assert any(m.get("content") == [{"type": "text", "text": "steer this way"}] for m in bodies[1])
    assert bodies[2][-1]["content"] == [{"type": "text", "text": "and then this"}]


def test_alt_up_brings_queued_messages_back_to_the_editor(
    scripted: Scripted, launch: Launch
) -> None:
    scripted.server.add(text_reply(*["z"] * 3000, delay=0.005), text_reply("unused"))
    ui = launch()
    ui.send_text("go")
    ui.send_keys("Enter")
    ui.wait_for("Working")
    ui.send_text("queued one")
    ui.send_keys("M-Enter")
    ui.wait_for("Follow-up: queued one")
    ui.send_keys("M-Up")
    ui.wait_gone("Follow-up: queued one")
    ui.wait_for(re.compile(r"^─+\n\s*queued one\s*\n─+$", re.M))  # in the editor
    ui.send_keys("Escape")
    ui.wait_for("Interrupted")
    assert len(scripted.server.requests) == 1  # the follow-up was taken back, never sent


def test_model_switch_by_name_is_used_for_the_next_request(
    scripted: Scripted, launch: Launch
) -> None:
    models = json.loads((scripted.agent_dir / "models.json").read_text())
    provider = models["providers"]["scripted"]
    provider["models"].append({"id": "other-model", "contextWindow": 8000, "maxTokens": 1000})
    (scripted.agent_dir / "models.json").write_text(json.dumps(models))
    scripted.server.add(text_reply("from the other one"))
    ui = launch()
    ui.send_text("/model scripted/other-model")
    ui.send_keys("Enter")
    ui.wait_for("Model: scripted/other-model")
    ui.wait_for(re.compile(r"scripted/other-model\s*$", re.M))  # the footer
    ui.send_text("hello")
    ui.send_keys("Enter")
    ui.wait_for("from the other one")
    assert scripted.server.requests[-1].body["model"] == "other-model"
    settings = json.loads((scripted.agent_dir / "settings.json").read_text())
    assert settings["defaultModel"] == "other-model"  # remembered for the next start


def test_shell_commands_run_and_double_bang_stays_out_of_the_context(
    scripted: Scripted, launch: Launch
) -> None:
    scripted.server.add(text_reply("noted"))
    ui = launch()
    ui.send_text("!echo visible-output")
    ui.send_keys("Enter")
    ui.wait_for(re.compile(r"^[▌\s]*visible-output", re.M))
    ui.send_text("!!echo hidden-output")
    ui.send_keys("Enter")
    ui.wait_for(re.compile(r"^[▌\s]*hidden-output", re.M))
    ui.send_text("what did you see")
    ui.send_keys("Enter")
    ui.wait_for("noted")
    sent = json.dumps(scripted.server.requests[-1].body["messages"])
    assert "visible-output" in sent and "hidden-output" not in sent


def test_ctrl_c_clears_then_a_second_ctrl_c_exits(scripted: Scripted, launch: Launch) -> None:
    ui = launch()
    ui.send_text("draft text")
    ui.wait_for("draft text")
    ui.send_keys("C-c")
    ui.wait_gone("draft text")
    ui.send_keys("C-c", "C-c")
    assert ui.wait_exit() == 0


def test_starting_with_a_message_submits_it(scripted: Scripted, launch: Launch) -> None:
    (scripted.project / "spec.txt").write_text("the spec says 42\n")
    scripted.server.add(text_reply("read your spec"))
    ui = launch("summarise", "@spec.txt")
    ui.wait_for("read your spec")
    (sent,) = scripted.server.requests[0].body["messages"][-1]["content"]
    assert "the spec says 42" in sent["text"] and "summarise" in sent["text"]


def test_without_a_terminal_model_the_ui_still_opens_and_says_how_to_get_one(
    scripted: Scripted, launch: Launch
) -> None:
    (scripted.agent_dir / "models.json").unlink()
    ui = launch(ready="no model", model=None)
    ui.wait_for("/login adds an API key")
    ui.send_text("hello")
    ui.send_keys("Enter")
    ui.wait_for(re.compile(r"No model is available yet.*\n(.*\n)*.*No model is available", re.S))
    assert scripted.server.requests == []


def test_ctrl_z_suspends_to_the_shell_and_fg_brings_the_ui_back(scripted: Scripted) -> None:
    import shlex
    import sys

    from knightcode.testing import TmuxSession
    from tests.interactive.conftest import READY

    scripted.server.add(text_reply("back again"))
    environment = scripted.env(PS1="shell$ ")
    environment.pop("NO_COLOR", None)
    command = shlex.join([sys.executable, "-m", "knightcode", "--model", READY])
    with TmuxSession.start(["bash", "--norc", "--noprofile", "-i"], env=environment) as shell:
        shell.wait_for(re.compile(r"^shell\$", re.M))
        shell.send_text(command)
        shell.send_keys("Enter")
        shell.wait_for(re.compile(re.escape(READY) + r"\s*$", re.M), timeout=20)
        shell.send_keys("C-z")
        shell.wait_for(re.compile(r"Stopped.*\n.*shell\$", re.S))
        shell.send_text("fg")
        shell.send_keys("Enter")
        shell.wait_for(re.compile(r"shell\$ fg\n(.*\n)*─{20,}\n.*\n.*" + re.escape(READY), re.M))
        shell.send_text("resumed")
        shell.send_keys("Enter")
        shell.wait_for("back again")
        shell.send_keys("C-d")
        shell.wait_for(re.compile(r"^shell\$\s*$", re.M))


def test_a_resize_lays_the_ui_out_again(scripted: Scripted, launch: Launch) -> None:
    scripted.server.add(text_reply("narrow answer"))
    ui = launch(width=100)
    ui.resize(60, 20)
    ui.wait_for(re.compile(r"^─{60}$", re.M))  # the editor's rule follows the new width
    # The transcript is printed again at the new width: the header's hints wrap at 60 columns.
    ui.wait_for(re.compile(r"ctrl\+d exit \(empty editor\)$", re.M))
    ui.send_text("hello")
    ui.send_keys("Enter")
    ui.wait_for("narrow answer")
    screen = ui.capture()
    assert all(len(line) <= 60 for line in screen.splitlines()), screen


def test_a_retry_shows_a_countdown_then_the_answer(scripted: Scripted, launch: Launch) -> None:
    from knightcode.testing import error_reply

    settings = scripted.agent_dir / "settings.json"
    settings.write_text(json.dumps({"retry": {"baseDelayMs": 2000}}))
    scripted.server.add(error_reply(503, "overloaded"), text_reply("second time lucky"))
    ui = launch()
    ui.send_text("try")
    ui.send_keys("Enter")
    ui.wait_for(re.compile(r"Retrying in 2s \(attempt 1/\d+\)"))
    ui.wait_for(re.compile(r"Retrying in 1s \(attempt 1/\d+\)"))  # it counts down
    ui.wait_for("second time lucky")
    ui.wait_gone("Retrying in")


def test_compact_replaces_the_context_with_a_summary(scripted: Scripted, launch: Launch) -> None:
    scripted.server.add(
        text_reply("an answer worth keeping"),
        text_reply("## Goal\nThe user said hello.\n"),
        text_reply("after compaction"),
    )
    ui = launch()
    ui.send_text("hello")
    ui.send_keys("Enter")
    ui.wait_for("an answer worth keeping")
    ui.send_text("/compact keep it short")
    ui.send_keys("Enter")
    ui.wait_for("Compacted the context")
    ui.wait_for(re.compile(r"Compact(ed|ion)"))
    ui.send_text("and now")
    ui.send_keys("Enter")
    ui.wait_for("after compaction")
    summary_request = json.dumps(scripted.server.requests[1].body)
    assert "keep it short" in summary_request
    sent = json.dumps(scripted.server.requests[-1].body["messages"])
    assert "The user said hello." in sent


def test_ctrl_g_edits_the_message_in_the_external_editor(
    scripted: Scripted, launch: Launch
) -> None:
    script = scripted.project / "fake-editor.sh"
    script.write_text('#!/bin/sh\nprintf "rewritten by the editor" > "$1"\n')
    script.chmod(0o755)
    scripted.server.add(text_reply("got it"))
    ui = launch(EDITOR=str(script), VISUAL="")
    ui.send_text("draft")
    ui.wait_for("draft")
    ui.send_keys("C-g")
    ui.wait_for(re.compile(r"^─+\n\s*rewritten by the editor\s*\n─+$", re.M))
    ui.send_keys("Enter")
    ui.wait_for("got it")
    assert scripted.server.requests[-1].body["messages"][-1]["content"] == (
        [{"type": "text", "text": "rewritten by the editor"}]
    )


def test_copy_puts_the_last_answer_on_the_clipboard(scripted: Scripted, launch: Launch) -> None:
    scripted.server.add(text_reply("copy **me** please"))
    ui = launch()
    ui.tmux("set-option", "-s", "set-clipboard", "on")  # tmux keeps what OSC 52 sends
    ui.send_text("say something")
    ui.send_keys("Enter")
    ui.wait_for("copy me please")
    ui.send_text("/copy")
    ui.send_keys("Enter")
    ui.wait_for("Copied 1 line")
    assert ui.tmux("show-buffer") == "copy **me** please"


FAKE_XCLIP = """#!/bin/sh
# A clipboard holding a PNG: what xclip answers for TARGETS and for image/png.
case "$*" in
  *TARGETS*) printf 'TARGETS\\nimage/png\\n' ;;
  *image/png*) printf '\\211PNG\\r\\n\\032\\n\\000\\000\\000\\rIHDR'
               printf '\\000\\000\\000\\002\\000\\000\\000\\003' ;;
  *) exit 1 ;;
esac
"""


def test_ctrl_v_attaches_a_clipboard_image_to_the_next_message(
    scripted: Scripted, launch: Launch
) -> None:
    import os

    bin_dir = scripted.project / "bin"
    bin_dir.mkdir()
    (bin_dir / "xclip").write_text(FAKE_XCLIP)
    (bin_dir / "xclip").chmod(0o755)
    models = json.loads((scripted.agent_dir / "models.json").read_text())
    models["providers"]["scripted"]["models"][0]["input"] = ["text", "image"]
    (scripted.agent_dir / "models.json").write_text(json.dumps(models))
    scripted.server.add(text_reply("a tiny image"))
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    ui = launch(PATH=path, DISPLAY=":0", WAYLAND_DISPLAY="")
    ui.send_keys("C-v")
    ui.wait_for("[image #1]")
    ui.send_text("what is this")
    ui.send_keys("Enter")
    ui.wait_for("a tiny image")
    content = scripted.server.requests[-1].body["messages"][-1]["content"]
    assert isinstance(content, list)
    kinds = [part["type"] for part in content]
    assert "image_url" in kinds and "text" in kinds


def test_nothing_printed_is_overwritten_when_the_ui_sits_at_the_bottom(
    scripted: Scripted, launch: Launch
) -> None:
    # The region at the terminal's bottom row, shrinking as each finished paragraph leaves it:
    # the scrollback must hold every paragraph once, in order (a cursor the terminal clamped at
    # its bottom used to make the next write start too high and overwrite the last lines).
    paragraphs = [f"paragraph {n} " + "word " * 30 for n in range(8)]
    chunks = [word + " " for text in paragraphs for word in (text + "\n\n").split(" ")]
    scripted.server.add(
        *[text_reply(f"filler answer {n}") for n in range(4)],
        tool_call_reply([tool_call("c1", "bash", {"command": "echo tool-ran"})], text="Before."),
        text_reply(*chunks, delay=0.003),
    )
    ui = launch(height=14)
    for n in range(4):
        ui.send_text(f"filler {n}")
        ui.send_keys("Enter")
        ui.wait_for(f"filler answer {n}")
    ui.send_text("now stream")
    ui.send_keys("Enter")
    ui.wait_for("paragraph 7")
    # The end of the run: the status line gone and the editor right below the last paragraph
    # (while it streams, the live region shows it too, for a frame after it was printed).
    ui.wait_for(re.compile(r"word\s*\n(\s*\n)+─{20,}\n"))
    ui.wait_gone("Working")
    lines = [line.strip() for line in ui.capture_history().splitlines()]
    starts = [
        next(i for i, line in enumerate(lines) if line.startswith(f"paragraph {n} "))
        for n in range(8)
    ]
    assert starts == sorted(starts)
    for n in range(8):
        assert sum(line.startswith(f"paragraph {n} ") for line in lines) == 1, "\n".join(lines)
    before = lines.index("Before.")
    assert before < next(i for i, line in enumerate(lines) if "echo tool-ran" in line) < starts[0]


NOTIFY_AT_START = """
from knightcode import hookimpl


@hookimpl
def session_start(reason, previous_session_file, ctx):
    ctx.ui.notify("plugin says hello at start", "warning")
"""


def test_a_plugin_notice_at_start_comes_after_the_header(
    scripted: Scripted, launch: Launch, tmp_path: Path
) -> None:
    plugin = tmp_path / "hello_plugin.py"
    plugin.write_text(NOTIFY_AT_START, encoding="utf-8")
    ui = launch("-e", str(plugin))
    ui.wait_for("plugin says hello at start")
    screen = ui.capture()
    assert screen.index("knightcode v") < screen.index("plugin says hello at start")
