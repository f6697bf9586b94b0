"""ChatGPT Plus/Pro subscriptions (``api: "openai-codex-responses"``, provider ``openai-codex``).

The ChatGPT backend serves the Responses API at ``{baseUrl}/codex/responses`` to a token from
``/login openai-codex`` (:mod:`knightcode._auth.codex`; the account header is added where the
token is applied, :func:`knightcode._auth.providers.apply_credentials`). Its body differs from the
public API's the way the reference sends it:

* the system prompt goes in ``instructions``, not as a system/developer input item;
* nothing is stored server-side (``store: false``), so input items carry no ``id`` (an id names a
  stored item, and there are none) and the encrypted reasoning is always asked for and sent back;
* no ``max_output_tokens``: the backend decides the output limit;
* ``text.verbosity`` is ``medium``.

Everything else — the events, reasoning summaries, tool calls, errors, retries — is the Responses
client's (:mod:`knightcode._llm.openai_responses`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import httpx

from knightcode._llm.openai_responses import Endpoint, stream_responses
from knightcode._llm.types import Context, Model, StreamOptions
from knightcode._types.stream import AssistantMessageEvent

__all__ = ["CODEX_BASE_URL", "codex_endpoint", "reshape_codex_body", "stream_openai_codex"]

CODEX_BASE_URL = "https://chatgpt.com/backend-api"
_ENCRYPTED_REASONING = "reasoning.encrypted_content"


def reshape_codex_body(body: dict[str, object], context: Context) -> None:
    """Turn a public Responses body into the ChatGPT backend's (see the module docstring)."""
    body.pop("max_output_tokens", None)
    body["store"] = False
    body["instructions"] = context.system_prompt or ""
    items = body.get("input")
    if isinstance(items, list):
        kept: list[object] = []
        for item in items:
            if not isinstance(item, dict):
                kept.append(item)
                continue
            if item.get("role") in ("system", "developer") and item.get("content") == (
                context.system_prompt
            ):
                continue  # the system prompt, now in instructions
            kept.append({key: value for key, value in item.items() if key != "id"})
        body["input"] = kept
    include = body.get("include")
    wanted = (
        [entry for entry in include if isinstance(entry, str)] if isinstance(include, list) else []
    )
    if _ENCRYPTED_REASONING not in wanted:
        wanted.append(_ENCRYPTED_REASONING)
    body["include"] = wanted
    body["text"] = {"verbosity": "medium"}


def codex_endpoint(model: Model, options: StreamOptions) -> Endpoint:
    """The backend's URL and bearer token for one request."""
    base = (model.base_url or CODEX_BASE_URL).rstrip("/")
    return Endpoint(
        f"{base}/codex/responses",
        {"authorization": f"Bearer {options.api_key}"},
        model.id,
        reshape=reshape_codex_body,
    )


def stream_openai_codex(
    model: Model,
    context: Context,
    options: StreamOptions | None = None,
    *,
    client: httpx.AsyncClient | None = None,
) -> AsyncGenerator[AssistantMessageEvent, None]:
    """Stream one answer from the ChatGPT backend as provider-neutral events."""
    return stream_responses(model, context, options, client=client, endpoint=codex_endpoint)
