"""Requests made with a Claude Pro/Max subscription token (``sk-ant-oat…``) instead of an API key.

Anthropic serves such tokens only to Claude Code: like the reference, the request carries the
token as a bearer token, Claude Code's beta flags, user agent and ``x-app``, and its system prompt
starts with Claude Code's identity line (the user's system prompt follows it). The token is
recognised by its prefix, so one set with ``ANTHROPIC_API_KEY`` or ``--api-key`` works too.
Tools whose names are Claude Code's in another case (``read`` → ``Read``) are sent with Claude
Code's casing and renamed back in the answer, as the reference does.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "IDENTITY",
    "from_claude_code_name",
    "is_oauth_token",
    "oauth_headers",
    "to_claude_code_name",
]

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


# Claude Code's tool names (the reference's list); a tool of ours with one of these names in
# another case is sent with this casing.
_CLAUDE_CODE_TOOLS = {
    name.lower(): name
    for name in (
        "Read",
        "Write",
        "Edit",
        "Bash",
        "Grep",
        "Glob",
        "AskUserQuestion",
        "EnterPlanMode",
        "ExitPlanMode",
        "KillShell",
        "NotebookEdit",
        "Skill",
        "Task",
        "TaskOutput",
        "TodoWrite",
        "WebFetch",
        "WebSearch",
    )
}


def to_claude_code_name(name: str) -> str:
    """``name`` in Claude Code's casing when it is one of Claude Code's tools."""
    return _CLAUDE_CODE_TOOLS.get(name.lower(), name)


def from_claude_code_name(name: str, tools: Sequence[str]) -> str:
    """The name of our tool that ``name`` (as the model called it) stands for."""
    lowered = name.lower()
    return next((tool for tool in tools if tool.lower() == lowered), name)
