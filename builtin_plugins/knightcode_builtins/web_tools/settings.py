"""tools.json as each tool needs it, read on every call so an edit applies without a restart.

The file's sections (``config.py``) are the user's view; the tools take their own frozen settings
(``fetch.FetchSettings``). This module is the one place that turns one into the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode import ToolContext

    from .config import ToolsConfig
    from .fetch import FetchSettings

__all__ = ["agent_dir_of", "fetch_settings_for", "tools_config_for"]


def agent_dir_of(ctx: ToolContext) -> Path | None:
    """The agent directory of the session the call belongs to (None outside a session)."""
    if ctx.context is not None:
        return ctx.context.agent_dir
    return ctx.agent_dir


def tools_config_for(ctx: ToolContext) -> ToolsConfig:
    """tools.json of the call's agent directory; the defaults outside a session.

    :raises ToolsConfigError: the file is broken (the tool reports the message, which names the
        file and the key)
    """
    from .config import ToolsConfig, load_tools_config  # on the first call: see definitions.py

    agent_dir = agent_dir_of(ctx)
    return load_tools_config(agent_dir) if agent_dir is not None else ToolsConfig()


def _model_takes_images(ctx: ToolContext) -> bool:
    agent = ctx.context.agent if ctx.context is not None else None
    return agent is not None and "image" in agent.model.input


def fetch_settings_for(ctx: ToolContext) -> FetchSettings:
    """``web_fetch``'s settings for this call: tools.json's ``fetch`` and ``scratchpad``
    sections, and images returned as images only when the active model takes them.
    """
    from .fetch import FetchSettings
    from .scratchpad import ScratchpadSettings

    config = tools_config_for(ctx)
    fetch, pad = config.fetch, config.scratchpad
    return FetchSettings(
        connect_timeout=fetch.connect_timeout,
        read_timeout=fetch.read_timeout,
        total_timeout=fetch.total_timeout,
        max_redirects=fetch.max_redirects,
        max_bytes=fetch.max_bytes,
        allow_private=fetch.allow_private,
        allow_hosts=frozenset(fetch.allow_hosts),
        accept_images=_model_takes_images(ctx),
        scratchpad=ScratchpadSettings(pad.inline_chars, pad.head_chars, pad.directory),
    )
