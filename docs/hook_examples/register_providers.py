"""A model provider: an OpenAI-compatible server in the lab, with one model."""

from __future__ import annotations

from collections.abc import Callable

from knightcode import ProviderDefinition, hookimpl


@hookimpl
def register_providers(register: Callable[..., None]) -> None:
    """Register ``lab``; its model is selectable as ``lab/lab-coder``."""
    register(
        ProviderDefinition(
            name="lab",
            api="openai-completions",
            base_url="http://127.0.0.1:8000/v1",
            api_key="LAB_API_KEY",  # an environment variable holding the key
            models=[
                {"id": "lab-coder", "name": "Lab Coder", "contextWindow": 32768, "maxTokens": 4096}
            ],
        )
    )
