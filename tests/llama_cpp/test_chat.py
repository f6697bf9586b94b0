"""Chat through the registry against the real router: waking a sleeping model, and the errors
a session meets mid-way (model unloaded, router gone, wrong key, context too small, a model
whose automatic load fails)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from knightcode._llm import Context, StreamOptions, is_context_overflow, is_retryable

from .conftest import KEY, Harness, statuses
from .net import CuttableProxy
from .servers import LlamaServer


def ask(text: str) -> Context:
    return Context(
        system_prompt="You are terse.", messages=[{"role": "user", "content": text, "timestamp": 0}]
    )


async def reply(
    harness: Harness, reference: str, text: str = "hi", **options: Any
) -> dict[str, Any]:
    model = await harness.registry.resolve(reference)
    final: dict[str, Any] = {}
    async for event in harness.registry.stream(model, ask(text), StreamOptions(**options)):
        if event["type"] in ("done", "error"):
            final = dict(event["message"] if event["type"] == "done" else event["error"])
    return final


def text_of(message: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in message["content"])


async def test_sleeping_model_wakes_when_used(
    autoload_router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    autoload_router.ensure({"tiny-chat"})
    autoload_router.wait_for("tiny-chat", "sleeping", timeout=10)
    harness = make_harness(autoload_router.url)
    message = await reply(harness, "llama.cpp/tiny-chat")
    assert text_of(message) == "Hello!"
    assert statuses(autoload_router)["tiny-chat"] in ("loaded", "sleeping")  # it woke up to answer
    assert autoload_router.statuses()["tiny-chat"].get("failed") is not True


async def test_model_unloaded_by_someone_else(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    harness = make_harness(router.url, KEY)
    model = await harness.registry.resolve("llama.cpp/tiny-chat")
    router.ensure(set())  # another client of the shared router unloads it
    final: dict[str, Any] = {}
    async for event in harness.registry.stream(model, ask("hi")):
        if event["type"] == "error":
            final = dict(event["error"])
    assert final["stopReason"] == "error"
    assert "llama.cpp model 'tiny-chat' is not loaded" in final["errorMessage"]
    assert "load it with /llama load tiny-chat" in final["errorMessage"]
    assert not is_retryable(final)  # type: ignore[arg-type]


async def test_router_gone_mid_session_is_retryable(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    proxy = CuttableProxy(router.port)
    try:
        harness = make_harness(proxy.url, KEY)
        assert text_of(await reply(harness, "llama.cpp/tiny-chat")) == "Hello!"
        proxy.cut()
        final = await reply(harness, "llama.cpp/tiny-chat")
    finally:
        proxy.close()
    assert "llama.cpp router not reachable" in final["errorMessage"], final["errorMessage"]
    assert is_retryable(final)  # type: ignore[arg-type]  # the agent retries with back-off


async def test_wrong_key_mid_session(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    harness = make_harness(router.url, KEY)
    final = await reply(harness, "llama.cpp/tiny-chat", api_key="not-the-key")
    assert "rejected the API key (401)" in final["errorMessage"], final["errorMessage"]
    assert not is_retryable(final)  # type: ignore[arg-type]


async def test_context_too_small_is_an_overflow(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-small-ctx"})
    harness = make_harness(router.url, KEY)
    model = await harness.registry.resolve("llama.cpp/tiny-small-ctx")
    assert model.context_window == 256  # the router's n_ctx (the preset asked for 64)
    final = await reply(harness, "llama.cpp/tiny-small-ctx", "hello " * 200)
    message = final["errorMessage"]
    assert "exceeds the available context size" in message
    assert "llama.cpp model 'tiny-small-ctx' runs with a 256-token context" in message
    assert is_context_overflow(final)  # type: ignore[arg-type]  # so the agent compacts


async def test_failed_autoload_says_why(
    autoload_router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    autoload_router.ensure(set())
    harness = make_harness(autoload_router.url)
    final = await reply(harness, "llama.cpp/broken")
    assert "llama.cpp model 'broken' is corrupt" in final["errorMessage"]
    assert "is not a GGUF file" in final["errorMessage"]
