"""The OpenAI Responses API and Azure OpenAI end to end: the real executable in ``-p`` mode
against the scripted server's Responses wire."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from knightcode.testing import reply, text_reply, tool_call

from .conftest import MODEL, PROVIDER, Scripted


def body(scripted: Scripted, number: int) -> dict[str, Any]:
    data = scripted.server.requests[number].body
    assert isinstance(data, dict)
    return data


def test_models_json_provider_with_openai_responses_carries_reasoning(
    scripted: Scripted,
) -> None:
    """A two-turn tool loop: the encrypted reasoning of turn 1 goes back on turn 2."""
    model = {"id": MODEL, "contextWindow": 32000, "maxTokens": 4096, "reasoning": True}
    provider = {"baseUrl": scripted.server.base_url, "api": "openai-responses", "models": [model]}
    (scripted.agent_dir / "models.json").write_text(json.dumps({"providers": {PROVIDER: provider}}))
    (scripted.project / "notes.txt").write_text("the secret word is plover\n")
    scripted.server.add(
        reply(
            thinking=["I should ", "read the file."],
            tool_calls=[tool_call("call_1", "read", {"path": "notes.txt"}, split=2)],
        ),
        text_reply("The word is plover."),
    )
    result = scripted.run("-p", "What is the secret word?", "--thinking", "low")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "The word is plover."
    assert [r.path for r in scripted.server.requests] == ["/v1/responses"] * 2

    first = body(scripted, 0)
    assert first["max_output_tokens"] == 4096
    assert first["reasoning"] == {"effort": "low", "summary": "auto"}
    assert first["include"] == ["reasoning.encrypted_content"]
    assert [tool["name"] for tool in first["tools"]][:1] and all(
        tool["type"] == "function" for tool in first["tools"]
    )

    items = body(scripted, 1)["input"]
    kinds = [item.get("type", item.get("role")) for item in items]
    assert kinds[-3:] == ["reasoning", "function_call", "function_call_output"]
    reasoning, call, output = items[-3:]
    assert reasoning["encrypted_content"] == "enc-scripted-1"
    assert reasoning["summary"][0]["text"] == "I should read the file."
    assert (call["call_id"], call["id"], call["name"]) == ("call_1", "fc_scripted_1_0", "read")
    assert json.loads(call["arguments"]) == {"path": "notes.txt"}
    assert output["call_id"] == "call_1" and "plover" in output["output"]


def test_builtin_azure_provider_from_environment_variables(scripted: Scripted) -> None:
    scripted.server.add(text_reply("hello from azure"))
    root = f"http://127.0.0.1:{scripted.server.port}"
    command = ["-m", "knightcode", "--model", "azure-openai-responses/gpt-4.1", "-p", "hi"]
    env = scripted.env(
        AZURE_OPENAI_BASE_URL=f"{root}/openai/v1",
        AZURE_OPENAI_API_KEY="az-secret-key",
        AZURE_OPENAI_DEPLOYMENT_NAME_MAP="gpt-4.1=team-gpt41",
    )
    result = subprocess.run(
        [sys.executable, *command],
        cwd=scripted.project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hello from azure"
    (request,) = scripted.server.requests
    assert request.path == "/openai/v1/responses?api-version=v1"
    assert request.headers["api-key"] == "az-secret-key"
    assert body(scripted, 0)["model"] == "team-gpt41"
    # The key never reaches the session file.
    sessions = list((scripted.agent_dir / "sessions").rglob("*.jsonl"))
    assert sessions and all("az-secret-key" not in path.read_text() for path in sessions)


def test_reasoning_is_kept_in_the_session_and_sent_after_continue(scripted: Scripted) -> None:
    model = {"id": MODEL, "contextWindow": 32000, "maxTokens": 4096, "reasoning": True}
    provider = {"baseUrl": scripted.server.base_url, "api": "openai-responses", "models": [model]}
    (scripted.agent_dir / "models.json").write_text(json.dumps({"providers": {PROVIDER: provider}}))
    scripted.server.add(reply(thinking="Pondering.", text="First."), text_reply("Second."))
    assert scripted.run("-p", "one").returncode == 0
    stored = [
        block
        for entry in scripted.session_entries()
        if entry.get("type") == "message" and entry["message"]["role"] == "assistant"
        for block in entry["message"]["content"]
    ]
    assert stored[0]["type"] == "thinking"
    assert json.loads(stored[0]["thinkingSignature"])["encrypted_content"] == "enc-scripted-1"
    assert json.loads(stored[1]["textSignature"])["id"] == "msg_scripted_1"

    result = scripted.run("-c", "-p", "two")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Second."
    items = body(scripted, 1)["input"]
    reasoning = next(item for item in items if item.get("type") == "reasoning")
    assert reasoning["encrypted_content"] == "enc-scripted-1"
    message = next(item for item in items if item.get("type") == "message")
    assert message["id"] == "msg_scripted_1"
