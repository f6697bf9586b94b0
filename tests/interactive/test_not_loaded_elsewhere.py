"""The interactive UI (and Textual) stay out of -p, JSON and RPC runs, the sandbox's modules out
of runs without a sandbox, and the web tools' modules out of runs that use none of them: their
start-up stays fast."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knightcode.testing import text_reply
from tests.agent.conftest import Scripted

PROBE = """
import json, sys
from knightcode import hookimpl

WEB_TOOLS_AT_START = {
    "knightcode_builtins.web_tools.definitions",
    "knightcode_builtins.web_tools.settings",
    "knightcode_builtins.web_tools.codemode",
    "knightcode_builtins.web_tools.codemode.enable",
}

@hookimpl
def session_shutdown(reason, target_session_file):
    loaded = sorted(
        name for name in sys.modules
        if name.split(".")[0] == "textual" or name.startswith("knightcode._modes.interactive")
        # builtin:gondolin's own package is loaded (its hooks); nothing under it without a sandbox
        or name.startswith("knightcode_builtins.gondolin.")
        # builtin:web-tools registers its tools from definitions.py; the rest loads on use
        or name.startswith("knightcode_builtins.web_tools.") and name not in WEB_TOOLS_AT_START
    )
    with open(OUT, "w") as out:
        json.dump(loaded, out)
"""


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"]])
def test_print_and_json_runs_load_no_ui(
    scripted: Scripted, tmp_path: Path, mode: list[str]
) -> None:
    out = tmp_path / "modules.json"
    probe = tmp_path / "probe.py"
    probe.write_text(f"OUT = {str(out)!r}\n" + PROBE)
    scripted.server.add(text_reply("hello"))
    result = scripted.run(*mode, "-e", str(probe), "hi")
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text()) == []


def test_the_probe_sees_the_ui_when_it_is_loaded(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys, knightcode._modes.interactive.app\n"
        "print(any(n.split('.')[0] == 'textual' for n in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"
