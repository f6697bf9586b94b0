"""The HTTP side shared by the wire clients: send, read under the abort signal, describe failures.

Every request gets a connect timeout and a read *idle* timeout (the longest silence between two
network reads, settings ``httpIdleTimeoutMs``), so a provider that stops talking ends the stream
with a retryable error instead of hanging the agent. Abort is checked at every network read: a
set signal cancels the pending read at once, whatever the server is doing (every await below is
inside the signal's scope: :meth:`knightcode._abort.AbortSignal.guard`).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncGenerator, Mapping
from http import HTTPStatus
from typing import Any, TypeVar

import httpx

from knightcode._abort import AbortSignal
from knightcode._llm.errors import retry_after_seconds
from knightcode._llm.types import StreamOptions

__all__ = [
    "StreamFailed",
    "describe_transport_error",
    "encode_body",
    "open_stream",
]

_T = TypeVar("_T")

# Enough of an error body to show the provider's message; some proxies answer with whole HTML pages.
DEFAULT_IDLE_TIMEOUT_MS = 300000
_ERROR_BODY_LIMIT = 64 * 1024
_ERROR_TEXT_LIMIT = 2000


class StreamFailed(Exception):
    """The request failed; ``str(exc)`` is the ``errorMessage`` to record.

    :param retry_after_ms: the provider's ``Retry-After``, when it sent one
    """

    def __init__(self, message: str, retry_after_ms: int | None = None) -> None:
        super().__init__(message)
        self.retry_after_ms = retry_after_ms


def encode_body(body: Mapping[str, Any]) -> bytes:
    """Compact UTF-8 JSON; lone surrogates (from damaged input) become U+FFFD instead of an
    exception or an escape strict JSON parsers reject.
    """
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def _timeout(options: StreamOptions) -> httpx.Timeout:
    connect = options.connect_timeout_ms / 1000
    idle_ms = (
        DEFAULT_IDLE_TIMEOUT_MS if options.idle_timeout_ms is None else options.idle_timeout_ms
    )
    if idle_ms == 0:  # settings httpIdleTimeoutMs 0: the user asked for no idle limit
        return httpx.Timeout(connect=connect, read=None, write=None, pool=connect)
    idle = idle_ms / 1000
    connect = min(connect, idle)
    return httpx.Timeout(connect=connect, read=idle, write=idle, pool=connect)


async def open_stream(
    client: httpx.AsyncClient,
    url: str,
    headers: Mapping[str, str],
    body: dict[str, Any],
    options: StreamOptions,
    signal: AbortSignal,
) -> httpx.Response:
    """Apply ``on_payload``, POST ``body`` and return the streaming response once its status is
    known to be a success.

    :raises StreamFailed: an HTTP error status (message ``"<status> <reason>: <provider message>"``)
        or a transport failure
    :raises Aborted: the signal was set
    """
    if options.on_payload is not None:
        replacement = await signal.guard(options.on_payload(body))
        if replacement is not None:
            body = replacement
    request = client.build_request(
        "POST", url, headers=dict(headers), content=encode_body(body), timeout=_timeout(options)
    )
    try:
        response = await signal.guard(client.send(request, stream=True))
    except httpx.HTTPError as exc:
        raise StreamFailed(describe_transport_error(exc)) from exc
    try:
        if options.on_response is not None:
            result = options.on_response(response.status_code, dict(response.headers))
            if inspect.isawaitable(result):
                await signal.guard(result)
        if response.status_code >= 400:
            raise await _http_error(response, signal)
    except BaseException:
        await response.aclose()
        raise
    return response


async def iter_body(response: httpx.Response, signal: AbortSignal) -> AsyncGenerator[bytes, None]:
    """The response body as it arrives, each read inside the abort signal's scope."""
    chunks = response.aiter_bytes()
    try:
        while True:
            try:
                chunk = await signal.guard(chunks.__anext__())
            except StopAsyncIteration:
                return
            except httpx.HTTPError as exc:
                raise StreamFailed(describe_transport_error(exc, mid_stream=True)) from exc
            yield chunk
    finally:
        await response.aclose()


async def _http_error(response: httpx.Response, signal: AbortSignal) -> StreamFailed:
    body = b""
    try:
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) >= _ERROR_BODY_LIMIT:
                break
    except httpx.HTTPError:
        pass  # the status alone still says what happened
    status = response.status_code
    detail = _error_detail(body)
    if detail:
        message = f"{status} {_reason(status, response.reason_phrase)}: {detail}"
    else:
        # The wording of the OpenAI SDK; the overflow check recognises "400 status code (no body)".
        message = f"{status} status code (no body)"
    seconds = retry_after_seconds(dict(response.headers))
    if seconds is None and status == 429:
        seconds = retry_after_seconds(detail)
    return StreamFailed(message, None if seconds is None else int(seconds * 1000))


def _reason(status: int, phrase: str) -> str:
    if status == 529:
        return "Overloaded"  # Anthropic's own status; not in the IANA registry
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return phrase or "Error"


def _error_detail(body: bytes) -> str:
    """The provider's error message from an OpenAI- or Anthropic-style error body."""
    text = body.decode("utf-8", "replace").strip()
    if not text:
        return ""
    try:
        data = json.loads(text)
    except ValueError:
        return text[:_ERROR_TEXT_LIMIT]
    return _message_of(data) or text[:_ERROR_TEXT_LIMIT]


def _message_of(data: Any) -> str:
    if isinstance(data, list) and data:
        return _message_of(data[0])  # some gateways wrap the error in a list
    if not isinstance(data, dict):
        return ""
    error = data.get("error")
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            return message
        return json.dumps(error, ensure_ascii=False)[:_ERROR_TEXT_LIMIT]
    for key in ("message", "detail"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def error_message_of(data: Any) -> str:
    """The message of an error object sent *inside* a stream (``{"error": {...}}``)."""
    return _message_of(data)


def describe_transport_error(exc: Exception, mid_stream: bool = False) -> str:
    """Words for a network failure that the retry classification recognises."""
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        kind = (
            "connecting"
            if isinstance(exc, (httpx.ConnectTimeout, httpx.PoolTimeout))
            else "waiting for data"
        )
        return f"Request timed out while {kind}: {detail}"
    if isinstance(exc, httpx.ConnectError):
        return f"Connection error: {detail}"
    if mid_stream or isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        # "terminated" is what the reference's fetch reports for a connection cut mid-response.
        return f"terminated: the connection closed before the response was complete ({detail})"
    return f"Connection error: {detail}"
