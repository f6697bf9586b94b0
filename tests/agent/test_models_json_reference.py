"""The reference's models.json and auth.json, run through the real executable.

Each models.json field and ``compat`` switch is checked on the request the scripted server
receives; the reference's own examples (``tests/fixtures/reference_models_json``, copied from
its ``docs/models.md``; where the docs write ``"models": [...]`` one model stands in, and
``newer-fields.json`` gathers what the reference's newer schema adds: ``authHeader``,
``thinkingLevelMap``, ``cost.tiers``, ``samplingParams``, a model's ``baseUrl``, other APIs) load
without error; credentials resolve in the reference's order.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from knightcode.testing import text_reply

from .conftest import MODEL, PROVIDER, Scripted

FIXTURES = Path(__file__).parent.parent / "fixtures" / "reference_models_json"


def write_models(scripted: Scripted, provider: dict[str, Any], **others: Any) -> None:
    """models.json: the scripted provider (with ``provider`` merged in) plus ``others``."""
    base = {
        "baseUrl": scripted.server.base_url,
        "api": "openai-completions",
        "models": [{"id": MODEL, "contextWindow": 32000, "maxTokens": 4096}],
    }
    data = {"providers": {PROVIDER: {**base, **provider}, **others}}
    (scripted.agent_dir / "models.json").write_text(json.dumps(data))


def model_entry(**fields: Any) -> dict[str, Any]:
    return {"id": MODEL, "contextWindow": 32000, "maxTokens": 4096, **fields}


def ask(scripted: Scripted, *args: str, **env: str) -> dict[str, Any]:
    """One ``-p`` prompt that must succeed; the body of the request the server received."""
    scripted.server.add(text_reply("ok"))
    result = scripted.run("-p", "hi", *args, **env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
    body = scripted.server.requests[-1].body
    assert isinstance(body, dict)
    return body


def last_headers(scripted: Scripted) -> dict[str, str]:
    return scripted.server.requests[-1].headers


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.json")), ids=lambda path: path.stem)
def test_reference_examples_load(scripted: Scripted, fixture: Path) -> None:
    others = json.loads(fixture.read_text())["providers"]
    write_models(scripted, {}, **others)
    scripted.server.add(text_reply("ok"))
    result = scripted.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
    assert "error" not in result.stderr.lower()


def test_auth_header_sends_a_bearer_token_on_any_api(scripted: Scripted) -> None:
    write_models(scripted, {"api": "anthropic-messages", "apiKey": "sk-proxy", "authHeader": True})
    scripted.server.add(text_reply("ok"))
    result = scripted.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    headers = last_headers(scripted)
    assert headers["authorization"] == "Bearer sk-proxy"
    assert headers["x-api-key"] == "sk-proxy"

    write_models(scripted, {"api": "anthropic-messages", "apiKey": "sk-proxy"})
    scripted.server.add(text_reply("ok"))
    assert scripted.run("-p", "hi").returncode == 0
    assert "authorization" not in last_headers(scripted)


def test_thinking_level_map(scripted: Scripted) -> None:
    levels = {"high": "max", "low": None, "off": "none"}
    write_models(scripted, {"models": [model_entry(reasoning=True, thinkingLevelMap=levels)]})
    assert ask(scripted, "--thinking", "high")["reasoning_effort"] == "max"
    # null marks the level unsupported, as in the reference: it is raised to the next one.
    assert ask(scripted, "--thinking", "low")["reasoning_effort"] == "medium"
    assert ask(scripted, "--thinking", "medium")["reasoning_effort"] == "medium"
    assert ask(scripted, "--thinking", "off")["reasoning_effort"] == "none"


def test_thinking_level_map_in_model_overrides(scripted: Scripted) -> None:
    """modelOverrides change a built-in model (here openai's gpt-5, pointed at the server)."""
    overrides = {"gpt-5": {"thinkingLevelMap": {"high": "xhigh"}}}
    entry = {"baseUrl": scripted.server.base_url, "modelOverrides": overrides}
    (scripted.agent_dir / "models.json").write_text(json.dumps({"providers": {"openai": entry}}))
    scripted.server.add(text_reply("ok"))
    command = ["-m", "knightcode", "--model", "openai/gpt-5", "--thinking", "high", "-p", "hi"]
    result = _run_plain(scripted, command, OPENAI_API_KEY="sk-test")
    assert result.returncode == 0, result.stderr
    body = scripted.server.requests[-1].body
    assert isinstance(body, dict)
    assert scripted.server.requests[-1].path == "/v1/responses"  # openai speaks Responses
    assert body["reasoning"]["effort"] == "xhigh"


def test_a_bad_thinking_level_map_names_the_field(scripted: Scripted) -> None:
    write_models(scripted, {"models": [model_entry(thinkingLevelMap={"huge": "x"})]})
    result = scripted.run("-p", "hi")
    assert result.returncode == 2
    assert "providers.scripted.models[0].thinkingLevelMap: expected an object" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("compat", "check"),
    [
        ({"supportsUsageInStreaming": False}, lambda body: "stream_options" not in body),
        ({"supportsUsageInStreaming": True}, lambda body: "stream_options" in body),
        ({"supportsStore": True}, lambda body: body["store"] is False),
        ({"supportsStore": False}, lambda body: "store" not in body),
        (
            {"supportsDeveloperRole": True},
            lambda body: body["messages"][0]["role"] == "developer",
        ),
        (
            {"supportsDeveloperRole": False},
            lambda body: body["messages"][0]["role"] == "system",
        ),
        ({"supportsReasoningEffort": False}, lambda body: "reasoning_effort" not in body),
        (
            {"thinkingFormat": "openrouter"},
            lambda body: body["reasoning"] == {"effort": "high"},
        ),
        ({"thinkingFormat": "qwen"}, lambda body: body["enable_thinking"] is True),
        ({"thinkingFormat": "zai"}, lambda body: body["enable_thinking"] is True),
        (
            {"openRouterRouting": {"only": ["amazon-bedrock"]}},
            lambda body: body["provider"] == {"only": ["amazon-bedrock"]},
        ),
        (
            {"vercelGatewayRouting": {"only": ["fireworks"], "order": ["fireworks", "novita"]}},
            lambda body: (
                body["providerOptions"]
                == {"gateway": {"only": ["fireworks"], "order": ["fireworks", "novita"]}}
            ),
        ),
        ({"extraBody": {"top_k": 20}}, lambda body: body["top_k"] == 20),
    ],
    ids=lambda value: json.dumps(value) if isinstance(value, dict) else "",
)
def test_compat_switches(scripted: Scripted, compat: dict[str, Any], check: Any) -> None:
    write_models(scripted, {"compat": compat, "models": [model_entry(reasoning=True)]})
    body = ask(scripted, "--thinking", "high")
    assert check(body), body


def test_max_tokens_field(scripted: Scripted) -> None:
    """Every request carries the model's maxTokens (capped at 32000, as the reference does), in
    the key maxTokensField names."""
    for field in ("max_tokens", "max_completion_tokens"):
        write_models(scripted, {"compat": {"maxTokensField": field}})
        body = ask(scripted)
        assert body[field] == 4096, body  # model_entry's maxTokens
        other = {"max_tokens", "max_completion_tokens"} - {field}
        assert not other & set(body), body
    write_models(scripted, {"models": [model_entry(maxTokens=64000)]})
    assert ask(scripted)["max_tokens"] == 32000  # the reference's cap; max_tokens off openai.com


def test_unknown_compat_keys_are_named_once_and_ignored(scripted: Scripted) -> None:
    write_models(scripted, {"compat": {"requiresThinkingAsText": True, "cacheControlFormat": "x"}})
    stderr = stderr_of_a_good_run(scripted)
    assert (
        "models.json: providers.scripted: compat.cacheControlFormat, "
        "compat.requiresThinkingAsText not supported, ignored"
    ) in stderr
    assert stderr.count("requiresThinkingAsText") == 1


def stderr_of_a_good_run(scripted: Scripted) -> str:
    """What a successful ``-p`` run wrote to stderr (its warnings)."""
    scripted.server.add(text_reply("ok"))
    result = scripted.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    return result.stderr


@pytest.mark.parametrize("api", ["google-vertex", "bedrock-converse"])
def test_an_unsupported_api_starts_and_explains_when_chosen(scripted: Scripted, api: str) -> None:
    other = {"baseUrl": "http://127.0.0.1:9", "api": api, "models": [{"id": "far"}]}
    write_models(scripted, {}, elsewhere=other)
    scripted.server.add(text_reply("ok"))
    result = scripted.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
    assert f"providers.elsewhere: API {api} is not supported" in result.stderr

    command = ["-m", "knightcode", "--model", "elsewhere/far", "-p", "hi"]
    chosen = _run_plain(scripted, command)
    assert chosen.returncode != 0
    assert f"elsewhere/far uses the API '{api}', which knightcode has no client for" in (
        chosen.stderr + chosen.stdout
    )
    assert "Traceback" not in chosen.stderr


def _run_plain(
    scripted: Scripted, command: list[str], **env: str
) -> subprocess.CompletedProcess[str]:
    """``python COMMAND`` in the project (``scripted.run`` always passes the scripted model)."""
    return subprocess.run(
        [sys.executable, *command],
        cwd=scripted.project,
        env=scripted.env(**env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# --- auth.json and the order of credentials ---


def write_auth(scripted: Scripted, data: dict[str, Any]) -> Path:
    path = scripted.agent_dir / "auth.json"
    path.write_text(json.dumps(data))
    os.chmod(path, 0o600)
    return path


def openai_via_scripted(scripted: Scripted, **provider: Any) -> None:
    """The built-in ``openai`` provider pointed at the scripted server (it reads OPENAI_API_KEY)."""
    entry = {
        "baseUrl": scripted.server.base_url,
        "api": "openai-completions",
        "models": [{"id": MODEL}],
        **provider,
    }
    (scripted.agent_dir / "models.json").write_text(json.dumps({"providers": {"openai": entry}}))


def bearer_with_env(scripted: Scripted, **env: str) -> str:
    scripted.server.add(text_reply("ok"))
    command = ["-m", "knightcode", "--model", f"openai/{MODEL}", "-p", "hi"]
    result = _run_plain(scripted, command, **env)
    assert result.returncode == 0, result.stderr
    return last_headers(scripted)["authorization"]


def test_credential_order_auth_json_then_environment_then_models_json(
    scripted: Scripted,
) -> None:
    openai_via_scripted(scripted, apiKey="from-models-json")
    assert bearer_with_env(scripted) == "Bearer from-models-json"
    assert bearer_with_env(scripted, OPENAI_API_KEY="from-env") == "Bearer from-env"
    write_auth(scripted, {"openai": {"type": "api_key", "key": "from-auth-json"}})
    assert bearer_with_env(scripted, OPENAI_API_KEY="from-env") == "Bearer from-auth-json"


def test_auth_json_command_key_runs_once_and_is_never_shown(
    scripted: Scripted, tmp_path: Path
) -> None:
    counter = tmp_path / "runs"
    command = f"!echo run >> {counter}; printf sk-from-command"
    openai_via_scripted(scripted)
    write_auth(scripted, {"openai": {"type": "api_key", "key": command}})
    scripted.server.add(text_reply("ok"))
    scripted.server.add(text_reply("ok"))
    command = ["-m", "knightcode", "--model", f"openai/{MODEL}", "--mode", "json", "-p", "a", "b"]
    result = _run_plain(scripted, command)
    assert result.returncode == 0, result.stderr
    assert len(scripted.server.requests) == 2
    assert last_headers(scripted)["authorization"] == "Bearer sk-from-command"
    assert counter.read_text().count("run") == 1
    assert "sk-from-command" not in result.stdout + result.stderr
    for path in (scripted.agent_dir / "sessions").rglob("*.jsonl"):
        assert "sk-from-command" not in path.read_text()


def test_a_failing_auth_json_command_is_a_clear_error(scripted: Scripted) -> None:
    openai_via_scripted(scripted)
    path = write_auth(
        scripted,
        {"openai": {"type": "api_key", "key": "!echo sk-leaked; echo 'vault locked' >&2; exit 4"}},
    )
    result = _run_plain(scripted, ["-m", "knightcode", "--model", f"openai/{MODEL}", "-p", "hi"])
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert f"auth.json error in {path}: openai.key: the key command failed" in output
    assert "vault locked" in output
    assert "sk-leaked" not in output
    assert "Traceback" not in output


def test_oauth_entries_survive_a_rewrite(scripted: Scripted) -> None:
    """knightcode rewrites auth.json (here: the llama.cpp login stores its entry); an OAuth
    entry of the reference's is kept byte for byte in meaning."""
    from knightcode._llm.keys import AuthStorage

    oauth = {"type": "oauth", "refresh": "r-token", "access": "a-token", "expires": 1767225600000}
    path = write_auth(scripted, {"anthropic": oauth})
    storage = AuthStorage(path)
    storage.set("openai", "sk-new")
    storage.remove("openai")
    storage.set_entry("llama.cpp", {"type": "llama.cpp", "baseUrl": "http://x"})
    data = json.loads(path.read_text())
    assert data["anthropic"] == oauth
    assert path.stat().st_mode & 0o777 == 0o600
    # And a run with that file reads it without complaint.
    write_models(scripted, {})
    scripted.server.add(text_reply("ok"))
    result = scripted.run("-p", "hi")
    assert result.returncode == 0, result.stderr


def test_a_model_base_url_wins_over_the_providers(scripted: Scripted) -> None:
    """The reference lets one model live elsewhere than its provider (``models[].baseUrl``)."""
    write_models(
        scripted,
        {
            "baseUrl": "http://127.0.0.1:9/v1",  # nothing listens here
            "models": [model_entry(baseUrl=scripted.server.base_url)],
        },
    )
    assert ask(scripted)["model"] == MODEL


def test_fields_accepted_but_unused_are_named_in_one_line(scripted: Scripted) -> None:
    tiers = [
        {"inputTokensAbove": 200000, "input": 6, "output": 22, "cacheRead": 0, "cacheWrite": 0}
    ]
    cost = {"input": 3, "output": 15, "cacheRead": 0, "cacheWrite": 0, "tiers": tiers}
    write_models(
        scripted,
        {
            "name": "Scripted Server",
            "models": [model_entry(samplingParams={"temperature": 0.2}, cost=cost)],
        },
    )
    assert (
        "models.json: providers.scripted.name, providers.scripted.models[0].samplingParams, "
        "providers.scripted.models[0].cost.tiers not supported, ignored"
    ) in stderr_of_a_good_run(scripted)
    assert "temperature" not in json.dumps(scripted.server.requests[-1].body)
