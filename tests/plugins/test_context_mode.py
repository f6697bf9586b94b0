"""``ctx.mode``: each mode tells plugins how it runs (a plugin chooses between waiting for
something a script expects and going on while a person watches). The real executable, a real
extension file, the scripted model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from knightcode.testing import text_reply
from tests.agent.conftest import Scripted, scripted  # noqa: F401 (the fixture)
from tests.rpc.conftest import Rpc, rpc  # noqa: F401 (the fixture)

PLUGIN = """
from pathlib import Path
from knightcode import hookimpl


@hookimpl
def session_start(reason, previous_session_file, ctx):
    Path(__file__).with_name("mode.txt").write_text(str(ctx.mode))
"""


@pytest.mark.parametrize(("args", "expected"), [(["-p"], "text"), (["--mode", "json"], "json")])
def test_the_mode_reaches_plugins(
    scripted: Scripted,  # noqa: F811
    tmp_path: Path,
    args: list[str],
    expected: str,
) -> None:
    plugin = tmp_path / "mode_plugin.py"
    plugin.write_text(PLUGIN, encoding="utf-8")
    scripted.server.add(text_reply("hi"))
    result = scripted.run("-e", str(plugin), *args, "hello")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "mode.txt").read_text() == expected


async def test_rpc_mode_reaches_plugins(rpc: Rpc, tmp_path: Path) -> None:  # noqa: F811
    plugin = tmp_path / "mode_plugin.py"
    plugin.write_text(PLUGIN, encoding="utf-8")
    client = await rpc.start("-e", str(plugin))
    await client.get_state()
    assert (tmp_path / "mode.txt").read_text() == "rpc"
