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
    from knightcode.errors import ConfigError, KnightcodeError, SettingsError, UsageError
    from knightcode.llm.summary import generate_summary, generate_summary_with_usage
    from knightcode.markers import hookimpl, hookspec
    from knightcode.plugins.combine import Rule
    from knightcode.plugins.context import ExtensionContext, ExtensionUI, HeadlessUI
    from knightcode.plugins.definitions import (
        CommandDefinition,
        FlagDefinition,
        ProviderDefinition,
        ShortcutDefinition,
        ToolDefinition,
    )
    from knightcode.plugins.host import PluginFailure, PluginHost
    from knightcode.plugins.planning import HostOptions, create_plugin_host
    from knightcode.plugins.records import PluginKind, PluginRecord, PluginStatus
    from knightcode.plugins.reload import ReloadReport, reload_extensions, watch
    from knightcode.session.messages import convert_to_llm
    from knightcode.session.serialization import serialize_conversation

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
    "hookimpl": "knightcode.markers",
    "hookspec": "knightcode.markers",
    "KnightcodeError": "knightcode.errors",
    "ConfigError": "knightcode.errors",
    "SettingsError": "knightcode.errors",
    "UsageError": "knightcode.errors",
    "Rule": "knightcode.plugins.combine",
    "ExtensionContext": "knightcode.plugins.context",
    "ExtensionUI": "knightcode.plugins.context",
    "HeadlessUI": "knightcode.plugins.context",
    "CommandDefinition": "knightcode.plugins.definitions",
    "FlagDefinition": "knightcode.plugins.definitions",
    "ProviderDefinition": "knightcode.plugins.definitions",
    "ShortcutDefinition": "knightcode.plugins.definitions",
    "ToolDefinition": "knightcode.plugins.definitions",
    "PluginFailure": "knightcode.plugins.host",
    "PluginHost": "knightcode.plugins.host",
    "HostOptions": "knightcode.plugins.planning",
    "create_plugin_host": "knightcode.plugins.planning",
    "PluginKind": "knightcode.plugins.records",
    "PluginRecord": "knightcode.plugins.records",
    "PluginStatus": "knightcode.plugins.records",
    "ReloadReport": "knightcode.plugins.reload",
    "reload_extensions": "knightcode.plugins.reload",
    "watch": "knightcode.plugins.reload",
    "convert_to_llm": "knightcode.session.messages",
    "serialize_conversation": "knightcode.session.serialization",
    "generate_summary": "knightcode.llm.summary",
    "generate_summary_with_usage": "knightcode.llm.summary",
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
