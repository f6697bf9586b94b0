"""The model registry: built-in providers, models.json, plugin providers, keys, streaming."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from knightcode._errors import ConfigError, UsageError
from knightcode._llm.keys import AuthStorage, clear_command_cache, resolve_config_value
from knightcode._llm.registry import ModelRegistry
from knightcode._llm.types import KNOWN_APIS, Context, Model, StreamOptions
from knightcode._plugins.definitions import ProviderDefinition
from knightcode.testing import ScriptedServer, text_reply

from .conftest import collect, kinds, user_context


@pytest.fixture(autouse=True)
def fresh_command_cache() -> None:
    clear_command_cache()


def write_models(agent_dir: Path, data: Any) -> Path:
    path = agent_dir / "models.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def local_provider(base_url: str, **extra: Any) -> dict[str, Any]:
    return {
        "providers": {
            "local": {
                "baseUrl": base_url,
                "api": "openai-completions",
                "models": [
                    {"id": "m1"},
                    {
                        "id": "m2",
                        "name": "Model Two",
                        "contextWindow": 32768,
                        "maxTokens": 4096,
                        "reasoning": True,
                        "input": ["text", "image"],
                        "cost": {"input": 1, "output": 2, "cacheRead": 0.5},
                    },
                ],
            },
            **extra,
        }
    }


# --- built-in providers ---


def test_builtin_providers_need_their_env_keys(agent_dir: Path) -> None:
    registry = ModelRegistry(agent_dir, environ={})
    assert {"openai", "anthropic", "openrouter", "groq", "mistral", "xai"} <= set(
        registry.providers
    )
    gpt = registry.find_known("openai", "gpt-5")
    assert (
        gpt is not None
        and gpt.base_url == "https://api.openai.com/v1"
        and gpt.api == "openai-responses"
    )
    azure = registry.find_known("azure-openai-responses", "gpt-5")
    assert azure is not None and azure.api == "azure-openai-responses" and azure.base_url == ""
    assert "azure-openai-responses" in registry.providers
    claude = registry.find_known("anthropic", "claude-sonnet-4-5")
    assert claude is not None and claude.api == "anthropic-messages" and claude.cost.input == 3
    assert registry.available() == []
    registry = ModelRegistry(agent_dir, environ={"OPENAI_API_KEY": "sk-env"})
    assert {m.provider for m in registry.available()} == {"openai"}
    assert registry.get_api_key("openai") == "sk-env"


async def test_default_model(agent_dir: Path) -> None:
    registry = ModelRegistry(agent_dir, environ={"ANTHROPIC_API_KEY": "k"})
    # The catalogue's default of the first provider with a key (the reference's choice).
    assert await registry.default_model() == registry.find_known("anthropic", "claude-opus-4-7")
    assert await registry.default_model("openai", "gpt-4.1") == registry.find_known(
        "openai", "gpt-4.1"
    )
    assert await registry.default_model(None, "openai/gpt-5") == registry.find_known(
        "openai", "gpt-5"
    )
    assert await registry.default_model("openai") == registry.find_known("openai", "gpt-5.4")
    # An unknown configured model falls back to the default of a provider with a key.
    assert await registry.default_model("openai", "no-such") == registry.find_known(
        "anthropic", "claude-opus-4-7"
    )
    assert (await ModelRegistry(agent_dir, environ={}).default_model()) is None


async def test_resolve(agent_dir: Path) -> None:
    registry = ModelRegistry(agent_dir, environ={"OPENROUTER_API_KEY": "k"})
    assert (await registry.resolve("openai/gpt-5")).provider == "openai"
    assert (await registry.resolve("gpt-5", provider="openai")).id == "gpt-5"
    # Ids may contain slashes; provider/id splits at the first one.
    assert (await registry.resolve("openrouter/openai/gpt-5")).id == "openai/gpt-5"
    assert (await registry.resolve("openai/gpt-5", provider="openrouter")).provider == "openrouter"
    # A bare id known to several providers: the one with a key wins.
    assert (await registry.resolve("claude-sonnet-4-5")).provider == "anthropic"
    with pytest.raises(UsageError, match="unknown model 'nope'"):
        await registry.resolve("nope")


# --- models.json ---


async def test_models_json_custom_provider(agent_dir: Path) -> None:
    write_models(agent_dir, local_provider("http://127.0.0.1:9/v1"))
    registry = ModelRegistry(agent_dir, environ={})
    m1 = registry.find_known("local", "m1")
    assert m1 == Model(
        provider="local",
        id="m1",
        name="m1",
        api="openai-completions",
        base_url="http://127.0.0.1:9/v1",
    )
    m2 = registry.find_known("local", "m2")
    assert m2 is not None
    assert (m2.name, m2.context_window, m2.max_tokens, m2.reasoning, m2.input) == (
        "Model Two",
        32768,
        4096,
        True,
        ("text", "image"),
    )
    assert (m2.cost.input, m2.cost.output, m2.cost.cache_read, m2.cost.cache_write) == (
        1,
        2,
        0.5,
        0,
    )
    # A local endpoint without apiKey needs no key.
    assert [m.ref for m in registry.available()] == ["local/m1", "local/m2"]
    assert (await registry.resolve("m2")).ref == "local/m2"


def test_models_json_overrides_a_builtin_provider(agent_dir: Path) -> None:
    write_models(
        agent_dir,
        {
            "providers": {
                "openai": {
                    "baseUrl": "https://proxy.example/v1",
                    "headers": {"x-team": "blue"},
                    "models": [
                        {"id": "gpt-5", "name": "GPT-5 via proxy", "contextWindow": 100000},
                        {"id": "my-finetune"},
                    ],
                    "modelOverrides": {
                        "gpt-4.1": {"name": "Old faithful", "cost": {"input": 9}},
                        "unknown": {"name": "x"},
                    },
                }
            }
        },
    )
    registry = ModelRegistry(agent_dir, environ={})
    gpt5 = registry.find_known("openai", "gpt-5")
    assert gpt5 is not None and gpt5.name == "GPT-5 via proxy" and gpt5.context_window == 100000
    assert gpt5.base_url == "https://proxy.example/v1" and gpt5.headers == {"x-team": "blue"}
    old = registry.find_known("openai", "gpt-4.1")
    assert (
        old is not None
        and old.name == "Old faithful"
        and old.cost.input == 9
        and old.cost.output == 8
    )
    assert registry.find_known("openai", "my-finetune") is not None
    assert registry.find_known("openai", "gpt-5-mini") is not None  # built-in models are kept
    assert registry.needs_api_key("openai")


def test_missing_or_empty_models_json(agent_dir: Path) -> None:
    assert ModelRegistry(agent_dir, environ={}).find_known("local", "m1") is None
    write_models(agent_dir, "")
    assert ModelRegistry(agent_dir, environ={}).find_known("openai", "gpt-5") is not None


API_CHOICES = ", ".join(f'"{api}"' for api in KNOWN_APIS)
"""How a models.json error lists the APIs knightcode speaks."""

BAD_MODELS_JSON = [
    (
        {
            "providers": {
                "local": {
                    "baseUrl": "http://x",
                    "api": "openai-completions",
                    "models": [{"id": "a", "contextWindow": 0}],
                }
            }
        },
        "providers.local.models[0].contextWindow: expected a positive integer, got 0",
    ),
    (
        {
            "providers": {
                "local": {
                    "baseUrl": "http://x",
                    "api": "openai-completions",
                    "models": [{"id": "a", "maxTokens": 1.5}],
                }
            }
        },
        "providers.local.models[0].maxTokens: expected a positive integer, got 1.5",
    ),
    (
        {
            "providers": {
                "local": {
                    "baseUrl": "http://x",
                    "api": "openai-completions",
                    "models": [{"name": "a"}],
                }
            }
        },
        "providers.local.models[0].id: required",
    ),
    (
        {
            "providers": {
                "local": {
                    "baseUrl": "http://x",
                    "api": "openai-completions",
                    "models": [{"id": ""}],
                }
            }
        },
        'providers.local.models[0].id: expected a non-empty string, got ""',
    ),
    (
        {
            "providers": {
                "local": {
                    "baseUrl": "http://x",
                    "api": "openai-completions",
                    "models": [{"id": "a", "contextwindow": 5}],
                }
            }
        },
        'providers.local.models[0].contextwindow: unknown key (did you mean "contextWindow"?)',
    ),
    (
        {"providers": {"local": {"baseUrl": "http://x", "api": "", "models": []}}},
        'providers.local.api: expected a non-empty string, got ""',
    ),
    (
        {
            "providers": {
                "local": {
                    "baseUrl": "http://x",
                    "api": "openai-completions",
                    "models": [{"id": "a", "input": ["audio"]}],
                }
            }
        },
        'providers.local.models[0].input: expected a list of "text" and "image", got ["audio"]',
    ),
    (
        {
            "providers": {
                "local": {
                    "baseUrl": "http://x",
                    "api": "openai-completions",
                    "models": [{"id": "a", "reasoning": "yes"}],
                }
            }
        },
        'providers.local.models[0].reasoning: expected true or false, got "yes"',
    ),
    (
        {
            "providers": {
                "local": {
                    "baseUrl": "http://x",
                    "api": "openai-completions",
                    "models": [{"id": "a", "cost": {"input": -1}}],
                }
            }
        },
        "providers.local.models[0].cost.input: "
        "expected a non-negative number (dollars per million tokens), got -1",
    ),
    (
        {
            "providers": {
                "local": {
                    "baseUrl": "http://x",
                    "api": "openai-completions",
                    "headers": {"x": 1},
                    "models": [],
                }
            }
        },
        'providers.local.headers: expected an object whose values are strings, got {"x": 1}',
    ),
    (
        {
            "providers": {
                "local": {
                    "baseUrl": "http://x",
                    "api": "openai-completions",
                    "apiKey": "",
                    "models": [],
                }
            }
        },
        'providers.local.apiKey: expected a non-empty string, got ""',
    ),
    (
        {
            "providers": {
                "local": {"baseUrl": "http://x", "api": "openai-completions", "models": {}}
            }
        },
        "providers.local.models: expected a list, got {}",
    ),
    ({"providers": {"local": 3}}, "providers.local: expected an object, got 3"),
    ({"providers": []}, "providers: expected an object, got []"),
    (
        {"providers": {"local": {"api": "openai-completions", "models": [{"id": "a"}]}}},
        "providers.local.baseUrl: required for a provider that is not built in",
    ),
    (
        {
            "providers": {
                "local": {
                    "baseUrl": "http://x",
                    "models": [{"id": "a", "api": "anthropic-messages"}, {"id": "b"}],
                }
            }
        },
        (
            'providers.local.api: required (or an "api" on every model): '
            f"one of {API_CHOICES}; models[1] has none"
        ),
    ),
    (
        {
            "providers": {
                "local": {
                    "baseUrl": "http://x",
                    "api": "openai-completions",
                    "models": [{"id": "a"}, {"id": "a"}],
                }
            }
        },
        "providers.local.models[1].id: duplicate model id 'a'",
    ),
    (
        {"providers": {"openai": {"modelOverrides": {"gpt-5": {"cost": {"output": "lots"}}}}}},
        (
            "providers.openai.modelOverrides.gpt-5.cost.output: "
            'expected a non-negative number (dollars per million tokens), got "lots"'
        ),
    ),
]


@pytest.mark.parametrize(
    ("data", "problem"),
    BAD_MODELS_JSON,
    ids=[p.split(":")[0] + str(i) for i, (_, p) in enumerate(BAD_MODELS_JSON)],
)
def test_models_json_errors(agent_dir: Path, data: Any, problem: str) -> None:
    path = write_models(agent_dir, data)
    with pytest.raises(ConfigError) as caught:
        ModelRegistry(agent_dir, environ={})
    assert str(caught.value) == f"models.json error in {path}: {problem}"


def test_models_json_invalid_json_names_line_and_column(agent_dir: Path) -> None:
    path = write_models(agent_dir, '{\n  "providers": {\n    "local": ,\n  }\n}')
    with pytest.raises(ConfigError) as caught:
        ModelRegistry(agent_dir, environ={})
    assert str(caught.value).startswith(f"{path}: invalid JSON at line 3 column 14")


def test_refresh_rereads_models_json(agent_dir: Path) -> None:
    registry = ModelRegistry(agent_dir, environ={})
    assert registry.find_known("local", "m1") is None
    write_models(agent_dir, local_provider("http://x/v1"))
    registry.refresh()
    assert registry.find_known("local", "m1") is not None


# --- keys ---


def test_api_key_literal_env_name_and_command(agent_dir: Path, tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    data = {
        "providers": {
            "literal": {
                "baseUrl": "http://x",
                "api": "openai-completions",
                "apiKey": "sk-literal",
                "models": [],
            },
            "byenv": {
                "baseUrl": "http://x",
                "api": "openai-completions",
                "apiKey": "MY_KEY_VAR",
                "models": [],
            },
            "unsetenv": {
                "baseUrl": "http://x",
                "api": "openai-completions",
                "apiKey": "UNSET_KEY_VAR",
                "models": [],
            },
            "command": {
                "baseUrl": "http://x",
                "api": "openai-completions",
                "apiKey": f"!echo run >> {counter}; printf '  sk-from-command\\n'",
                "models": [],
            },
        }
    }
    write_models(agent_dir, data)
    registry = ModelRegistry(agent_dir, environ={"MY_KEY_VAR": "sk-from-env"})
    assert registry.get_api_key("literal") == "sk-literal"
    assert registry.get_api_key("byenv") == "sk-from-env"
    assert registry.get_api_key("unsetenv") == "UNSET_KEY_VAR"  # no such variable: a literal
    assert registry.get_api_key("command") == "sk-from-command"
    assert registry.get_api_key("command") == "sk-from-command"
    assert counter.read_text().count("run") == 1  # cached for the process


def test_api_key_precedence(agent_dir: Path) -> None:
    """The reference's order: --api-key, auth.json, the environment, then models.json."""
    write_models(agent_dir, {"providers": {"openai": {"apiKey": "from-models-json"}}})
    assert ModelRegistry(agent_dir, environ={}).get_api_key("openai") == "from-models-json"
    registry = ModelRegistry(agent_dir, environ={"OPENAI_API_KEY": "from-env"})
    assert registry.get_api_key("openai") == "from-env"
    assert registry.auth is not None
    registry.auth.set("openai", "from-auth-json")
    assert registry.get_api_key("openai") == "from-auth-json"
    registry.set_runtime_api_key("openai", "from-flag")
    assert registry.get_api_key("openai") == "from-flag"


def test_failing_key_command_does_not_echo_the_secret(agent_dir: Path) -> None:
    path = write_models(
        agent_dir,
        {
            "providers": {
                "vault": {
                    "baseUrl": "http://x",
                    "api": "openai-completions",
                    "models": [],
                    "apiKey": "!echo sk-super-secret; echo 'vault is locked' >&2; exit 3",
                }
            }
        },
    )
    registry = ModelRegistry(agent_dir, environ={})
    with pytest.raises(ConfigError) as caught:
        registry.get_api_key("vault")
    message = str(caught.value)
    assert message == (
        f"models.json error in {path}: providers.vault.apiKey: "
        f"the key command failed with exit code 3: vault is locked"
    )
    assert "sk-super-secret" not in message


def test_key_command_timeout_and_empty_output() -> None:
    with pytest.raises(ConfigError, match=re.escape("did not finish within 0.2 s")):
        resolve_config_value("!sleep 5", "where", timeout=0.2)
    with pytest.raises(ConfigError, match="where: the key command printed nothing"):
        resolve_config_value("!true", "where")


def test_auth_json_is_private(agent_dir: Path) -> None:
    storage = AuthStorage(agent_dir / "auth.json")
    storage.set("anthropic", "sk-ant-1")
    storage.set("openai", "sk-2")
    mode = stat.S_IMODE(os.stat(agent_dir / "auth.json").st_mode)
    assert mode == 0o600
    assert json.loads((agent_dir / "auth.json").read_text()) == {
        "anthropic": {"type": "api_key", "key": "sk-ant-1"},
        "openai": {"type": "api_key", "key": "sk-2"},
    }
    assert storage.get("anthropic") == "sk-ant-1"
    assert storage.providers() == ["anthropic", "openai"]
    assert storage.remove("anthropic") is True
    assert storage.remove("anthropic") is False
    assert storage.get("anthropic") is None
    assert stat.S_IMODE(os.stat(agent_dir / "auth.json").st_mode) == 0o600


def test_auth_json_errors_do_not_echo_keys(agent_dir: Path) -> None:
    path = agent_dir / "auth.json"
    path.write_text(
        json.dumps({"openai": "sk-plain-secret", "groq": {"type": "oauth", "access": "t"}})
    )
    storage = AuthStorage(path)
    with pytest.raises(ConfigError) as caught:
        storage.get("openai")
    assert "sk-plain-secret" not in str(caught.value)
    assert str(caught.value).startswith(f"auth.json error in {path}: openai: expected")
    assert storage.get("groq") is None  # not an API key entry


# --- plugin providers ---


def test_plugin_provider_and_invalid_plugin_models(agent_dir: Path) -> None:
    good = ProviderDefinition(
        name="plug",
        api="openai-completions",
        base_url="http://x/v1",
        models=[{"id": "p1", "contextWindow": 8000}],
    )
    bad = ProviderDefinition(
        name="broken",
        api="openai-completions",
        base_url="http://x/v1",
        models=[{"id": "b1", "contextWindow": -1}],
    )
    no_api = ProviderDefinition(name="noapi", models=[{"id": "n1"}])
    registry = ModelRegistry(agent_dir, providers=[good, bad, no_api], environ={})
    found = registry.find_known("plug", "p1")
    assert found is not None and found.context_window == 8000
    assert registry.find_known("broken", "b1") is None
    assert registry.load_errors[0] == (
        "provider 'broken' registered by a plugin: "
        "models[0].contextWindow: expected a positive integer, got -1"
    )
    assert registry.load_errors[1].startswith("provider 'noapi' registered by a plugin: api:")


async def test_plugin_stream_function_is_used_with_resolved_options(agent_dir: Path) -> None:
    seen: list[StreamOptions] = []

    async def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[Any]:
        seen.append(options)
        yield {"type": "done", "reason": "stop", "message": {"role": "assistant", "content": []}}

    definition = ProviderDefinition(
        name="custom", api_key="CUSTOM_KEY", stream=stream, models=[{"id": "c1"}]
    )
    registry = ModelRegistry(
        agent_dir,
        providers=[definition],
        environ={"CUSTOM_KEY": "resolved"},
        http_idle_timeout_ms=1234,
    )
    model = await registry.resolve("custom/c1")
    events = await collect(registry.stream(model, user_context()))
    assert kinds(events) == ["done"]
    assert seen[0].api_key == "resolved" and seen[0].idle_timeout_ms == 1234


# --- streaming through the registry ---


async def test_stream_to_a_local_provider(agent_dir: Path) -> None:
    with ScriptedServer() as server:
        write_models(
            agent_dir,
            {
                "providers": {
                    "local": {
                        "baseUrl": server.base_url,
                        "api": "openai-completions",
                        "headers": {"x-org": "ORG_VAR"},
                        "models": [{"id": "scripted-model"}],
                    }
                }
            },
        )
        registry = ModelRegistry(agent_dir, environ={"ORG_VAR": "acme"})
        server.add(text_reply("one"), text_reply("two"))
        model = await registry.resolve("local/scripted-model")
        first = await collect(registry.stream(model, user_context()))
        second = await collect(
            registry.stream(model, user_context(), StreamOptions(headers={"x-org": "override"}))
        )
        await registry.aclose()
    assert first[-1]["message"]["content"][0]["text"] == "one"
    assert second[-1]["type"] == "done"
    requests = server.requests
    assert "authorization" not in requests[0].headers
    assert requests[0].headers["x-org"] == "acme"  # header values resolve like keys
    assert requests[1].headers["x-org"] == "override"


async def test_stream_with_a_key_and_on_payload(agent_dir: Path) -> None:
    with ScriptedServer() as server:
        write_models(agent_dir, {"providers": {"openai": {"baseUrl": server.base_url}}})
        registry = ModelRegistry(agent_dir, environ={"OPENAI_API_KEY": "sk-openai-env"})
        server.add(text_reply("ok"))

        async def on_payload(body: dict[str, Any]) -> dict[str, Any]:
            return {**body, "model": "renamed"}

        events = await collect(
            registry.stream(
                await registry.resolve("openai/gpt-4.1"),
                user_context(),
                StreamOptions(on_payload=on_payload),
            )
        )
        await registry.aclose()
    assert events[-1]["type"] == "done"
    request = server.requests[0]
    assert request.headers["authorization"] == "Bearer sk-openai-env"
    assert request.body["model"] == "renamed"
    assert (
        "max_completion_tokens" not in request.body
    )  # nothing asked; and not api.openai.com anyway


async def test_stream_without_a_key_is_an_error_event(agent_dir: Path) -> None:
    with ScriptedServer() as server:
        write_models(agent_dir, {"providers": {"anthropic": {"baseUrl": server.base_url}}})
        registry = ModelRegistry(agent_dir, environ={})
        events = await collect(
            registry.stream(await registry.resolve("anthropic/claude-haiku-4-5"), user_context())
        )
    assert kinds(events) == ["error"]
    message = events[0]["error"]["errorMessage"]
    assert message.startswith("No API key for provider 'anthropic': set ANTHROPIC_API_KEY")
    assert server.requests == []


async def test_stream_with_a_failing_key_command(agent_dir: Path) -> None:
    write_models(
        agent_dir,
        {
            "providers": {
                "vault": {
                    "baseUrl": "http://127.0.0.1:9/v1",
                    "api": "openai-completions",
                    "apiKey": "!exit 1",
                    "models": [{"id": "v"}],
                }
            }
        },
    )
    registry = ModelRegistry(agent_dir, environ={})
    events = await collect(registry.stream(await registry.resolve("vault/v"), user_context()))
    assert kinds(events) == ["error"]
    assert (
        "providers.vault.apiKey: the key command failed with exit code 1"
        in events[0]["error"]["errorMessage"]
    )


async def test_a_raising_plugin_stream_becomes_an_error_event(agent_dir: Path) -> None:
    async def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[Any]:
        raise RuntimeError("backend exploded")
        yield  # pragma: no cover

    definition = ProviderDefinition(name="flaky", stream=stream, models=[{"id": "f"}])
    registry = ModelRegistry(agent_dir, providers=[definition], environ={})
    events = await collect(registry.stream(await registry.resolve("flaky/f"), user_context()))
    assert kinds(events) == ["error"]
    assert (
        events[0]["error"]["errorMessage"]
        == "provider 'flaky' failed: RuntimeError: backend exploded"
    )


async def test_an_unknown_provider_is_named_as_such(agent_dir: Path) -> None:
    from knightcode._errors import UsageError
    from knightcode._llm.registry import ModelRegistry

    registry = ModelRegistry(agent_dir, environ={})
    known = r"^unknown provider 'nope'; known: amazon-bedrock, anthropic, openai"
    with pytest.raises(UsageError, match=known):
        await registry.resolve("x", "nope")
