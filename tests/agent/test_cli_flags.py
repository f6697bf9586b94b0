"""The reference's command-line flags, each run with the real executable against the scripted
server: ``--api-key``, ``--session`` by id or prefix, ``--system-prompt`` files, …
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def _header(path: Path) -> dict[str, Any]:
    header: dict[str, Any] = json.loads(path.read_text(encoding="utf-8").split("\n", 1)[0])
    return header


def _copy_with_id(source: Path, session_id: str) -> Path:
    """Another session file in the same folder, the same conversation under ``session_id``."""
    first, rest = source.read_text(encoding="utf-8").split("\n", 1)
    header = json.loads(first)
    header["id"] = session_id
    target = source.with_name(f"2026-01-01T00-00-00-000Z_{session_id}.jsonl")
    target.write_text(json.dumps(header) + "\n" + rest, encoding="utf-8")
    return target


def test_session_by_id_prefix_continues_that_session(scripted: Scripted) -> None:
    scripted.server.add(text_reply("first"), text_reply("second"))
    assert scripted.run("-p", "remember this").returncode == 0
    (path,) = scripted.session_files()
    session_id = _header(path)["id"]
    result = scripted.run("--session", session_id[:8], "-p", "and now?")
    assert result.returncode == 0, result.stderr
    assert scripted.session_files() == [path]  # no file named after the id
    _, second = scripted.server.requests
    assert "remember this" in json.dumps(second.body)


def test_ambiguous_session_prefix_lists_the_matches(scripted: Scripted) -> None:
    scripted.server.add(text_reply("first"))
    assert scripted.run("-p", "hi").returncode == 0
    (path,) = scripted.session_files()
    one = _copy_with_id(path, "abc11111-0000-7000-8000-000000000001")
    two = _copy_with_id(path, "abc22222-0000-7000-8000-000000000002")
    result = scripted.run("--session", "abc", "-p", "which?")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "'abc' matches 2 sessions" in line and str(one) in line and str(two) in line
    assert "Traceback" not in result.stderr
    scripted.server.add(text_reply("that one"))
    unique = scripted.run("--session", "abc2", "-p", "this one")
    assert unique.returncode == 0, unique.stderr
    assert "this one" in two.read_text(encoding="utf-8")
    assert "this one" not in one.read_text(encoding="utf-8")


def test_unknown_session_id_is_a_clear_error(scripted: Scripted) -> None:
    result = scripted.run("--session", "nosuchid", "-p", "hi")
    assert result.returncode == 2
    assert "no session has this id or id prefix" in result.stderr
    assert scripted.session_files() == [] and scripted.server.requests == []


def test_session_of_another_project_is_forked_here(scripted: Scripted, tmp_path: Path) -> None:
    other = tmp_path / "other-project"
    other.mkdir()
    scripted.server.add(text_reply("there"), text_reply("here"))
    first = subprocess.run(
        [sys.executable, "-m", "knightcode", "--model", "scripted/scripted-model", "-p", "hi"],
        cwd=other,
        env=scripted.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert first.returncode == 0, first.stderr
    (source,) = scripted.session_files()
    result = scripted.run("--session", _header(source)["id"][:13], "-p", "again")
    assert result.returncode == 0, result.stderr
    assert "continuing in a copy for this folder" in result.stderr
    copies = [path for path in scripted.session_files() if path != source]
    (copy,) = copies
    assert _header(copy)["cwd"] == str(scripted.project)


def _system_prompt(scripted: Scripted) -> str:
    return str(scripted.server.requests[-1].body["messages"][0]["content"])


def test_system_prompt_flags_read_existing_files(scripted: Scripted) -> None:
    (scripted.project / "prompt.md").write_text("FROM-THE-PROMPT-FILE", encoding="utf-8")
    (scripted.project / "extra.md").write_text("FROM-THE-APPEND-FILE", encoding="utf-8")
    scripted.server.add(text_reply("ok"))
    result = scripted.run(
        "--system-prompt", "prompt.md", "--append-system-prompt", "extra.md", "-p", "hi"
    )
    assert result.returncode == 0, result.stderr
    prompt = _system_prompt(scripted)
    assert "FROM-THE-PROMPT-FILE" in prompt and "FROM-THE-APPEND-FILE" in prompt
    assert "prompt.md" not in prompt and "extra.md" not in prompt


def test_system_prompt_text_that_is_no_file_stays_text(scripted: Scripted) -> None:
    scripted.server.add(text_reply("ok"))
    result = scripted.run(
        "--system-prompt", "Be terse.", "--append-system-prompt", "missing.md", "-p", "hi"
    )
    assert result.returncode == 0, result.stderr
    prompt = _system_prompt(scripted)
    assert "Be terse." in prompt and "missing.md" in prompt


def test_unreadable_system_prompt_file_is_a_usage_error(scripted: Scripted) -> None:
    (scripted.project / "binary.md").write_bytes(b"\xff\xfe\x00bad")
    result = scripted.run("--system-prompt", "binary.md", "-p", "hi")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("knightcode: error: --system-prompt binary.md: cannot read the file")
    assert scripted.server.requests == []


# Names no built-in model shares: a fuzzy pattern searches every provider's models.
MODEL_IDS = ("zq-sonnet-4-5-20250929", "zq-sonnet-4-5", "zq-gpt-20240101", "zq-gpt-20250101")


def _many_models(scripted: Scripted) -> None:
    """The scripted provider with several models, as a catalogue has them."""
    models = json.loads((scripted.agent_dir / "models.json").read_text())
    provider = models["providers"]["scripted"]
    template = provider["models"][0]
    provider["models"] += [
        {**template, "id": model_id, "name": f"Scripted {model_id}", "reasoning": True}
        for model_id in MODEL_IDS
    ]
    (scripted.agent_dir / "models.json").write_text(json.dumps(models))


def _asked_model(scripted: Scripted, *args: str) -> tuple[str, dict[str, Any]]:
    scripted.server.add(text_reply("ok"))
    result = scripted.run(*args, "-p", "hi")
    assert result.returncode == 0, result.stderr
    body = scripted.server.requests[-1].body
    return str(body["model"]), body


def test_model_fuzzy_match_prefers_the_alias(scripted: Scripted) -> None:
    _many_models(scripted)
    assert _asked_model(scripted, "--model", "zq-sonnet")[0] == "zq-sonnet-4-5"
    assert _asked_model(scripted, "--model", "ZQ-SONNET-4")[0] == "zq-sonnet-4-5"


def test_model_fuzzy_match_takes_the_latest_dated_version(scripted: Scripted) -> None:
    _many_models(scripted)
    assert _asked_model(scripted, "--model", "scripted/zq-gpt")[0] == "zq-gpt-20250101"
    assert _asked_model(scripted, "--provider", "scripted", "--model", "gpt")[0] == (
        "zq-gpt-20250101"
    )


def test_model_thinking_suffix_sets_the_level(scripted: Scripted) -> None:
    _many_models(scripted)
    model, body = _asked_model(scripted, "--model", "scripted/zq-sonnet-4-5:high")
    assert model == "zq-sonnet-4-5"
    assert body.get("reasoning_effort") == "high", body
    model, body = _asked_model(scripted, "--model", "zq-sonnet:low", "--thinking", "minimal")
    assert body.get("reasoning_effort") == "minimal", body  # --thinking wins


def test_model_pattern_that_matches_nothing_is_a_usage_error(scripted: Scripted) -> None:
    _many_models(scripted)
    for pattern, named in (("nothing-like-it", "nothing-like-it"), ("zq-sonnet:loud", "loud")):
        result = scripted.run("--model", f"scripted/{pattern}", "-p", "hi")
        assert result.returncode == 2, result.stderr
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith("knightcode: error: unknown model") and named in line
    assert scripted.server.requests == []


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools") or []]


TOOL_PLUGIN = """
from knightcode import hookimpl, ToolDefinition


@hookimpl
def register_tools(register):
    register(ToolDefinition(name="shout", description="shout", parameters={"type": "object"},
                            execute=lambda call_id, params, ctx: "LOUD"))
"""


def test_short_tool_flags(scripted: Scripted) -> None:
    scripted.server.add(*(text_reply("ok") for _ in range(3)))
    assert scripted.run("-t", "read,ls", "-p", "hi").returncode == 0
    assert scripted.run("-nt", "-p", "hi").returncode == 0
    assert scripted.run("-nbt", "-p", "hi").returncode == 0
    first, second, third = (request.body for request in scripted.server.requests)
    assert _tool_names(first) == ["read", "ls"]
    assert _tool_names(second) == []
    # Only the built-in tools go; plugin tools (builtin:web-tools is a plugin) stay.
    assert not {"read", "bash", "edit", "write"} & set(_tool_names(third))
    assert "web_fetch" in _tool_names(third)


def test_short_no_extensions_flag(scripted: Scripted) -> None:
    extensions = scripted.agent_dir / "extensions"
    extensions.mkdir()
    (extensions / "shout.py").write_text(TOOL_PLUGIN, encoding="utf-8")
    scripted.server.add(text_reply("with"), text_reply("without"))
    assert scripted.run("-p", "hi").returncode == 0
    result = scripted.run("-ne", "-p", "hi")
    assert result.returncode == 0, result.stderr
    with_it, without = (request.body for request in scripted.server.requests)
    assert "shout" in _tool_names(with_it) and "shout" not in _tool_names(without)


def test_no_context_files_leaves_agents_md_out(scripted: Scripted) -> None:
    (scripted.project / "AGENTS.md").write_text("PROJECT-RULES-HERE", encoding="utf-8")
    scripted.server.add(text_reply("a"), text_reply("b"), text_reply("c"))
    assert scripted.run("-p", "hi").returncode == 0
    assert "PROJECT-RULES-HERE" in _system_prompt(scripted)
    for flag in ("-nc", "--no-context-files"):
        assert scripted.run(flag, "-p", "hi").returncode == 0
        assert "PROJECT-RULES-HERE" not in _system_prompt(scripted)


def test_short_version_flag() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "knightcode", "-v"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and result.stdout.startswith("knightcode ")


OFFLINE_PLUGIN = """
import os
from pathlib import Path

Path(os.environ["OFFLINE_PROBE"]).write_text(os.environ.get("KNIGHTCODE_OFFLINE", "unset"))
"""


def test_offline_is_set_before_plugins_load(scripted: Scripted, tmp_path: Path) -> None:
    plugin = tmp_path / "offline_probe.py"
    plugin.write_text(OFFLINE_PLUGIN, encoding="utf-8")
    probe = tmp_path / "probe.txt"
    scripted.server.add(text_reply("a"), text_reply("b"))
    assert scripted.run("-e", str(plugin), "-p", "hi", OFFLINE_PROBE=str(probe)).returncode == 0
    assert probe.read_text() == "unset"
    result = scripted.run("--offline", "-e", str(plugin), "-p", "hi", OFFLINE_PROBE=str(probe))
    assert result.returncode == 0, result.stderr
    assert probe.read_text() == "1"


def test_api_key_with_provider_makes_its_models_available(scripted: Scripted) -> None:
    """A built-in provider with no key anywhere: ``--provider openai --api-key K`` picks its
    default model (the endpoint is pointed at the scripted server through models.json)."""
    models = json.loads((scripted.agent_dir / "models.json").read_text())
    models["providers"]["openai"] = {"baseUrl": scripted.server.base_url}
    (scripted.agent_dir / "models.json").write_text(json.dumps(models))
    scripted.server.add(text_reply("from openai"))
    command = [sys.executable, "-m", "knightcode", "--provider", "openai", "-p", "hi"]
    without = subprocess.run(
        command,
        cwd=scripted.project,
        env=scripted.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert "No API key for provider 'openai'" in without.stderr
    assert scripted.server.requests == []
    result = subprocess.run(
        [*command, "--api-key", SECRET],
        cwd=scripted.project,
        env=scripted.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "from openai\n"
    (request,) = scripted.server.requests
    assert request.headers["authorization"] == f"Bearer {SECRET}"


def test_temperature_is_sent_and_checked(scripted: Scripted) -> None:
    scripted.server.add(text_reply("warm"), text_reply("default"))
    assert scripted.run("--temperature", "0.3", "-p", "hi").returncode == 0
    assert scripted.run("-p", "hi").returncode == 0
    first, second = scripted.server.requests
    assert first.body["temperature"] == 0.3
    assert "temperature" not in second.body
    wrong = scripted.run("--temperature", "3", "-p", "hi")
    assert wrong.returncode == 2
    assert "--temperature" in wrong.stderr and "0<=x<=2" in wrong.stderr
    assert len(scripted.server.requests) == 2
