"""The reference's command-line flags, each run with the real executable against the scripted
server: ``--api-key``, ``--session`` by id or prefix, ``--system-prompt`` files, …
"""

from __future__ import annotations

import json

from knightcode.testing import text_reply
from tests.agent.conftest import Scripted

SECRET = "sk-test-only-4f9b2c"


def test_api_key_is_sent_and_never_stored(scripted: Scripted) -> None:
    scripted.server.add(text_reply("keyed"))
    records, result = scripted.run_json("--api-key", SECRET, "hello")
    assert result.returncode == 0, result.stderr
    (request,) = scripted.server.requests
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in result.stdout + result.stderr
    assert SECRET not in json.dumps(records)
    (path,) = scripted.session_files()
    assert SECRET not in path.read_text(encoding="utf-8")


def test_api_key_overrides_the_configured_key(scripted: Scripted) -> None:
    models = json.loads((scripted.agent_dir / "models.json").read_text())
    models["providers"]["scripted"]["apiKey"] = "from-models-json"
    (scripted.agent_dir / "models.json").write_text(json.dumps(models))
    scripted.server.add(text_reply("a"), text_reply("b"))
    assert scripted.run("-p", "one").returncode == 0
    assert scripted.run("--api-key", SECRET, "-p", "two").returncode == 0
    first, second = scripted.server.requests
    assert first.headers["authorization"] == "Bearer from-models-json"
    assert second.headers["authorization"] == f"Bearer {SECRET}"
