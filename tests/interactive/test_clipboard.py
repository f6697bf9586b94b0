"""The clipboard program fallback of /copy, with a real program on PATH."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from knightcode._modes.interactive.clipboard import clipboard_command, copy_with_program


def test_xclip_gets_the_text_on_an_x_display(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    received = tmp_path / "received"
    program = tmp_path / "xclip"
    program.write_text(f'#!/bin/sh\necho "$@" > {received}.args\ncat > {received}\n')
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert copy_with_program("héllo\nworld") == "xclip"
    assert received.read_text() == "héllo\nworld"
    assert Path(f"{received}.args").read_text().strip() == "-selection clipboard"


def test_no_desktop_no_program(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert clipboard_command() is None or clipboard_command()[0] == "pbcopy"
    assert clipboard_command({}) is None or clipboard_command({})[0] == "pbcopy"


def test_a_failing_program_reports_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = tmp_path / "wl-copy"
    program.write_text("#!/bin/sh\nexit 1\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert copy_with_program("text") is None
