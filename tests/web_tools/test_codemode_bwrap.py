"""Codemode inside the bwrap sandbox: the script runs behind the boundary and still reaches the
tools (through the channel directory in the mounted workspace) and the classifier.

bwrap must be installed (``scripts/ci/sandbox_bwrap.sh``); CI fails without it, elsewhere the
test is skipped with the reason (``tests/sandbox/conftest.need``).
"""

from __future__ import annotations

import secrets
from pathlib import Path

from tests.agent.conftest import Scripted, scripted  # noqa: F401 (the fixture)
from tests.llama_cpp.routers import KEY
from tests.llama_cpp.servers import LlamaServer
from tests.sandbox.conftest import factory

from .codemode_support import (
    FOUR_TOOLS_AND_A_CLASSIFIER,
    code_end,
    nested,
    prepare,
    run_script,
    site,  # noqa: F401 (the fixture)
    text,
)
from .pages.site import Site


def test_four_tools_and_a_classifier_in_one_step_inside_bwrap(
    scripted: Scripted,  # noqa: F811
    site: Site,  # noqa: F811
    router: LlamaServer,
    tmp_path: Path,
) -> None:
    factory("bwrap")
    router.ensure({"tiny-chat"})
    prepare(scripted, settings={"sandbox": {"backend": "bwrap"}})
    outside = tmp_path / f"outside-{secrets.token_hex(4)}"
    outside.mkdir()
    script = (
        f"URL = {site.url('/data.json')!r}\n" + FOUR_TOOLS_AND_A_CLASSIFIER + "import os\n"
        f"print('host folder visible:', os.path.exists({str(outside)!r}))\n"
        "print('script cwd:', os.getcwd())\n"
    )
    records, result = run_script(
        scripted, script, "--sandbox", "bwrap", LLAMA_BASE_URL=router.url, LLAMA_API_KEY=KEY
    )
    assert result.returncode == 0, result.stderr
    end = code_end(records)
    output = text(end)
    assert end["isError"] is False, output
    assert "lines: 3" in output
    assert "notes.txt:2: beta TODO: fix the frobnicator" in output
    assert "from-bash\n/workspace" in output  # bash ran inside
    assert 'Content-Type: application/json\n\n{"answer": 42, "items": [1, 2]}' in output
    assert "P(agent) = 0.8" in output
    # the script itself is behind the boundary: it sees /workspace, not the host's folders
    assert "host folder visible: False" in output
    assert "script cwd: /workspace" in output
    assert output.endswith(
        "[exit status 0 · 5 calls: read, grep, bash, web_fetch, classify(llama.cpp/tiny-chat)]"
    )
    starts = [r for r in nested(records) if r["type"] == "tool_execution_start"]
    assert [r["toolName"] for r in starts] == ["read", "grep", "bash", "web_fetch"]
    assert {r["parentToolCallId"] for r in starts} == {"call_1"}
    # the channel lived in the workspace and was removed
    channels = scripted.project / ".knightcode" / "codemode"
    assert channels.is_dir() and list(channels.iterdir()) == []
