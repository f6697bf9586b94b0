"""The router's models in the registry: states, autoload on and off, keys, and the errors a
user meets before any chat (router down, not a router, wrong key, unknown model)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from knightcode import HeadlessUI
from knightcode._errors import UsageError

from .conftest import KEY, Harness, ids
from .servers import LlamaServer, free_port


async def test_autoload_off_lists_unloaded_models_as_not_ready(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    harness = make_harness(router.url, KEY)
    await harness.registry.refresh_models()
    assert harness.registry.discovery_errors == {}
    chat = harness.registry.find_known("llama.cpp", "tiny-chat")
    assert chat is not None and chat.kind == "chat" and chat.api == "openai-completions"
    assert chat.base_url == router.url + "/v1"
    assert chat.context_window == 2048  # meta.n_ctx of the loaded model, not a guess
    assert [m.ref for m in harness.registry.available() if m.provider == "llama.cpp"] == [
        "llama.cpp/tiny-chat"
    ]
    # the chat model is also a classifier, with the same id
    assert [(m.id, m.api) for m in harness.registry.classifiers] == [
        ("tiny-chat", "llama-cpp-classify")
    ]
    # not loaded, autoload off: choosable by name (knightcode starts on it), never a default,
    # and the reason says what to type
    waiting = await harness.registry.resolve("llama.cpp/tiny-tools")
    assert (waiting.id, waiting.kind) == ("tiny-tools", "chat")
    reason = harness.registry.unavailable_reason("llama.cpp", "tiny-tools")
    assert reason is not None and "load it with /llama load tiny-tools" in reason
    await harness.registry.resolve("broken", "llama.cpp")
    broken = harness.registry.unavailable_reason("llama.cpp", "broken")
    assert broken is not None and "not loaded" in broken  # (its last load failed, if tried)


async def test_resolve_discovers_lazily_and_sees_new_loads(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure(set())
    harness = make_harness(router.url, KEY)
    # never refreshed: the look-up itself asks the router (the CLI resolves --model this way)
    waiting = await harness.registry.resolve("llama.cpp/tiny-chat")
    assert harness.registry.unavailable_reason("llama.cpp", "tiny-chat") is not None
    assert waiting not in harness.registry.available()
    router.ensure({"tiny-chat"})
    assert (await harness.registry.resolve("llama.cpp/tiny-chat")).context_window == 2048
    assert harness.registry.find_known("llama.cpp", "tiny-chat") is not None


async def test_sleeping_model_is_listed_with_its_window(
    autoload_router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    autoload_router.ensure({"tiny-chat"})
    autoload_router.wait_for("tiny-chat", "sleeping", timeout=10)
    harness = make_harness(autoload_router.url)
    await harness.registry.refresh_models()
    sleeping = harness.registry.find_known("llama.cpp", "tiny-chat")
    assert sleeping is not None and sleeping.context_window == 2048


async def test_autoload_on_lists_unloaded_models_too(
    autoload_router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    autoload_router.ensure(set())
    harness = make_harness(autoload_router.url)
    await harness.registry.refresh_models()
    listed = {m.id for m in harness.registry.models if m.provider == "llama.cpp"}
    # b10434 does not report decision models (llama.cpp 0.6 does: see test_systemone), so its
    # decision model is listed as a chat model, as the spec says for older builds
    assert {"tiny-chat", "tiny-tools", "tiny-decision", "broken"} <= listed
    model = harness.registry.find_known("llama.cpp", "tiny-tools")
    # never loaded and no -c: a placeholder until the model loads (see test_context_window)
    assert model is not None and model.context_window == 4096


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (KEY, None),
        ("wrong-key", "rejected the API key (401)"),
        (None, "requires an API key and none is set (401)"),
    ],
)
async def test_api_key(
    router: LlamaServer, make_harness: Callable[..., Harness], key: str | None, expected: str | None
) -> None:
    router.ensure({"tiny-chat"})
    harness = make_harness(router.url, key)
    await harness.registry.refresh_models()
    errors = harness.registry.discovery_errors
    if expected is None:
        assert errors == {} and "tiny-chat" in ids(harness.registry.models)
    else:
        assert expected in errors["llama.cpp"] and "LLAMA_API_KEY" in errors["llama.cpp"]
        assert not [m for m in harness.registry.models if m.provider == "llama.cpp"]
        with pytest.raises(UsageError, match="401"):
            await harness.registry.resolve("llama.cpp/tiny-chat")


async def test_runtime_key_wins_over_the_environment(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    harness = make_harness(router.url, "wrong-key")
    harness.registry.set_runtime_api_key("llama.cpp", KEY)
    await harness.registry.refresh_models()
    assert harness.registry.discovery_errors == {}


async def test_router_not_reachable(make_harness: Callable[..., Harness]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    harness = make_harness(url)
    with pytest.raises(UsageError) as caught:
        await harness.registry.resolve("llama.cpp/tiny-chat")
    message = str(caught.value)
    assert f"llama.cpp router not reachable at {url}" in message
    assert "LLAMA_BASE_URL" in message


async def test_not_router_mode(
    single_server: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    harness = make_harness(single_server.url)
    await harness.registry.refresh_models()
    message = harness.registry.discovery_errors["llama.cpp"]
    assert "is not in router mode" in message and "-m/--model" in message


async def test_model_not_found(router: LlamaServer, make_harness: Callable[..., Harness]) -> None:
    router.ensure({"tiny-chat"})
    harness = make_harness(router.url, KEY)
    with pytest.raises(UsageError) as caught:
        await harness.registry.resolve("llama.cpp/no-such-model")
    message = str(caught.value)
    assert message.startswith("unknown model 'llama.cpp/no-such-model'; provider 'llama.cpp' has: ")
    assert "tiny-chat" in message and "tiny-tools" in message  # the router's models, not others
    assert "openai" not in message


async def test_default_url_and_login_storage(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    from knightcode_builtins.llama_cpp.connection import DEFAULT_URL, resolve_connection, save_login

    harness = make_harness(None)
    assert (
        resolve_connection(harness.agent_dir, {}).base_url == DEFAULT_URL == "http://127.0.0.1:8080"
    )
    save_login(harness.agent_dir, router.url + "/v1/", KEY)
    stored = resolve_connection(harness.agent_dir, {"LLAMA_BASE_URL": "http://elsewhere:1"})
    assert (stored.base_url, stored.api_key) == (router.url, KEY)
    # the registry finds the stored key like any provider's (auth.json, type api_key)
    assert harness.registry.get_api_key("llama.cpp") == KEY
    router.ensure({"tiny-chat"})
    await harness.registry.refresh_models()
    assert "tiny-chat" in ids(harness.registry.models)


async def test_session_start_refreshes_in_the_background(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    harness = make_harness(router.url, KEY)
    await harness.agent("openai/gpt-5")  # the session uses another provider
    await harness.host.hooks.session_start(reason="startup", previous_session_file=None)
    background = list(harness.ctx._tasks)  # owned by the context: cancelled at session end
    assert background
    await asyncio.gather(*background)
    assert [m.id for m in harness.registry.available() if m.provider == "llama.cpp"] == [
        "tiny-chat"
    ]


async def test_a_headless_session_start_does_not_touch_the_router(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    harness = make_harness(router.url, KEY)
    await harness.agent("openai/gpt-5")
    assert harness.host.context is not None
    # -p / --mode json: nobody will pick another model
    harness.host.context.bind_ui(HeadlessUI(), has_ui=False)
    await harness.host.hooks.session_start(reason="startup", previous_session_file=None)
    assert not harness.ctx._tasks


async def test_the_default_pick_is_a_loaded_model_even_with_autoload_on(
    autoload_router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    autoload_router.ensure({"tiny-tools"})  # not the router's first model
    harness = make_harness(autoload_router.url)
    chosen = await harness.registry.default_model("llama.cpp")
    assert chosen is not None and chosen.id == "tiny-tools"
    autoload_router.ensure(set())
