"""End to end: ``knightcode -p`` with a models.json provider of the Gemini and the Bedrock API
against the scripted server's wire formats (a tool-call round trip with thinking)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from knightcode.testing import text_reply, tool_call, tool_call_reply, usage

from .conftest import MODEL, PROVIDER, Scripted

SECRET = "e2e/secret/access/key/0123456789abcdefghij"


def write_provider(scripted: Scripted, api: str, **provider: Any) -> None:
    model = {"id": MODEL, "contextWindow": 32000, "maxTokens": 4096, "reasoning": True}
    data = {
        "providers": {
            PROVIDER: {
                "baseUrl": scripted.server.base_url,
                "api": api,
                "models": [model],
                **provider,
            }
        }
    }
    (scripted.agent_dir / "models.json").write_text(json.dumps(data))


def round_trip(scripted: Scripted, **env: str) -> None:
    (scripted.project / "notes.txt").write_text("the notes say 42\n")
    scripted.server.add(
        tool_call_reply(
            [tool_call("call_1", "read", {"path": "notes.txt"})],
            thinking=["I should ", "read it"],
            usage=usage(input=20, output=7),
        ),
        text_reply("It says 42.", usage=usage(input=40, output=4)),
    )
    result = scripted.run("-p", "--thinking", "low", "what do the notes say?", **env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "It says 42."
    assert "not supported" not in result.stderr


def test_gemini_round_trip(scripted: Scripted) -> None:
    write_provider(scripted, "google-generative-ai", apiKey="gemini-e2e-key")
    settings = scripted.agent_dir / "settings.json"
    settings.write_text(
        json.dumps({**json.loads(settings.read_text()), "thinkingBudgets": {"low": 1234}})
    )
    round_trip(scripted)
    first, second = scripted.server.requests
    assert first.path == f"/v1/models/{MODEL}:streamGenerateContent?alt=sse"
    assert first.headers["x-goog-api-key"] == "gemini-e2e-key"
    assert first.body["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingBudget": 1234,  # settings thinkingBudgets
    }
    assert [d["name"] for d in first.body["tools"][0]["functionDeclarations"]][:1] == ["read"]
    model_turn, results = second.body["contents"][-2:]
    signature = base64.b64encode(b"scripted-signature-1").decode()
    assert model_turn["role"] == "model"
    assert model_turn["parts"][0] == {
        "thought": True,
        "text": "I should read it",
        "thoughtSignature": signature,
    }
    assert model_turn["parts"][1]["functionCall"] == {
        "name": "read",
        "args": {"path": "notes.txt"},
        "id": "call_1",
    }
    assert model_turn["parts"][1]["thoughtSignature"] == signature
    response = results["parts"][0]["functionResponse"]
    assert response["id"] == "call_1"
    assert "the notes say 42" in str(response["response"]["output"])
    assert "gemini-e2e-key" not in _session_text(scripted)


def test_bedrock_round_trip_signed(scripted: Scripted, tmp_path: Path) -> None:
    write_provider(scripted, "bedrock-converse-stream")
    env = {
        "AWS_ACCESS_KEY_ID": "AKIDE2ETEST",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_REGION": "us-west-2",
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_BEARER_TOKEN_BEDROCK": "",
    }
    round_trip(scripted, **env)
    first, second = scripted.server.requests
    assert first.path == f"/v1/model/{MODEL}/converse-stream"
    for request in (first, second):
        authorization = request.headers["authorization"]
        assert (
            authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDE2ETEST/")
            and "/us-west-2/bedrock/aws4_request, SignedHeaders=" in authorization
        )
    messages = second.body["messages"]
    assert messages[-2]["content"][-1] == {
        "toolUse": {"toolUseId": "call_1", "name": "read", "input": {"path": "notes.txt"}}
    }
    result = messages[-1]["content"][0]["toolResult"]
    assert result["toolUseId"] == "call_1" and result["status"] == "success"
    assert "the notes say 42" in result["content"][0]["text"]
    assert SECRET not in _session_text(scripted)


def test_bedrock_unknown_profile_is_a_clear_error(scripted: Scripted, tmp_path: Path) -> None:
    write_provider(scripted, "bedrock-converse-stream")
    result = scripted.run(
        "-p",
        "hi",
        AWS_PROFILE="nosuchprofile",
        AWS_CONFIG_FILE=str(tmp_path / "none"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
    )
    assert result.returncode != 0
    assert "The config profile (nosuchprofile) could not be found" in result.stderr
    assert "Traceback" not in result.stderr
    assert scripted.server.requests == []


def test_bedrock_bearer_token_from_environment(scripted: Scripted) -> None:
    write_provider(scripted, "bedrock-converse-stream")
    scripted.server.add(text_reply("ok"))
    result = scripted.run("-p", "hi", AWS_BEARER_TOKEN_BEDROCK="bedrock-e2e-token")
    assert result.returncode == 0, result.stderr
    assert scripted.server.requests[0].headers["authorization"] == "Bearer bedrock-e2e-token"


def _session_text(scripted: Scripted) -> str:
    return "".join(path.read_text() for path in scripted.session_files())
