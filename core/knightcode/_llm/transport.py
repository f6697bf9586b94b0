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
from collections.abc import AsyncGenerator, Callable, Mapping
from http import HTTPStatus

import httpx

from knightcode._abort import Aborted, AbortSignal
from knightcode._llm.errors import backoff_delay_ms, retry_after_seconds
from knightcode._llm.types import StreamOptions

__all__ = [
    "StreamFailed",
    "compact_json",
    "describe_transport_error",
    "encode_body",
    "encode_body_chunks",
    "open_stream",
]

DEFAULT_IDLE_TIMEOUT_MS = 300000
DEFAULT_MAX_RETRY_DELAY_MS = 60000  # settings retry.provider.maxRetryDelayMs
# Settings retry.provider.maxRetries: the statuses retried inside a request, and the backoff
# between those attempts (the provider SDKs' own: 0.5 s doubling, at most 8 s, or Retry-After).
_TRANSIENT_STATUSES = frozenset({408, 409, 429})
_PROVIDER_RETRY_BASE_MS = 500
_PROVIDER_RETRY_MAX_MS = 8000
# Enough of an error body to show the provider's message; some proxies answer with whole HTML pages.
_ERROR_BODY_LIMIT = 64 * 1024
_ERROR_TEXT_LIMIT = 2000


class StreamFailed(Exception):
    """The request failed; ``str(exc)`` is the ``errorMessage`` to record.

    :param retry_after_ms: the provider's ``Retry-After``, when it sent one
    :param transient: worth repeating as it is (a connection failure, or a 408, 409, 429 or
        5xx status whose ``Retry-After`` is within the limit): what settings
        ``retry.provider.maxRetries`` retries inside the request
    """

    def __init__(
        self, message: str, retry_after_ms: int | None = None, *, transient: bool = False
    ) -> None:
        super().__init__(message)
        self.retry_after_ms = retry_after_ms
        self.transient = transient


_CHUNK_BYTES = 1 << 18  # encode_body_chunks makes chunks of about this size
_LARGE_LIST = 64  # a body list at least this long (messages) is encoded item by item

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_make_c_encoder = getattr(json.encoder, "c_make_encoder", None)  # absent outside CPython


def _reusable(encoder: json.JSONEncoder) -> Callable[[object], str]:
    # JSONEncoder.encode builds a new C encoder (and a closure) on every call, which dominates
    # for the small values a request body is made of. This one is built once; without a markers
    # dict it does not detect cycles, so a RecursionError is retried with the checking encoder
    # (which raises the usual ValueError for a cycle).
    if _make_c_encoder is None:
        return encoder.encode
    make = _make_c_encoder(
        None,
        encoder.default,
        json.encoder.encode_basestring_ascii
        if encoder.ensure_ascii
        else json.encoder.encode_basestring,
        None,
        encoder.key_separator,
        encoder.item_separator,
        False,
        False,
        encoder.allow_nan,
    )

    def encode(value: object) -> str:
        try:
            return "".join(make(value, 0))
        except RecursionError:
            return encoder.encode(value)

    return encode


compact_json = _reusable(_encoder)
"""``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, built once."""

_compact_ascii = _reusable(json.JSONEncoder(separators=(",", ":")))


def _compact_item(value: object) -> str:
    # compact_json for one message of a large body. The C encoder is ~30% faster when it may
    # escape non-ASCII text, and most messages have none: their text is then the same either
    # way. A message whose text has a \u escape (non-ASCII, a control character, a surrogate) is
    # encoded again with raw Unicode.
    text = _compact_ascii(value)
    return compact_json(value) if "\\u" in text else text


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def encode_body_chunks(body: Mapping[str, object], *, release: bool = False) -> list[bytes]:
    """:func:`encode_body` in chunks of about 256 KB.

    The messages of a resumed session can be 100 MB of JSON: encoded message by message, the
    body never exists as one string (which CPython would store at 4 bytes per character as soon
    as one emoji is in it), and the chunks can be sent without being joined.

    :param release: empty the body's large lists while encoding them, so each converted message
        is freed once encoded (for a body nobody else holds: ~50 MB less at the peak of a
        100 MB session's request)
    """
    large: dict[str, list[object]] = {
        key: value
        for key, value in body.items()
        if type(value) is list and len(value) >= _LARGE_LIST and type(key) is str
    }
    if not large:
        return [_utf8(compact_json(body))]
    chunks: list[bytes] = []
    group: list[bytes] = []
    size = 0
    separator = b"{"
    for key, value in body.items():
        items = large.get(key)
        if items is None:
            group.append(separator + _utf8(compact_json({key: value})[1:-1]))
            separator = b","
            continue
        group.append(separator + _utf8(compact_json(key)) + b":[")
        separator = b","
        if release:
            items.reverse()  # popped from the end, in order
        for index in range(len(items)):
            item = items.pop() if release else items[index]
            # Each piece to bytes at once: its str is freed before the next is made, and a
            # piece holding an emoji does not widen a whole chunk to 4 bytes per character.
            piece = _utf8(_compact_item(item))
            if index:
                group.append(b",")
            group.append(piece)
            size += len(piece)
            if size >= _CHUNK_BYTES:
                chunks.append(b"".join(group))
                group.clear()
                size = 0
        group.append(b"]")
    group.append(b"}")
    chunks.append(b"".join(group))
    return chunks


def encode_body(body: Mapping[str, object]) -> bytes:
    """Compact UTF-8 JSON; lone surrogates (from damaged input) become ``?`` instead of an
    exception or an escape strict JSON parsers reject.
    """
    return b"".join(encode_body_chunks(body))


async def _send_in_order(chunks: list[bytes]) -> AsyncGenerator[bytes, None]:
    chunks.reverse()
    while chunks:
        yield chunks.pop()  # each chunk is released once it is sent


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
    body: dict[str, object],
    options: StreamOptions,
    signal: AbortSignal,
    sign: Callable[[list[bytes]], Mapping[str, str]] | None = None,
) -> httpx.Response:
    """Apply ``on_payload``, POST ``body`` and return the streaming response once its status is
    known to be a success.

    :param sign: request signing (Bedrock's SigV4): called with the encoded body, returns
        headers to add; the signature covers the body as it is finally sent

    :raises StreamFailed: an HTTP error status (message ``"<status> <reason>: <provider message>"``)
        or a transport failure
    :raises Aborted: the signal was set
    """
    if options.on_payload is not None:
        replacement = await signal.guard(options.on_payload(body))
        if replacement is not None:
            body = replacement
    # The clients do not use a body once it is sent; unless a hook has seen it (and may keep
    # it), its converted messages are freed as they are encoded.
    retries = options.max_retries or 0
    # A body sent more than once is kept whole; otherwise its messages are freed as encoded.
    chunks = encode_body_chunks(body, release=options.on_payload is None and not retries)
    if sign is not None:
        headers = {**headers, **sign(chunks)}
    attempt = 0
    while True:
        try:
            return await _send_once(client, url, headers, chunks, options, signal)
        except StreamFailed as failure:
            if not failure.transient or attempt >= retries:
                raise
            attempt += 1
            delay_ms = backoff_delay_ms(
                attempt, _PROVIDER_RETRY_BASE_MS, _PROVIDER_RETRY_MAX_MS, failure.retry_after_ms
            )
            if not await signal.sleep(delay_ms / 1000):
                raise Aborted() from failure


async def _send_once(
    client: httpx.AsyncClient,
    url: str,
    headers: Mapping[str, str],
    chunks: list[bytes],
    options: StreamOptions,
    signal: AbortSignal,
) -> httpx.Response:
    """One POST of the encoded body; the response once its status is a success."""
    request_headers = dict(headers)
    content: bytes | AsyncGenerator[bytes, None]
    if len(chunks) == 1:
        content = chunks[0]
    else:
        # Sent as they are, with their total length: no chunked transfer encoding (some servers
        # refuse it), and no joined copy of a body that can be 100 MB.
        request_headers["content-length"] = str(sum(len(chunk) for chunk in chunks))
        content = _send_in_order(list(chunks) if options.max_retries else chunks)
    request = client.build_request(
        "POST", url, headers=request_headers, content=content, timeout=_timeout(options)
    )
    try:
        response = await signal.guard(client.send(request, stream=True))
    except httpx.HTTPError as exc:
        raise StreamFailed(describe_transport_error(exc), transient=True) from exc
    try:
        if options.on_response is not None:
            result = options.on_response(response.status_code, dict(response.headers))
            if inspect.isawaitable(result):
                await signal.guard(result)
        if response.status_code >= 400:
            raise await _http_error(response, options)
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


async def _http_error(response: httpx.Response, options: StreamOptions) -> StreamFailed:
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
    transient = status in _TRANSIENT_STATUSES or status >= 500
    if seconds is None:
        return StreamFailed(message, transient=transient)
    limit = options.max_retry_delay_ms
    if limit is None:
        limit = DEFAULT_MAX_RETRY_DELAY_MS
    if limit and seconds * 1000 > limit:
        # As the reference documents: a delay beyond the limit is not waited for; the request
        # fails at once and says what the server asked, and the agent's own (capped) backoff
        # decides whether to try again, visibly.
        return StreamFailed(
            f"{message} (the server asked for a {seconds:g} s retry delay, more than "
            f"retry.provider.maxRetryDelayMs {limit} ms)"
        )
    return StreamFailed(message, int(seconds * 1000), transient=transient)


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


def _message_of(data: object) -> str:
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
    for key in ("message", "detail", "Message"):  # "Message": AWS's access errors
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def error_message_of(data: object) -> str:
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
