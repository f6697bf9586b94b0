"""Messages, summaries, notices: the visible text, and the styles that carry meaning."""

from __future__ import annotations

import base64
import struct
import zlib

from knightcode._modes.interactive.render.messages import (
    render_assistant,
    render_assistant_text,
    render_bash_execution,
    render_branch_summary,
    render_compaction_summary,
    render_custom,
    render_notice,
    render_retry,
    render_thinking,
    render_user,
)
from knightcode._modes.interactive.render.theme import DARK, LIGHT

from .support import WIDTH, color, line_styles, lines, opts, style_of, text


def _png(width: int, height: int) -> str:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    data = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk
    data += struct.pack(">I", zlib.crc32(chunk)) + b"\x00" * 40
    return base64.b64encode(data).decode()


def _assistant(content, stop="stop", error=None):
    message = {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "p",
        "model": "m",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": stop,
        "timestamp": 0,
    }
    if error is not None:
        message["errorMessage"] = error
    return message


def _bash(output, **fields):
    message = {
        "role": "bashExecution",
        "command": "make test",
        "output": output,
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 0,
    }
    message.update(fields)
    return message


# --- user ----------------------------------------------------------------------------------


def test_user_message_keeps_its_lines_on_the_user_background_across_the_width():
    r = render_user({"role": "user", "content": "first *line*\nsecond", "timestamp": 0}, opts())
    shown = lines(r)
    assert [line.strip() for line in shown if line.strip()] == ["first *line*", "second"]
    assert style_of(r, "second").bgcolor == DARK.user_message.bgcolor
    # the background block is padded to the full width (the one block that is)
    assert all(len(line) == WIDTH for line in shown)


def test_user_message_background_follows_the_theme():
    r = render_user({"role": "user", "content": "hi", "timestamp": 0}, opts(theme=LIGHT))
    assert style_of(r, "hi").bgcolor == LIGHT.user_message.bgcolor != DARK.user_message.bgcolor


def test_user_message_images_become_placeholders_with_size_and_dimensions():
    content = [
        {"type": "text", "text": "look"},
        {"type": "image", "data": _png(640, 480), "mimeType": "image/png"},
    ]
    shown = text(render_user({"role": "user", "content": content, "timestamp": 0}, opts()))
    assert "[image: image/png, 640x480, 73 B]" in shown


# --- assistant -----------------------------------------------------------------------------


def test_assistant_markdown_highlights_code_blocks():
    r = render_assistant_text(
        "Some **bold** text\n\n```python\ndef answer():\n    return 42\n```", opts()
    )
    shown = text(r)
    assert "Some bold text" in shown and "def answer():" in shown and "**" not in shown
    assert style_of(r, "def").color is not None  # pygments coloured the keyword
    assert style_of(r, "bold").bold


def test_assistant_message_renders_thinking_then_text_and_skips_tool_calls():
    message = _assistant(
        [
            {"type": "thinking", "thinking": "The user wants a greeting, so I will greet."},
            {"type": "text", "text": "Hello!"},
            {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}},
        ]
    )
    shown = lines(render_assistant(message, opts()))
    assert shown[0].startswith("Thinking… The user wants a greeting")
    assert shown[-1] == "Hello!"
    assert "ls" not in "\n".join(shown)


def test_collapsed_thinking_is_one_line_cut_at_the_width():
    long = "reasoning " * 100
    r = render_thinking({"type": "thinking", "thinking": long}, opts())
    shown = lines(r, 40)
    assert len(shown) == 1 and shown[0].startswith("Thinking… reasoning") and shown[0].endswith("…")
    assert len(shown[0]) <= 40


def test_expanded_thinking_shows_everything_in_italic_muted():
    thought = "First idea.\n\nSecond idea with more words.\n\nThird."
    r = render_thinking({"type": "thinking", "thinking": thought}, opts(show_thinking=True))
    shown = text(r)
    assert "First idea." in shown and "Second idea with more words." in shown and "Third." in shown
    style = style_of(r, "Second")
    assert style.italic and color(style) == color(DARK.thinking_text)


def test_redacted_thinking_says_so():
    block = {"type": "thinking", "thinking": "", "redacted": True, "thinkingSignature": "x"}
    assert "redacted" in text(render_thinking(block, opts(show_thinking=True)))


def test_error_stop_reason_shows_the_message_in_the_error_colour():
    r = render_assistant(
        _assistant([{"type": "text", "text": "partial"}], "error", "HTTP 500"), opts()
    )
    assert lines(r)[-1] == "Error: HTTP 500"
    assert color(style_of(r, "HTTP 500")) == color(DARK.error)


def test_aborted_reply_says_interrupted():
    r = render_assistant(_assistant([], "aborted", "Request was aborted"), opts())
    assert lines(r) == ["Interrupted"]
    assert color(style_of(r, "Interrupted")) == color(DARK.warning)


def test_a_message_with_nothing_to_show_renders_nothing():
    call = {"type": "toolCall", "id": "c1", "name": "ls", "arguments": {}}
    assert render_assistant(_assistant([call], "toolUse"), opts()) is None


# --- ! commands ----------------------------------------------------------------------------


def test_bash_execution_collapses_to_the_last_lines_with_the_expand_hint():
    output = "\n".join(f"line {i}" for i in range(30)) + "\n"
    collapsed = lines(render_bash_execution(_bash(output), opts()))
    assert collapsed[0] == "▌ $ make test"
    assert collapsed[1] == "▌ … 10 earlier lines (ctrl+o to expand)"
    assert collapsed[2] == "▌ line 10" and collapsed[-1] == "▌ line 29"
    expanded = lines(render_bash_execution(_bash(output), opts(expand_tools=True)))
    assert len(expanded) == 31 and expanded[1] == "▌ line 0"


def test_bash_execution_shows_a_failing_exit_code_in_the_error_colour():
    r = render_bash_execution(_bash("boom\n", exitCode=2), opts())
    assert lines(r)[-1] == "▌ exit 2"
    assert color(style_of(r, "exit 2")) == color(DARK.error)
    assert color(style_of(r, "▌")) == color(DARK.error)


def test_bash_execution_success_shows_no_status_line():
    assert lines(render_bash_execution(_bash("ok\n"), opts())) == ["▌ $ make test", "▌ ok"]


def test_bash_execution_markers_cancelled_truncated_and_excluded():
    message = _bash(
        "x\n",
        exitCode=None,
        cancelled=True,
        truncated=True,
        fullOutputPath="/tmp/out.log",
        excludeFromContext=True,
    )
    shown = lines(render_bash_execution(message, opts()))
    assert shown[0] == "▌ $ make test  (not sent to the model)"
    header = render_bash_execution(message, opts())
    assert style_of(header, "$ make").bold and not style_of(header, "(not sent").bold
    assert shown[-1] == "▌ cancelled · output truncated; full output: /tmp/out.log"


def test_running_bash_execution_says_running():
    shown = lines(render_bash_execution(_bash("so far\n", exitCode=None), opts(), running=True))
    assert shown[-1] == "▌ running…"


def test_command_output_escape_sequences_do_not_reach_the_terminal():
    r = render_bash_execution(_bash("\x1b[31mred\x1b[0m \x1b]0;title\x07done\n"), opts())
    assert lines(r)[-1] == "▌ red done"


# --- plugin messages and summaries ---------------------------------------------------------


def _custom(display):
    return {
        "role": "custom",
        "customType": "todo",
        "content": "- [ ] write tests",
        "display": display,
        "timestamp": 0,
    }


def test_custom_message_hidden_when_display_is_false():
    assert render_custom(_custom(False), opts()) is None
    shown = lines(render_custom(_custom(True), opts()))
    assert shown[0] == "▌ [todo]" and "write tests" in shown[1]


def test_compaction_summary_collapsed_is_one_line_and_expanded_shows_the_summary():
    message = {
        "role": "compactionSummary",
        "summary": "## Goal\n\nShip the UI.\n\n## Done\n\n- render",
        "tokensBefore": 123456,
        "timestamp": 0,
    }
    collapsed = lines(render_compaction_summary(message, opts(expand_hint="alt+e")))
    assert collapsed == ["▌ Compaction · compacted from 123,456 tokens (alt+e to expand)"]
    expanded = text(render_compaction_summary(message, opts(expand_tools=True)))
    assert "Ship the UI." in expanded and "render" in expanded and "Goal" in expanded


def test_branch_summary_collapsed_and_expanded():
    message = {
        "role": "branchSummary",
        "summary": "Tried **A**, it failed.",
        "fromId": "e1",
        "timestamp": 0,
    }
    assert lines(render_branch_summary(message, opts())) == [
        "▌ Branch summary · 4 words (ctrl+o to expand)"
    ]
    expanded = lines(render_branch_summary(message, opts(expand_tools=True)))
    assert expanded[0] == "▌ Branch summary" and expanded[-1] == "▌ Tried A, it failed."


# --- notices and retry ---------------------------------------------------------------------


def test_notices_carry_their_level_colour():
    info = render_notice("saved", "info", opts())
    assert lines(info) == ["• saved"]
    assert (
        color(style_of(info, "•")) == color(DARK.accent) and color(style_of(info, "saved")) is None
    )
    warning = render_notice("slow", "warning", opts())
    error = render_notice("failed", "error", opts())
    assert color(style_of(warning, "slow")) == color(DARK.warning)
    assert color(style_of(error, "failed")) == color(DARK.error)
    assert lines(error) == ["✗ failed"]


def test_retry_is_one_line_with_countdown_and_first_error_line():
    r = render_retry(2, 5, 2.2, "429 Too Many Requests\nretry-after: 3", opts())
    assert lines(r) == ["Retrying in 3s (attempt 2/5): 429 Too Many Requests"]
    assert len(lines(render_retry(1, 3, 1, "x" * 500, opts()), 50)) == 1
    assert color(line_styles(r, "Retrying")[0]) == color(DARK.warning)
