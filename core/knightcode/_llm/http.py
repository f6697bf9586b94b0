"""The HTTP client the model clients share.

Building an ``httpx.AsyncClient`` loads the CA bundle into a TLS context first (20-50 ms, most of
a local run's start-up), even when every request goes to a plain ``http://`` endpoint — a local
llama.cpp router, Ollama, a proxy on loopback. Here plain HTTP goes through a transport that
never needs TLS, and the verified TLS transport is built on the first ``https://`` request.
With a proxy (configured, or from the ``*_PROXY`` environment variables) httpx's own set-up is
kept unchanged: it routes by proxy, and that is where its logic lives.
"""

from __future__ import annotations

import os

import httpx

__all__ = ["make_client"]

_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")


class _PlainFirstTransport(httpx.AsyncBaseTransport):
    """Sends ``http://`` requests without a TLS context; builds the TLS transport on demand."""

    def __init__(self) -> None:
        # verify=False only skips loading certificates: plain HTTP never uses them.
        self._plain = httpx.AsyncHTTPTransport(verify=False)
        self._tls: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme == "http":
            return await self._plain.handle_async_request(request)
        if self._tls is None:
            self._tls = httpx.AsyncHTTPTransport()  # verified, as httpx's default
        return await self._tls.handle_async_request(request)

    async def aclose(self) -> None:
        await self._plain.aclose()
        if self._tls is not None:
            await self._tls.aclose()


def _proxy_from_environment() -> bool:
    return any(os.environ.get(name) or os.environ.get(name.upper()) for name in _PROXY_VARIABLES)


def make_client(proxy: str | None = None) -> httpx.AsyncClient:
    """A client for model requests (``proxy``: settings ``httpProxy``)."""
    if proxy or _proxy_from_environment():
        return httpx.AsyncClient(proxy=proxy)
    return httpx.AsyncClient(transport=_PlainFirstTransport())
