"""Lower the sampling temperature of every request."""

from __future__ import annotations

from knightcode import hookimpl


@hookimpl
def before_provider_request(payload: dict[str, object]) -> dict[str, object] | None:
    """The body is the provider API's own (OpenAI and Anthropic both take ``temperature``)."""
    return {**payload, "temperature": 0.2}
