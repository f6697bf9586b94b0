"""Where the login flows send the user and their requests, and the test override.

``KNIGHTCODE_OAUTH_TEST_BASE`` (for tests only; deliberately an environment variable and not a
settings key, so that a project's files can never redirect a login) sends every request of the
flows to a local fake authorization server: ``https://claude.ai/oauth/authorize`` becomes
``<base>/claude.ai/oauth/authorize``. Under it the local callback servers listen on a free port
instead of the providers' fixed ones, so parallel tests do not collide.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

__all__ = ["TEST_BASE_ENV", "callback_port", "endpoint"]

TEST_BASE_ENV = "KNIGHTCODE_OAUTH_TEST_BASE"


def _test_base() -> str | None:
    base = os.environ.get(TEST_BASE_ENV, "").strip()
    return base.rstrip("/") or None


def endpoint(url: str) -> str:
    """``url``, or its stand-in on the fake server when the test override is set."""
    base = _test_base()
    if base is None:
        return url
    parts = urlsplit(url)
    query = f"?{parts.query}" if parts.query else ""
    return f"{base}/{parts.netloc}{parts.path}{query}"


def callback_port(port: int) -> int:
    """The provider's registered callback port, or 0 (any free port) under the test override."""
    return 0 if _test_base() is not None else port
