"""Azure OpenAI (``api: "azure-openai-responses"``): the Responses API on an Azure resource.

Only the endpoint differs from OpenAI's, resolved the way the reference does it:

* the base URL is ``AZURE_OPENAI_BASE_URL``, else ``https://<AZURE_OPENAI_RESOURCE_NAME>
  .openai.azure.com/openai/v1``, else the model's (provider's) ``baseUrl``;
* every request carries ``?api-version=`` (``AZURE_OPENAI_API_VERSION``, default ``v1``);
* the key goes in the ``api-key`` header (from ``AZURE_OPENAI_API_KEY`` or any other source the
  registry resolves keys from);
* the body's ``model`` is the deployment name: ``AZURE_OPENAI_DEPLOYMENT_NAME_MAP``
  (``model-id=deployment,other=deployment2``) maps a model id to it; unmapped ids are sent as
  they are (a deployment named like the model).

The environment is read per request, so tests and long sessions see the current values.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Mapping
from urllib.parse import quote

import httpx

from knightcode._llm.openai_responses import Endpoint, stream_responses
from knightcode._llm.transport import StreamFailed
from knightcode._llm.types import Context, Model, StreamOptions
from knightcode._types.stream import AssistantMessageEvent

__all__ = [
    "DEFAULT_AZURE_API_VERSION",
    "azure_endpoint",
    "parse_deployment_map",
    "stream_azure_openai_responses",
]

DEFAULT_AZURE_API_VERSION = "v1"


def parse_deployment_map(value: str | None) -> dict[str, str]:
    """``AZURE_OPENAI_DEPLOYMENT_NAME_MAP``: ``id=deployment`` pairs separated by commas;
    malformed entries are skipped.
    """
    mapping: dict[str, str] = {}
    for entry in (value or "").split(","):
        model_id, sep, deployment = entry.strip().partition("=")
        if sep and model_id.strip() and deployment.strip():
            mapping[model_id.strip()] = deployment.strip()
    return mapping


def azure_endpoint(model: Model, options: StreamOptions, environ: Mapping[str, str]) -> Endpoint:
    """The Azure endpoint of one request.

    :raises StreamFailed: no base URL is configured anywhere (the message says what to set)
    """
    base = (environ.get("AZURE_OPENAI_BASE_URL") or "").strip()
    resource = (environ.get("AZURE_OPENAI_RESOURCE_NAME") or "").strip()
    if not base and resource:
        base = f"https://{resource}.openai.azure.com/openai/v1"
    if not base:
        base = model.base_url
    if not base:
        raise StreamFailed(
            f"Azure OpenAI needs a base URL for {model.ref}: set AZURE_OPENAI_BASE_URL or "
            "AZURE_OPENAI_RESOURCE_NAME, or the provider's baseUrl in models.json"
        )
    version = (environ.get("AZURE_OPENAI_API_VERSION") or "").strip() or DEFAULT_AZURE_API_VERSION
    deployment = parse_deployment_map(environ.get("AZURE_OPENAI_DEPLOYMENT_NAME_MAP")).get(
        model.id, model.id
    )
    return Endpoint(
        f"{base.rstrip('/')}/responses?api-version={quote(version, safe='')}",
        {"api-key": options.api_key or ""},
        deployment,
    )


def stream_azure_openai_responses(
    model: Model,
    context: Context,
    options: StreamOptions | None = None,
    *,
    client: httpx.AsyncClient | None = None,
    environ: Mapping[str, str] | None = None,
) -> AsyncGenerator[AssistantMessageEvent, None]:
    """Stream one Azure OpenAI Responses answer (see the module docstring for the endpoint).

    :param environ: the environment to read the ``AZURE_OPENAI_*`` variables from (the
        process's when None)
    """
    env = os.environ if environ is None else environ
    return stream_responses(
        model,
        context,
        options,
        client=client,
        endpoint=lambda m, o: azure_endpoint(m, o, env),
    )
