"""``RouterClient``: the llama.cpp router's HTTP API, with its failures turned into clear errors.

Only the router-level endpoints and the few proxied ones the plugin needs are wrapped (see the
reference: ``GET /props``, ``GET /models``, ``POST /models/load|unload``, ``GET /models/sse``,
``POST /models`` to download, ``POST /tokenize``, ``POST /v1/chat/completions`` for
probabilities, ``POST /v1/systemone``). Chat streaming goes through knightcode's own
OpenAI-compatible client instead.

Every call has a timeout. A refused or dropped connection is :class:`RouterUnreachable`, a 401
is :class:`Unauthorized`; other error statuses keep the router's message and its JSON body, so
callers can tell "model is not loaded" from "model not found" or a context overflow.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import cast

import httpx

from knightcode_builtins.llama_cpp.connection import Connection
from knightcode_builtins.llama_cpp.errors import (
    ContextTooSmall,
    ModelNotFound,
    ModelNotLoaded,
    NotRouterMode,
    RouterError,
    RouterUnreachable,
    Unauthorized,
)
from knightcode_builtins.llama_cpp.replies import ChatCompletion
from knightcode_builtins.llama_cpp.router_models import RouterModel

__all__ = ["RouterClient", "RouterError", "RouterState", "model_error"]

CONNECT_TIMEOUT = 3.0
REQUEST_TIMEOUT = 30.0


@dataclass(frozen=True)
class RouterState:
    """The router at one moment: its models and whether it loads models on demand."""

    models: list[RouterModel]
    autoload: bool

    def find(self, model_id: str) -> RouterModel | None:
        """The model with this id, or None."""
        return next((m for m in self.models if m.id == model_id), None)

    @property
    def loaded(self) -> list[RouterModel]:
        """Models holding memory: loaded, sleeping or on their way."""
        return [m for m in self.models if m.status in ("loaded", "sleeping", "loading")]


class RouterClient:
    """An open connection pool to one router; use it as ``async with RouterClient(c) as r``.

    :param connection: where the router is and the key to send
    :param timeout: seconds one request may take (reads of the status stream excepted)
    """

    def __init__(self, connection: Connection, *, timeout: float = REQUEST_TIMEOUT) -> None:
        self.connection = connection
        self.url = connection.base_url
        self._http = httpx.AsyncClient(
            base_url=self.url,
            headers=connection.headers(),
            timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT),
            trust_env=False,  # a proxy from the environment must not capture a loopback router
            # A plain-http router needs no certificates: loading them costs ~30 ms of every
            # start-up (redirects are not followed, so no https request can come of it).
            verify=not self.url.startswith("http://"),
        )

    async def __aenter__(self) -> RouterClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    # --- requests ---

    async def request(
        self, method: str, path: str, body: Mapping[str, object] | None = None, **params: str
    ) -> object:
        """Send one request and return the decoded JSON answer (any JSON value).

        :raises RouterUnreachable: no connection, a dropped one, or no answer in time
        :raises Unauthorized: 401
        :raises RouterError: any other error status (``status``, ``detail`` and ``body`` set)
        """
        for attempt in (1, 2):
            try:
                response = await self._http.request(method, path, json=body, params=params or None)
            except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                # The b10434 router sometimes closes a kept-alive connection instead of answering
                # (about 1 request in 100): ask once more, on a new connection. A router that is
                # really gone then refuses the connection.
                if attempt == 1:
                    continue
                raise RouterUnreachable(self.url, _reason(exc)) from exc
            except httpx.TimeoutException as exc:
                raise RouterUnreachable(self.url, f"no answer: {type(exc).__name__}") from exc
            except httpx.TransportError as exc:
                raise RouterUnreachable(self.url, _reason(exc)) from exc
            return self._decode(response)
        raise AssertionError("unreachable")  # pragma: no cover

    def _decode(self, response: httpx.Response) -> object:
        data: object
        try:
            data = response.json()
        except ValueError:
            data = {"error": {"message": response.text[:500]}}
        if response.status_code == 401:
            raise Unauthorized(self.url, sent_key=self.connection.api_key is not None)
        if response.status_code >= 400:
            error = data.get("error") if isinstance(data, dict) else None
            detail = str(error.get("message", "")) if isinstance(error, dict) else str(error or "")
            raise RouterError(
                f"llama.cpp router at {self.url}: {response.status_code} {detail}".rstrip(),
                response.status_code,
                detail,
                error if isinstance(error, dict) else None,
            )
        return data

    # --- router state ---

    async def state(self) -> RouterState:
        """The models and the autoload setting; checks the key and that this is a router.

        ``GET /props`` needs the key in every version (``/models`` was public in older ones), so
        it runs first: a wrong key is reported as such, not as an empty model list.
        """
        props = await self.request("GET", "/props")
        models = await self.list_models()
        autoload = props.get("models_autoload") if isinstance(props, dict) else None
        return RouterState(models, bool(autoload) if autoload is not None else True)

    async def list_models(self) -> list[RouterModel]:
        """``GET /models``; raises :class:`NotRouterMode` for a single-model server."""
        data = await self.request("GET", "/models")
        entries = data.get("data") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise RouterError(f"llama.cpp router at {self.url}: unexpected answer to /models")
        # A single-model server lists its one model without a router "status".
        if any(not isinstance(entry, dict) or "status" not in entry for entry in entries):
            raise NotRouterMode(self.url)
        return [RouterModel.from_json(entry) for entry in entries]

    async def get_model(self, model_id: str) -> RouterModel:
        """One model of ``GET /models``; raises :class:`ModelNotFound` naming the others."""
        models = await self.list_models()
        for model in models:
            if model.id == model_id:
                return model
        raise ModelNotFound(self.url, model_id, [m.id for m in models])

    async def load(self, model_id: str) -> None:
        """Ask the router to load a model (it answers at once; the status says when it is done)."""
        try:
            await self.request("POST", "/models/load", {"model": model_id})
        except RouterError as exc:
            if "already running" in exc.detail:
                return  # loaded or loading already: that is what was asked for
            raise model_error(exc, self.url, model_id) from None

    async def unload(self, model_id: str) -> None:
        """Unload a model; also stops a load or a download in progress."""
        try:
            await self.request("POST", "/models/unload", {"model": model_id})
        except RouterError as exc:
            if "not running" in exc.detail:
                return
            raise model_error(exc, self.url, model_id) from None

    async def download(self, spec: str) -> None:
        """Ask the router to download ``owner/repository[:quant]`` from Hugging Face."""
        await self.request("POST", "/models", {"model": spec})

    async def status_events(self) -> AsyncIterator[dict[str, object]]:
        """The router's status stream (``GET /models/sse``), one event object at a time."""
        try:
            async with self._http.stream(
                "GET", "/models/sse", timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT)
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    self._decode(response)
                async for line in response.aiter_lines():
                    if line.startswith("data:"):
                        event: object
                        try:
                            event = json.loads(line[5:])
                        except ValueError:
                            continue
                        if isinstance(event, dict):
                            yield event
        except httpx.TransportError as exc:
            raise RouterUnreachable(self.url, _reason(exc)) from exc

    # --- model requests ---

    async def tokenize(self, model_id: str, text: str) -> list[int]:
        """The token ids of ``text`` for the model's tokenizer (``POST /tokenize``)."""
        path = "/tokenize"
        body = {"content": text, "with_pieces": True}
        data = _object(await self._model_request(path, model_id, body), self.url, path)
        tokens = data.get("tokens", [])
        if not isinstance(tokens, list):
            raise RouterError(f"llama.cpp router at {self.url}: unexpected answer to {path}")
        # with_pieces: each token is {"id": …, "piece": …}; older builds send bare ids.
        return [int(t["id"]) if isinstance(t, dict) else int(t) for t in tokens]

    async def complete(self, body: Mapping[str, object]) -> ChatCompletion:
        """A non-streaming chat completion (for next-token probabilities)."""
        path = "/v1/chat/completions"
        reply = _object(await self._model_request(path, str(body["model"]), body), self.url, path)
        # Its fields are read defensively (see ChatCompletion): an object is all that is checked.
        return cast(ChatCompletion, reply)

    async def systemone(self, body: Mapping[str, object]) -> dict[str, object]:
        """``POST /v1/systemone`` (decision models, llama.cpp 0.6+).

        A 404 "File Not Found" is returned as is: here it means the endpoint does not exist
        (an older build), not an unknown model (that is a 400 from the router's routing).
        """
        try:
            reply = await self.request("POST", "/v1/systemone", body)
        except RouterError as exc:
            if exc.status == 404:
                raise
            raise model_error(exc, self.url, str(body["model"])) from None
        return _object(reply, self.url, "/v1/systemone")

    async def _model_request(self, path: str, model_id: str, body: Mapping[str, object]) -> object:
        try:
            return await self.request("POST", path, {"model": model_id, **body})
        except RouterError as exc:
            raise model_error(exc, self.url, model_id) from None


def model_error(exc: RouterError, url: str, model_id: str) -> RouterError:
    """The precise error for a failed request about one model (or ``exc`` itself)."""
    if isinstance(exc, (RouterUnreachable, Unauthorized)):
        return exc
    detail = exc.detail
    body = exc.body
    if body.get("type") == "exceed_context_size_error" or "exceeds the available context" in detail:
        return ContextTooSmall(
            model_id,
            _int_or_none(body.get("n_prompt_tokens")),
            _int_or_none(body.get("n_ctx")),
            "shorten the input, or start the router with a larger -c (or a ctx-size preset)",
        )
    if "is not loaded" in detail:
        return ModelNotLoaded(model_id)
    if exc.status == 404 and (detail == "File Not Found" or "not found" in detail):
        return ModelNotFound(url, model_id)
    if exc.status == 400 and "not found" in detail:
        return ModelNotFound(url, model_id)
    return exc


def _object(data: object, url: str, path: str) -> dict[str, object]:
    """``data`` when it is a JSON object, else a :class:`RouterError` about the answer."""
    if not isinstance(data, dict):
        raise RouterError(f"llama.cpp router at {url}: unexpected answer to {path}")
    return data


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _reason(exc: httpx.TransportError) -> str:
    if isinstance(exc, httpx.ConnectError):
        return "connection refused" if "refused" in str(exc).lower() else f"cannot connect: {exc}"
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return "the connection dropped"
    return f"{type(exc).__name__}: {exc}"
