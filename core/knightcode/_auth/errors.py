"""The login errors, apart from the flows so that token look-ups import nothing heavy."""

from __future__ import annotations

from knightcode._errors import KnightcodeError

__all__ = ["LoginCancelled", "LoginError"]


class LoginError(KnightcodeError):
    """A login or a token refresh failed; the message says why and what to do."""

    exit_code = 1


class LoginCancelled(LoginError):
    """The user cancelled the login (Escape, Ctrl+C)."""
