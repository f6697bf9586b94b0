"""The keybinding layer (and Textual) stay out of the start-up of -p, JSON and RPC modes."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import knightcode, knightcode.__main__, knightcode.rpc
import knightcode._cli.main_command, knightcode._cli.subcommands
loaded = sorted(m for m in sys.modules if m.startswith(("knightcode._keys", "textual")))
print(",".join(loaded))
"""


def test_start_up_does_not_import_keys_or_textual() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""


def test_the_probe_can_see_them() -> None:
    probe = PROBE.replace("loaded = ", "import knightcode._keys.textual_keys\nloaded = ")
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert "knightcode._keys.textual_keys" in out.stdout and "textual" in out.stdout
