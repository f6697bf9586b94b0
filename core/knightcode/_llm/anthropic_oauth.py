"""Requests made with a Claude Pro/Max subscription token (``sk-ant-oat…``) instead of an API key.

Anthropic serves such tokens only to Claude Code: like the reference, the request carries the
token as a bearer token, Claude Code's beta flags, user agent and ``x-app``, and its system prompt
starts with Claude Code's identity line (the user's system prompt follows it). The token is
recognised by its prefix, so one set with ``ANTHROPIC_API_KEY`` or ``--api-key`` works too.
"""

from __future__ import annotations

__all__ = ["IDENTITY", "is_oauth_token", "oauth_headers"]

IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
CLAUDE_CODE_VERSION = "2.1.2"
_BETAS = "claude-code-20250219,oauth-2025-04-20,fine-grained-tool-streaming-2025-05-14"


def is_oauth_token(key: str | None) -> bool:
    """Whether ``key`` is a subscription token rather than an API key."""
    return key is not None and "sk-ant-oat" in key


def oauth_headers(token: str, thinking: bool) -> dict[str, str]:
    """The credentials and identification headers of a subscription request."""
    betas = _BETAS + (",interleaved-thinking-2025-05-14" if thinking else "")
    return {
        "authorization": f"Bearer {token}",
        "anthropic-beta": betas,
        "anthropic-dangerous-direct-browser-access": "true",
        "user-agent": f"claude-cli/{CLAUDE_CODE_VERSION} (external, cli)",
        "x-app": "cli",
    }
