"""A tool call and its result as one block: headers, clipping, diffs, statuses."""

from __future__ import annotations

import base64

from knightcode._modes.interactive.render.theme import DARK
from knightcode._modes.interactive.render.tools import render_tool, tool_status
from knightcode._tools.edit_diff import generate_diff

from .support import color, line_styles, lines, opts, style_of, text


def _call(name, **arguments):
    return {"type": "toolCall", "id": "call-1", "name": name, "arguments": arguments}


def _result(output, *, error=False, details=None, images=()):
    content = [{"type": "text", "text": output}]
    content += [{"type": "image", "data": data, "mimeType": mime} for mime, data in images]
    result = {
        "role": "toolResult",
        "toolCallId": "call-1",
        "toolName": "x",
        "content": content,
        "isError": error,
        "timestamp": 0,
    }
    if details is not None:
        result["details"] = details
    return result


def _numbered(count):
    return "\n".join(f"row {i}" for i in range(count)) + "\n"


# --- statuses ------------------------------------------------------------------------------


def test_status_of_a_call():
    assert tool_status(None, None) == "pending"
    assert tool_status(None, "") == "running"
    assert tool_status(_result("ok"), None) == "success"
    assert tool_status(_result("no", error=True), None) == "error"


def test_gutter_colour_follows_the_status():
    call = _call("bash", command="true")
    pending = render_tool(call, None, None, opts())
    running = render_tool(call, None, "out\n", opts())
    done = render_tool(call, _result("ok"), None, opts())
    failed = render_tool(call, _result("exit 1", error=True), None, opts())
    assert color(style_of(pending, "▌")) == color(DARK.tool_pending)
    assert lines(pending)[-1] == "▌ waiting…"
    assert lines(running)[-2:] == ["▌ out", "▌ running…"]
    assert color(style_of(done, "▌")) == color(DARK.tool_success)
    assert color(style_of(failed, "▌")) == color(DARK.tool_error)
    assert color(style_of(failed, "exit 1")) == color(DARK.error)


# --- bash ----------------------------------------------------------------------------------


def test_bash_shows_the_command_and_the_last_lines_with_the_callers_key():
    call = _call("bash", command="pytest -q", timeout=60)
    r = render_tool(call, _result(_numbered(25)), None, opts(), expand_hint="ctrl+shift+o")
    shown = lines(r)
    assert shown[0] == "▌ $ pytest -q  (timeout 60s)"
    assert shown[1] == "▌ … 15 earlier lines (ctrl+shift+o to expand)"
    assert shown[2:] == [f"▌ row {i}" for i in range(15, 25)]
    hint = line_styles(r, "earlier lines")
    assert color(hint[-1]) == color(DARK.muted)


def test_bash_expanded_shows_every_line():
    r = render_tool(
        _call("bash", command="seq"), _result(_numbered(25)), None, opts(expand_tools=True)
    )
    assert lines(r)[1:] == [f"▌ row {i}" for i in range(25)]


def test_bash_multi_line_command_collapses_to_its_first_line():
    call = _call("bash", command="cat <<EOF\na\nb\nEOF")
    assert lines(render_tool(call, None, None, opts()))[0] == "▌ $ cat <<EOF (+3 more lines)"
    assert lines(render_tool(call, None, None, opts(expand_tools=True)))[:4] == [
        "▌ $ cat <<EOF",
        "▌ a",
        "▌ b",
        "▌ EOF",
    ]


def test_bash_truncation_notes_from_details():
    details = {
        "truncation": {
            "truncated": True,
            "truncatedBy": "lines",
            "outputLines": 2000,
            "totalLines": 9000,
        },
        "fullOutputPath": "/tmp/bash-1.log",
    }
    r = render_tool(_call("bash", command="x"), _result("tail\n", details=details), None, opts())
    assert lines(r)[-1] == "▌ [showing 2000 of 9000 lines; full output: /tmp/bash-1.log]"
    assert color(style_of(r, "full output")) == color(DARK.warning)


# --- read / write / edit -------------------------------------------------------------------


def test_read_header_shows_the_path_relative_to_cwd_and_the_line_range(tmp_path):
    call = _call("read", path=str(tmp_path / "src" / "app.py"), offset=5, limit=10)
    r = render_tool(call, _result(_numbered(12)), None, opts(cwd=tmp_path))
    shown = lines(r)
    assert shown[0] == "▌ read src/app.py:5-14"
    assert shown[1:11] == [f"▌ row {i}" for i in range(10)]
    assert shown[11] == "▌ … 2 more lines (ctrl+o to expand)"
    assert color(style_of(r, "src/app.py")) == color(DARK.accent)


def test_read_output_is_highlighted_by_file_type():
    r = render_tool(_call("read", path="m.py"), _result("def f():\n    return 1\n"), None, opts())
    assert lines(r)[1:] == ["▌ def f():", "▌     return 1"]
    assert style_of(r, "def").color is not None
    plain = render_tool(_call("read", path="notes"), _result("def f():\n"), None, opts())
    assert color(style_of(plain, "def")) == color(DARK.tool_output)


def test_write_shows_the_content_highlighted_and_collapsed():
    content = "".join(f"def f{i}(): pass\n" for i in range(14))
    call = _call("write", path="gen.py", content=content)
    r = render_tool(call, _result("Successfully wrote 100 bytes to gen.py"), None, opts())
    shown = lines(r)
    assert shown[0] == "▌ write gen.py (14 lines)"
    assert shown[1] == "▌ def f0(): pass" and shown[10] == "▌ def f9(): pass"
    assert shown[11] == "▌ … 4 more lines (ctrl+o to expand)"
    assert "Successfully" not in text(r)
    assert style_of(r, "write").bold and not style_of(r, "(14 lines)").bold
    assert style_of(r, "def").color != style_of(r, "f0").color  # keyword and name told apart
    expanded = lines(render_tool(call, _result("ok"), None, opts(expand_tools=True)))
    assert len(expanded) == 15


def test_failed_write_shows_the_error():
    call = _call("write", path="/root/x", content="a\n")
    r = render_tool(call, _result("EACCES: permission denied", error=True), None, opts())
    assert lines(r)[-1] == "▌ EACCES: permission denied"
    assert color(style_of(r, "EACCES")) == color(DARK.error)


def _edit_result(old, new):
    diff, first = generate_diff(old, new)
    return _result(
        "Successfully replaced 1 block(s) in m.py.",
        details={"diff": diff, "firstChangedLine": first},
    )


def test_edit_shows_the_diff_with_line_numbers_and_colours():
    old = "".join(f"line {i}\n" for i in range(1, 13))
    new = old.replace("line 6\n", "line six\n").replace("line 9\n", "line 9\nline 9b\n")
    r = render_tool(_call("edit", path="m.py", edits=[]), _edit_result(old, new), None, opts())
    shown = lines(r)
    assert shown[0] == "▌ edit m.py:6"
    assert "▌ - 6 line 6" in shown and "▌ + 6 line six" in shown and "▌ +10 line 9b" in shown
    assert "▌   5 line 5" in shown
    added, removed = line_styles(r, "line six"), line_styles(r, "- 6 line 6")
    context, inserted = line_styles(r, "  5 line 5"), line_styles(r, "line 9b")
    assert color(added[-1]) == color(DARK.diff_added)
    assert color(removed[-1]) == color(DARK.diff_removed)
    assert color(context[-1]) == color(DARK.diff_context)
    assert color(inserted[-1]) == color(DARK.diff_added)
    # the word that changed in the one-line replacement is marked, the rest of the line is not
    assert added[-1].reverse and not added[-2].reverse and removed[-1].reverse
    assert not inserted[-1].reverse


def test_edit_diff_collapses_when_long():
    old = "".join(f"old {i}\n" for i in range(40))
    new = "".join(f"new {i}\n" for i in range(40))
    result = _edit_result(old, new)
    collapsed = lines(render_tool(_call("edit", path="m.py"), result, None, opts()))
    assert len(collapsed) == 1 + 30 + 1 and collapsed[-1] == "▌ … 50 more lines (ctrl+o to expand)"
    expanded = lines(render_tool(_call("edit", path="m.py"), result, None, opts(expand_tools=True)))
    assert len(expanded) == 81


def test_failed_edit_shows_the_error_not_a_diff():
    result = _result("Could not find the exact text in m.py.", error=True, details={"diff": "+1 x"})
    r = render_tool(_call("edit", path="m.py"), result, None, opts())
    assert lines(r) == ["▌ edit m.py", "▌ Could not find the exact text in m.py."]
    assert color(style_of(r, "Could not")) == color(DARK.error)


# --- search tools, other tools, images -----------------------------------------------------


def test_search_headers_and_limits():
    grep = render_tool(
        _call("grep", pattern="TODO", path="src", glob="*.py"),
        _result("a.py:1: TODO\n", details={"matchLimitReached": 100, "linesTruncated": True}),
        None,
        opts(),
    )
    assert lines(grep) == [
        "▌ grep /TODO/ in src (*.py)",
        "▌ a.py:1: TODO",
        "▌ [100 matches limit; some lines cut]",
    ]
    find = render_tool(_call("find", pattern="*.md"), _result("README.md\n"), None, opts())
    assert lines(find)[0] == "▌ find *.md in ."
    ls = render_tool(
        _call("ls", limit=5), _result(_numbered(12), details={"entryLimitReached": 5}), None, opts()
    )
    assert lines(ls)[0] == "▌ ls . (limit 5)" and lines(ls)[-1] == "▌ [5 entries limit]"
    assert lines(ls)[-2] == "▌ … 2 more lines (ctrl+o to expand)"


def test_web_tool_and_code_headers():
    fetch = render_tool(_call("web_fetch", url="https://example.com/a"), None, None, opts())
    assert lines(fetch)[0] == "▌ fetch https://example.com/a"
    search = render_tool(_call("web_search", query="rich text", count=3), None, None, opts())
    assert lines(search)[0] == "▌ search rich text (3 results)"
    code = render_tool(_call("code", script="x = 1\nprint(x)\n"), _result("1\n"), None, opts())
    assert lines(code) == ["▌ code python script (2 lines)", "▌ 1"]
    # Another plugin's "code" tool without a script: the generic header.
    other = render_tool(_call("code", language="go"), None, None, opts())
    assert lines(other)[0] == '▌ code {"language":"go"}'


def test_unknown_tool_shows_name_and_compact_arguments_on_one_line():
    call = _call("lookup", query="rich " * 40, top=3)
    collapsed = lines(render_tool(call, None, None, opts()), 60)
    assert collapsed[0].startswith('▌ lookup {"query":"rich rich') and collapsed[0].endswith("…")
    assert len(collapsed) == 2
    expanded = lines(render_tool(call, None, None, opts(expand_tools=True)), 60)
    assert '▌   "top": 3' in expanded


def test_image_results_become_placeholders():
    image = base64.b64encode(b"GIF89a\x10\x00\x20\x00" + b"\x00" * 20).decode()
    r = render_tool(
        _call("read", path="a.gif"),
        _result("Read image file", images=[("image/gif", image)]),
        None,
        opts(),
    )
    assert "▌ [image: image/gif, 16x32, 30 B]" in lines(r)


def test_tool_output_escape_sequences_are_removed():
    r = render_tool(
        _call("bash", command="ls"), _result("\x1b[1;32mgreen\x1b[0m\r\n"), None, opts()
    )
    assert lines(r) == ["▌ $ ls", "▌ green"]
