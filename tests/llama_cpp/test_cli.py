"""End to end through the real executable: ``knightcode --mode json --model llama.cpp/<id>``
against the real router — streaming, tool calls, and the errors a user sees at start-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from .conftest import KEY, statuses
from .servers import LlamaServer, free_port

WEATHER_EXTENSION = """
from knightcode import hookimpl


def get_weather(tool_call_id, args, ctx, on_update):
    return f"Sunny in {args['city']}"


@hookimpl
def register_tools(register):
    register(
        name="get_weather",
        description="The weather in a city",
        parameters={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        execute=get_weather,
    )


@hookimpl
def before_provider_request(payload):
    # tiny-tools calls get_weather after every prompt; once the result is in, let tiny-chat
    # (loaded on the same router) answer, so the run ends.
    if any(message.get("role") == "tool" for message in payload["messages"]):
        return {**payload, "model": "tiny-chat"}
    return None
"""


def run(
    project: Path, *args: str, url: str, key: str | None = KEY, timeout: float = 120
) -> tuple[list[dict[str, Any]], subprocess.CompletedProcess[str]]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith("LLAMA_")
    }
    env.update(LLAMA_BASE_URL=url, KNIGHTCODE_LOAD_PLUGINS="builtin:llama.cpp")
    if key is not None:
        env["LLAMA_API_KEY"] = key
    # The tiny models have a 2048-token context and a byte-level tokenizer: a short system prompt
    # and no built-in tools keep the prompt small (the path through the router is the same).
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "knightcode",
            "--mode",
            "json",
            "--no-session",
            "--system-prompt",
            "You are terse.",
            "--no-builtin-tools",
            *args,
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    records = [json.loads(line) for line in result.stdout.split("\n") if line]
    return records, result


def assistant_messages(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        r["message"]
        for r in records
        if r["type"] == "message_end" and r["message"]["role"] == "assistant"
    ]


def test_json_mode_streams_a_reply(router: LlamaServer, project_dir: Path) -> None:
    router.ensure({"tiny-chat"})
    records, result = run(
        project_dir, "--model", "llama.cpp/tiny-chat", "Say hello", url=router.url
    )
    assert result.returncode == 0, result.stderr
    deltas = [
        r["assistantMessageEvent"]["delta"]
        for r in records
        if r["type"] == "message_update" and r["assistantMessageEvent"]["type"] == "text_delta"
    ]
    assert deltas == ["Hello", "!"]  # streamed token by token by the router
    (reply,) = assistant_messages(records)
    assert reply["content"] == [{"type": "text", "text": "Hello!"}]
    assert (reply["provider"], reply["model"], reply["stopReason"]) == (
        "llama.cpp",
        "tiny-chat",
        "stop",
    )
    assert reply["usage"]["output"] == 3


def test_json_mode_tool_call_round_trip(
    router: LlamaServer, project_dir: Path, tmp_path: Path
) -> None:
    router.ensure({"tiny-tools", "tiny-chat"})
    extension = tmp_path / "weather.py"
    extension.write_text(textwrap.dedent(WEATHER_EXTENSION))
    records, result = run(
        project_dir,
        "-e",
        str(extension),
        "--model",
        "llama.cpp/tiny-tools",
        "Weather in Paris?",
        url=router.url,
    )
    assert result.returncode == 0, result.stderr
    first, second = assistant_messages(records)
    (call,) = [block for block in first["content"] if block["type"] == "toolCall"]
    assert (call["name"], call["arguments"]) == ("get_weather", {"city": "Paris"})
    assert first["stopReason"] == "toolUse"
    ends = [r for r in records if r["type"] == "tool_execution_end"]
    assert ends[0]["result"]["content"] == [{"type": "text", "text": "Sunny in Paris"}]
    assert not ends[0]["isError"]
    assert second["content"] == [{"type": "text", "text": "Hello!"}]


def test_unloaded_model_with_autoload_off_starts_and_says_how_to_load_it(
    router: LlamaServer, project_dir: Path
) -> None:
    router.ensure(set())
    records, result = run(project_dir, "--model", "llama.cpp/tiny-chat", "hi", url=router.url)
    # knightcode starts on the model that is not loaded; the prompt says how to load it
    assert result.returncode == 1, result.stderr
    (reply,) = assistant_messages(records)
    assert reply["stopReason"] == "error"
    assert "llama.cpp model 'tiny-chat' is not loaded" in reply["errorMessage"]
    assert "load it with /llama load tiny-chat" in reply["errorMessage"]


def test_nothing_loaded_start_load_with_the_llama_command_and_answer(
    router: LlamaServer, project_dir: Path
) -> None:
    router.ensure(set())
    records, result = run(
        project_dir,
        "--model",
        "llama.cpp/tiny-chat",
        "/llama load tiny-chat",
        "Say hello",
        url=router.url,
    )
    assert result.returncode == 0, result.stderr
    assert "info: Loaded tiny-chat · context window 2048 tokens" in result.stderr
    (reply,) = assistant_messages(records)
    assert reply["content"] == [{"type": "text", "text": "Hello!"}]
    assert statuses(router)["tiny-chat"] == "loaded"


def test_provider_alone_with_nothing_loaded_says_what_to_type(
    router: LlamaServer, project_dir: Path
) -> None:
    router.ensure(set())
    records, result = run(project_dir, "--provider", "llama.cpp", "hi", url=router.url)
    assert result.returncode == 2
    assert "provider 'llama.cpp' has no model ready:" in result.stderr
    assert (
        'knightcode --model llama.cpp/tiny-chat -p "/llama load tiny-chat" "your prompt"'
        in result.stderr
    )
    assert "Traceback" not in result.stderr
    assert records == []


def test_provider_alone_picks_the_loaded_model(router: LlamaServer, project_dir: Path) -> None:
    router.ensure({"tiny-chat"})
    records, result = run(project_dir, "--provider", "llama.cpp", "Say hello", url=router.url)
    assert result.returncode == 0, result.stderr
    (reply,) = assistant_messages(records)
    assert (reply["model"], reply["content"]) == ("tiny-chat", [{"type": "text", "text": "Hello!"}])


def test_autoload_loads_the_selected_model(autoload_router: LlamaServer, project_dir: Path) -> None:
    autoload_router.ensure(set())
    records, result = run(
        project_dir, "--model", "llama.cpp/tiny-chat", "hi", url=autoload_router.url, key=None
    )
    assert result.returncode == 0, result.stderr
    assert assistant_messages(records)[0]["content"][0]["text"] == "Hello!"


def test_router_not_reachable_at_start(project_dir: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    _, result = run(project_dir, "--model", "llama.cpp/tiny-chat", "hi", url=url)
    assert result.returncode == 2
    assert f"llama.cpp router not reachable at {url}" in result.stderr


def test_wrong_key_at_start(router: LlamaServer, project_dir: Path) -> None:
    _, result = run(project_dir, "--model", "llama.cpp/tiny-chat", "hi", url=router.url, key="nope")
    assert result.returncode == 2
    assert "rejected the API key (401)" in result.stderr


def test_disabled_plugin_removes_provider_and_command(project_dir: Path, agent_dir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_")}
    subprocess.run(
        [sys.executable, "-m", "knightcode", "config", "disable", "builtin:llama.cpp"],
        cwd=project_dir,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    listing = subprocess.run(
        [sys.executable, "-m", "knightcode", "config", "list"],
        cwd=project_dir,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    line = next(line for line in listing.stdout.splitlines() if "builtin:llama.cpp" in line)
    assert "disabled" in line.lower()

    from knightcode._plugins.planning import HostOptions, create_plugin_host

    host = create_plugin_host(HostOptions(cwd=project_dir, agent_dir=agent_dir))
    assert host.registrations.providers.get("llama.cpp") is None
    assert host.registrations.commands.get("llama") is None
    record = host.record("builtin:llama.cpp")
    assert record is not None and record.plugin is None
