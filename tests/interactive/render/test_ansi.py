"""to_ansi / line_count: the text written into the scrollback."""

from __future__ import annotations

import subprocess
import sys

from rich.markdown import Markdown
from rich.padding import Padding
from rich.text import Text

from knightcode._modes.interactive.render.ansi import line_count, to_ansi


def test_plain_output_has_no_escapes_and_no_trailing_padding():
    out = to_ansi(Markdown("# Title\n\nA short paragraph.\n\n- item"), 60, None)
    assert "\x1b" not in out
    assert out.endswith("\n") and "\r" not in out
    assert all(line == line.rstrip() for line in out.split("\n"))
    assert "A short paragraph." in out.split("\n")


def test_colour_output_styles_text_but_pads_nothing_unstyled():
    out = to_ansi(Text.assemble(("warn", "bold red"), " tail"), 40)
    assert "\x1b[1;31mwarn" in out
    assert out.endswith(" tail\n")


def test_background_padding_is_kept():
    out = to_ansi(Padding("hi", (0, 1), style="on #223344", expand=True), 20)
    assert "48;2;34;51;68m" in out
    visible = to_ansi(Padding("hi", (0, 1), style="on #223344", expand=True), 20, None)
    assert visible == " hi" + " " * 17 + "\n"


def test_width_is_respected_and_line_count_matches():
    words = Text("word " * 30)
    out = to_ansi(words, 20, None)
    assert all(len(line) <= 20 for line in out.split("\n"))
    assert line_count(words, 20) == out.count("\n") == 8


def test_the_render_package_does_not_import_textual():
    probe = (
        "import sys, knightcode._modes.interactive.render as r\n"
        "import knightcode._modes.interactive.render.tools\n"
        "import knightcode._modes.interactive.render.messages\n"
        "import knightcode._modes.interactive.render.markdown_stream\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('textual'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""
