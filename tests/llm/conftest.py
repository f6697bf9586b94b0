"""Fixtures for the provider tests: a scripted server per test and models pointing at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from knightcode._llm.types import Context, Model, ModelCost
from knightcode.testing import ScriptedServer


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    """A running scripted server, stopped after the test."""
    with ScriptedServer() as running:
        yield running


def make_model(server: ScriptedServer, api: str = "openai-completions", **changes: Any) -> Model:
    """A model of provider ``scripted`` served by ``server``."""
    fields: dict[str, Any] = {
        "provider": "scripted",
        "id": "scripted-model",
        "name": "Scripted",
        "api": api,
        "base_url": server.base_url,
        "context_window": 1000,
        "max_tokens": 4096,
        "cost": ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
    }
    fields.update(changes)
    return Model(**fields)


def user_context(text: str = "hi", system_prompt: str | None = "You are terse.") -> Context:
    """A context holding one user message."""
    return Context(
        system_prompt=system_prompt, messages=[{"role": "user", "content": text, "timestamp": 0}]
    )


async def collect(events: AsyncIterator[Any]) -> list[dict[str, Any]]:
    """Every event of a stream, in order."""
    return [event async for event in events]


def kinds(events: list[dict[str, Any]]) -> list[str]:
    """The event types, in order."""
    return [event["type"] for event in events]
