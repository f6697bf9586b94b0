"""One TLS context for every request of the web tools.

Building a context loads the CA bundle, about 25 ms here: most of what a fresh
``httpx.AsyncClient`` costs. Each fetch still gets its own client (its redirects are pinned to the
addresses that were checked, and nothing is shared between calls), but they share the context,
which is read-only once made.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl

__all__ = ["tls_context"]


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The verifying TLS context (httpx's defaults: certifi's CA bundle), made once."""
    import httpx

    return httpx.create_ssl_context()
