"""knightcode: a plugin-first coding agent for the terminal.

This module is the public API for plugins and for programs embedding knightcode; everything
else is private. Names are imported on first use so that ``import knightcode`` stays cheap
(a plugin that only needs :data:`hookimpl` does not pay for the plugin host).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from knightcode._version import __version__

if TYPE_CHECKING:
    from knightcode._errors import ConfigError, KnightcodeError, SettingsError, UsageError
    from knightcode._llm.summary import generate_summary, generate_summary_with_usage
    from knightcode._markers import hookimpl, hookspec
    from knightcode._plugins.combine import Rule
    from knightcode._plugins.context import ExtensionContext, ExtensionUI, HeadlessUI
    from knightcode._plugins.definitions import (
        CommandDefinition,
        FlagDefinition,
        ProviderDefinition,
        ShortcutDefinition,
        ToolDefinition,
    )
    from knightcode._plugins.host import PluginFailure, PluginHost
    from knightcode._plugins.planning import HostOptions, create_plugin_host
    from knightcode._plugins.records import PluginKind, PluginRecord, PluginStatus
    from knightcode._plugins.reload import ReloadReport, reload_extensions, watch
    from knightcode._session.messages import convert_to_llm
    from knightcode._session.serialization import serialize_conversation

__all__ = [
    "CommandDefinition",
    "ConfigError",
    "ExtensionContext",
    "ExtensionUI",
    "FlagDefinition",
    "HeadlessUI",
    "HostOptions",
    "KnightcodeError",
    "PluginFailure",
    "PluginHost",
    "PluginKind",
    "PluginRecord",
    "PluginStatus",
    "ProviderDefinition",
    "ReloadReport",
    "Rule",
    "SettingsError",
    "ShortcutDefinition",
    "ToolDefinition",
    "UsageError",
    "__version__",
    "convert_to_llm",
    "create_plugin_host",
    "generate_summary",
    "generate_summary_with_usage",
    "hookimpl",
    "hookspec",
    "reload_extensions",
    "serialize_conversation",
    "watch",
]

_LOCATIONS = {
    "hookimpl": "knightcode._markers",
    "hookspec": "knightcode._markers",
    "KnightcodeError": "knightcode._errors",
    "ConfigError": "knightcode._errors",
    "SettingsError": "knightcode._errors",
    "UsageError": "knightcode._errors",
    "Rule": "knightcode._plugins.combine",
    "ExtensionContext": "knightcode._plugins.context",
    "ExtensionUI": "knightcode._plugins.context",
    "HeadlessUI": "knightcode._plugins.context",
    "CommandDefinition": "knightcode._plugins.definitions",
    "FlagDefinition": "knightcode._plugins.definitions",
    "ProviderDefinition": "knightcode._plugins.definitions",
    "ShortcutDefinition": "knightcode._plugins.definitions",
    "ToolDefinition": "knightcode._plugins.definitions",
    "PluginFailure": "knightcode._plugins.host",
    "PluginHost": "knightcode._plugins.host",
    "HostOptions": "knightcode._plugins.planning",
    "create_plugin_host": "knightcode._plugins.planning",
    "PluginKind": "knightcode._plugins.records",
    "PluginRecord": "knightcode._plugins.records",
    "PluginStatus": "knightcode._plugins.records",
    "ReloadReport": "knightcode._plugins.reload",
    "reload_extensions": "knightcode._plugins.reload",
    "watch": "knightcode._plugins.reload",
    "convert_to_llm": "knightcode._session.messages",
    "serialize_conversation": "knightcode._session.serialization",
    "generate_summary": "knightcode._llm.summary",
    "generate_summary_with_usage": "knightcode._llm.summary",
}


def __getattr__(name: str) -> Any:
    location = _LOCATIONS.get(name)
    if location is None:
        raise AttributeError(f"module 'knightcode' has no attribute {name!r}")
    value = getattr(import_module(location), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
