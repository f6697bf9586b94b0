"""The first look at the command line, before plugins load: which plugins, and whether stdout
belongs to knightcode's output (so plugin output must be sent to stderr before any is imported).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from knightcode._cli.prescan import prescan


@pytest.mark.parametrize(
    ("args", "mode", "owns"),
    [
        (["-p", "hi"], "text", True),
        (["--print", "hi"], "text", True),
        (["-cp", "hi"], "text", True),
        (["--mode", "json", "hi"], "json", True),
        (["--mode=rpc"], "rpc", True),
        (["-p", "--mode", "json", "hi"], "json", True),
        (["--mode", "json", "-p", "hi"], "json", True),
        (["--mode", "json", "--help"], "json", False),
        (["-p", "--version"], "text", False),
        (["-p", "-v"], "text", False),
        (["-p", "-nt", "-nbt", "-nc", "-ns", "hi"], "text", True),
        (["hi"], None, False),
        (["-np", "hi"], None, False),  # --no-prompt-templates, not -n -p
        (["--mode", "interactive"], "interactive", False),
        (["--", "-p"], None, False),
    ],
)
def test_the_mode_is_known_before_plugins_load(
    args: list[str], mode: str | None, owns: bool
) -> None:
    scan = prescan(args)
    assert (scan.mode, scan.owns_stdout) == (mode, owns)


def test_extension_options_are_still_picked() -> None:
    scan = prescan(["-e", "a.py", "--mode", "json", "--extension=b.py", "-ec.py", "--approve"])
    assert scan.extension_paths == [Path("a.py"), Path("b.py"), Path("c.py")]
    assert scan.approve and scan.mode == "json"


def test_reference_short_flags_and_offline_are_picked() -> None:
    scan = prescan(["-ne", "--offline", "-p", "hi"])
    assert scan.no_extensions and scan.offline
    assert not prescan(["-nc", "hi"]).no_extensions
