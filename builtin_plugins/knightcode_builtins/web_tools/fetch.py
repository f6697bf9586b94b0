"""``web_fetch``: one URL, fetched safely, as text the model can read.

* **Bounded.** Connect and read timeouts plus an overall deadline (a server trickling one byte a
  second never trips a read timeout); the body is streamed and cut at ``max_bytes`` — counted
  after decompression, so a gzip bomb stops there too — and the result says it was cut.
* **Guarded.** Redirects are followed here, one hop at a time, so that every hop goes through
  :mod:`.netguard` (private, loopback and link-local addresses refused after DNS resolution) and
  loops and over-long chains are reported. Each request connects to the address the guard
  checked. Only ``http`` and ``https``; environment proxies are not used (the guard would check
  the proxy, not the target).
* **Readable.** HTML becomes markdown (:mod:`.extract`), PDF text, text and JSON stay as they
  are; images are refused unless the model accepts images, other binary bodies are refused.
* **Small in the context.** A long result goes whole to the scratchpad (:mod:`.scratchpad`) and
  the context gets its head, size and path.

Registering: ``register(web_fetch_tool(settings_for))`` in a ``register_tools`` hook, where
``settings_for(ctx)`` returns the :class:`FetchSettings` (filled from ``tools.json``).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from knightcode import __version__

from .definitions import FETCH_PARAMETERS
from .scratchpad import (
    ScratchpadSettings,
    default_scratchpad_dir,
    format_size,
    keep_or_spill,
    workspace_ignore_file,
)
from .tls import tls_context

if TYPE_CHECKING:
    import httpx

    from knightcode import AbortSignal, ToolContext, ToolDefinition, ToolResult

    from .netguard import IPAddress, ResolvedHost

__all__ = [
    "FetchError",
    "FetchSettings",
    "Fetched",
    "fetch",
    "render",
    "web_fetch",
    "web_fetch_tool",
]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/xml",
        "application/javascript",
        "application/x-javascript",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/x-sh",
        "application/sql",
        "application/graphql",
    }
)
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


@dataclass(frozen=True)
class FetchSettings:
    """How ``web_fetch`` fetches (tools.json ``fetch`` and ``scratchpad``, filled by
    ``settings.fetch_settings_for``).

    :param connect_timeout: seconds to open the connection
    :param read_timeout: seconds to wait for each chunk of the response
    :param total_timeout: seconds for the whole fetch, redirects included
    :param max_redirects: hops followed before giving up
    :param max_bytes: body bytes read (after decompression); the rest is not downloaded
    :param allow_private: turn the SSRF guard off (private, loopback, link-local allowed)
    :param allow_hosts: host names (``.example.com`` for a domain), addresses or networks
        (``10.0.0.0/8``) allowed although private
    :param accept_images: the model takes images: return them as image content
    :param max_image_bytes: the biggest image returned as content
    :param user_agent: the ``User-Agent`` header
    :param scratchpad: when and where long results are saved
    """

    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    total_timeout: float = 60.0
    max_redirects: int = 5
    max_bytes: int = 10 * 1024 * 1024
    allow_private: bool = False
    allow_hosts: frozenset[str] = frozenset()
    accept_images: bool = False
    max_image_bytes: int = 5 * 1024 * 1024
    user_agent: str = f"knightcode/{__version__}"
    scratchpad: ScratchpadSettings = field(default_factory=ScratchpadSettings)


class FetchError(Exception):
    """The fetch failed or its body cannot be given to the model; the message says why."""


@dataclass(frozen=True)
class Fetched:
    """A response: where the chain ended, what came and whether the body was cut."""

    url: str
    final_url: str
    status: int
    reason: str
    content_type: str
    charset: str | None
    body: bytes
    truncated: bool
    redirects: tuple[str, ...]


def _check_url(url: httpx.URL) -> None:
    """Only absolute ``http``/``https`` URLs (no ``file:``, ``ftp:`` …)."""
    if url.scheme not in ("http", "https"):
        raise FetchError(f"only http and https URLs can be fetched, not {url.scheme or 'none'!r}")
    if not url.host:
        raise FetchError(f"the URL {url} has no host")


def _pinned(url: httpx.URL, address: IPAddress) -> tuple[httpx.URL, dict[str, str], dict[str, str]]:
    """The URL to request, its ``Host`` header and extensions: connect to the checked address.

    The name stays in ``Host`` and, for https, in SNI (which is also the name the certificate is
    verified against), so the server sees an ordinary request for its name.
    """
    host_header = f"[{url.host}]" if ":" in url.host else url.host
    if url.port is not None:
        host_header = f"{host_header}:{url.port}"
    extensions = {"sni_hostname": url.host} if url.scheme == "https" else {}
    return url.copy_with(host=str(address)), {"Host": host_header}, extensions


async def _fetch_chain(client: httpx.AsyncClient, url: str, settings: FetchSettings) -> Fetched:
    """Follow ``url``'s redirects by hand, checking every hop, and read the final body."""
    import httpx

    from .netguard import BlockedAddressError, resolve_checked

    try:
        current = httpx.URL(url)
    except httpx.InvalidURL as error:
        raise FetchError(f"invalid URL {url!r}: {error}") from error
    chain: list[str] = []
    while True:
        _check_url(current)
        port = current.port or (443 if current.scheme == "https" else 80)
        try:
            resolved = await resolve_checked(
                current.host,
                port,
                allow_private=settings.allow_private,
                allow_hosts=settings.allow_hosts,
            )
        except BlockedAddressError as error:
            via = f" (redirected from {chain[0]})" if chain else ""
            raise FetchError(f"{error}{via}") from error
        response = await _send_pinned(client, current, resolved)
        try:
            location = response.headers.get("location")
            if response.status_code in _REDIRECTS and location:
                chain.append(str(current))
                try:
                    following = current.join(location)
                except httpx.InvalidURL as error:
                    raise FetchError(f"bad redirect Location {location!r}: {error}") from error
                if str(following) in chain:
                    loop = " → ".join([*chain[chain.index(str(following)) :], str(following)])
                    raise FetchError(f"redirect loop: {loop}")
                if len(chain) > settings.max_redirects:
                    raise FetchError(
                        f"too many redirects (more than {settings.max_redirects}): "
                        + " → ".join([*chain, str(following)])
                    )
                current = following
                continue
            body, truncated = await _read_capped(response, settings.max_bytes)
        finally:
            await response.aclose()
        content_type = response.headers.get("content-type", "")
        return Fetched(
            url=url,
            final_url=str(current),
            status=response.status_code,
            reason=response.reason_phrase,
            content_type=content_type.split(";", 1)[0].strip().lower(),
            charset=response.charset_encoding,
            body=body,
            truncated=truncated,
            redirects=tuple(chain),
        )


async def _send_pinned(
    client: httpx.AsyncClient, url: httpx.URL, resolved: ResolvedHost
) -> httpx.Response:
    """GET ``url`` from the first of the checked addresses that accepts a connection."""
    import httpx

    failure: httpx.ConnectError | None = None
    for address in resolved.addresses:
        target, headers, extensions = _pinned(url, address)
        request = client.build_request("GET", target, headers=headers, extensions=extensions)
        try:
            return await client.send(request, stream=True)
        except httpx.ConnectError as error:
            failure = error
    assert failure is not None  # the guard never returns an empty address list
    raise failure


async def _read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` decoded body bytes, and whether there was more."""
    parts: list[bytes] = []
    size = 0
    # One iterator throughout: a second ``aiter_bytes()`` on the same response raises
    # StreamConsumed (seen when a chunk ended exactly at the cap, which depends on the network).
    stream = response.aiter_bytes()
    async for chunk in stream:
        if size + len(chunk) >= limit:
            parts.append(chunk[: limit - size])
            more = size + len(chunk) > limit
            if not more:
                # Exactly at the cap: more follows unless the stream ends here.
                async for extra in stream:
                    if extra:
                        more = True
                        break
            return b"".join(parts), more
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts), False


async def fetch(url: str, settings: FetchSettings, *, signal: AbortSignal | None = None) -> Fetched:
    """GET ``url`` under ``settings``: guarded, bounded, redirects followed by hand.

    :raises FetchError: the URL, an address, the redirects, a timeout or the connection failed
    :raises knightcode.Aborted: ``signal`` was aborted
    """
    import httpx

    timeout = httpx.Timeout(
        connect=settings.connect_timeout,
        read=settings.read_timeout,
        write=settings.read_timeout,
        pool=settings.connect_timeout,
    )
    headers = {
        "User-Agent": settings.user_agent,
        "Accept": "text/html,application/xhtml+xml,text/plain,application/json,"
        "application/pdf;q=0.9,*/*;q=0.8",
    }

    async def run() -> Fetched:
        async with httpx.AsyncClient(
            timeout=timeout,
            headers=headers,
            follow_redirects=False,
            trust_env=False,
            verify=tls_context(),
        ) as client:
            async with asyncio.timeout(settings.total_timeout):
                return await _fetch_chain(client, url, settings)

    try:
        if signal is not None:
            return await signal.guard(run())
        return await run()
    except TimeoutError as error:
        raise FetchError(
            f"fetching {url} took longer than {settings.total_timeout:g} s; gave up"
        ) from error
    except httpx.ConnectTimeout as error:
        raise FetchError(
            f"could not connect to {url} within {settings.connect_timeout:g} s"
        ) from error
    except httpx.ReadTimeout as error:
        raise FetchError(
            f"{url} sent nothing for {settings.read_timeout:g} s (read timeout); gave up"
        ) from error
    except httpx.HTTPError as error:
        raise FetchError(f"fetching {url} failed: {type(error).__name__}: {error}") from error


@dataclass(frozen=True)
class Rendered:
    """A body as the model gets it: text, or an image block, and what it was."""

    kind: str
    text: str
    image: bytes | None = None


def _is_binary(data: bytes) -> bool:
    """Whether ``data`` looks binary (a NUL byte near the start)."""
    return b"\x00" in data[:4096]


def _decode(fetched: Fetched) -> str:
    """The body as text: the declared charset, else UTF-8, bad bytes replaced."""
    encoding = fetched.charset or "utf-8"
    try:
        return fetched.body.decode(encoding, "replace")
    except LookupError:
        return fetched.body.decode("utf-8", "replace")


def render(fetched: Fetched, settings: FetchSettings, *, raw: bool = False) -> Rendered:
    """What the model gets for ``fetched``.

    :param raw: HTML as it came, not extracted
    :raises FetchError: an image the model cannot take, another binary body, a broken PDF
    """
    from .extract import ExtractionError, html_to_markdown, pdf_to_text

    kind = fetched.content_type
    size = format_size(len(fetched.body))
    if kind.startswith("image/"):
        if not settings.accept_images:
            raise FetchError(
                f"{fetched.final_url} is an image ({kind}, {size}); the current model does not "
                "accept images, so it was not returned"
            )
        if fetched.truncated or len(fetched.body) > settings.max_image_bytes:
            raise FetchError(f"{fetched.final_url} is an image too big to return ({kind})")
        return Rendered("image", "", fetched.body)
    if kind == "application/pdf" or fetched.body.startswith(b"%PDF-"):
        if fetched.truncated:
            raise FetchError(
                f"{fetched.final_url} is a PDF larger than the {format_size(settings.max_bytes)} "
                "cap; it cannot be read in part"
            )
        try:
            return Rendered("pdf", pdf_to_text(fetched.body))
        except ExtractionError as error:
            raise FetchError(f"{fetched.final_url}: {error}") from error
    if kind in _HTML_TYPES and not raw:
        return Rendered("html", html_to_markdown(_decode(fetched), fetched.final_url))
    textual = kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith(("+json", "+xml"))
    if (textual or not kind) and not _is_binary(fetched.body):
        return Rendered("text", _decode(fetched))
    if _is_binary(fetched.body) or not textual:
        raise FetchError(
            f"{fetched.final_url} is binary content ({kind or 'no content type'}, {size}); "
            "web_fetch returns text, HTML, JSON and PDF only"
        )
    return Rendered("text", _decode(fetched))


PARAMETERS = FETCH_PARAMETERS


async def web_fetch(
    url: str,
    settings: FetchSettings,
    ctx: ToolContext,
    *,
    raw: bool = False,
) -> ToolResult:
    """Fetch ``url`` and build the tool result (head + scratchpad path when long)."""
    fetched = await fetch(url, settings, signal=ctx.signal)
    if fetched.status >= 400:
        detail = ""
        with contextlib.suppress(FetchError):  # an error page is extracted off the loop too
            shown = await ctx.signal.guard(asyncio.to_thread(render, fetched, settings, raw=raw))
            detail = shown.text.strip()[:500]
        raise FetchError(
            f"HTTP {fetched.status} {fetched.reason} for {fetched.final_url}"
            + (f"\n{detail}" if detail else "")
        )
    # Extraction is CPU work (about a second per MB of HTML): off the event loop, so the UI and
    # other tools keep running.
    rendered = await ctx.signal.guard(asyncio.to_thread(render, fetched, settings, raw=raw))
    details: dict[str, object] = {
        "url": url,
        "finalUrl": fetched.final_url,
        "status": fetched.status,
        "contentType": fetched.content_type,
        "bytes": len(fetched.body),
        "truncated": fetched.truncated,
        "redirects": list(fetched.redirects),
        "kind": rendered.kind,
    }
    if rendered.image is not None:
        return {
            "content": [
                {"type": "text", "text": f"{fetched.final_url} ({fetched.content_type})"},
                {
                    "type": "image",
                    "data": base64.b64encode(rendered.image).decode("ascii"),
                    "mimeType": fetched.content_type,
                },
            ],
            "details": details,
        }
    text = rendered.text
    header = f"URL: {fetched.final_url}\nContent-Type: {fetched.content_type or 'unknown'}\n"
    if fetched.truncated:
        header += (
            f"[The body was cut at the {format_size(settings.max_bytes)} cap; the rest was "
            "not downloaded.]\n"
        )
    configured = settings.scratchpad.directory
    directory = configured or default_scratchpad_dir(ctx)
    spilled = await ctx.signal.guard(
        keep_or_spill(
            text,
            label=fetched.final_url.split("://", 1)[-1],
            backend=ctx.backend,
            directory=directory,
            settings=settings.scratchpad,
            ignore_file=None if configured else workspace_ignore_file(ctx),
        )
    )
    details["chars"] = len(text)
    if spilled is not None:
        details["scratchpad"] = spilled.path
        text = spilled.text
    return {"content": [{"type": "text", "text": header + "\n" + text}], "details": details}


async def fetch_for_tool(
    args: Mapping[str, object], settings: FetchSettings, ctx: ToolContext
) -> ToolResult:
    """The tool's work for one call's arguments (``definitions.web_fetch_definition``)."""
    url = args.get("url")
    if not isinstance(url, str) or not url.strip():
        raise FetchError("give the url to fetch")
    return await web_fetch(url.strip(), settings, ctx, raw=args.get("raw") is True)


def web_fetch_tool(
    settings: FetchSettings | Callable[[ToolContext], FetchSettings] | None = None,
) -> ToolDefinition:
    """The ``web_fetch`` tool definition (see ``definitions.web_fetch_definition``).

    :param settings: fixed settings, or a function of the call's context that returns them (read
        ``tools.json`` there, so edits apply without a restart); None: the defaults
    """
    from .definitions import web_fetch_definition

    return web_fetch_definition(settings)
