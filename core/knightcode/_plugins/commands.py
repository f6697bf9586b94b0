"""Plugin slash commands outside the interactive UI: ``-p "/name args"`` and RPC ``prompt``.

The interactive UI has its own dispatcher (built-in commands first, failures as notices); print,
JSON and RPC modes share this one, so ``/name args`` runs the plugin's handler instead of going
to the model, and a handler that raises becomes an ``extension_error`` record.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._plugins.definitions import CommandDefinition
    from knightcode._plugins.host import PluginHost

__all__ = ["PluginCommand", "find_plugin_command"]


@dataclass(frozen=True)
class PluginCommand:
    """``/name args`` naming a command a plugin registered."""

    name: str
    args: str
    definition: CommandDefinition
    owner: str

    async def run(self, host: PluginHost) -> dict[str, object] | None:
        """Run the handler; None when it succeeded, else the ``extension_error`` record that
        reports its failure (the session goes on either way).
        """
        try:
            assert host.context is not None  # the host was built by create_plugin_host
            result = self.definition.handler(self.args, host.context)
            if inspect.isawaitable(result):
                await result
        except Exception as error:
            from knightcode._plugins.loader import describe_exception

            record = host.record(self.owner)
            return {
                "type": "extension_error",
                "extensionPath": record.source if record else self.owner,
                "event": "command",
                "error": describe_exception(error, record.path if record else None),
            }
        return None


def find_plugin_command(host: PluginHost, text: str) -> PluginCommand | None:
    """The plugin command ``text`` invokes (``/name args``), or None (the text is a prompt)."""
    if not text.startswith("/"):
        return None
    name, _, args = text[1:].partition(" ")
    definition = host.registrations.commands.get(name)
    if definition is None:
        return None
    owner = host.registrations.commands.owner(name) or "?"
    return PluginCommand(name, args, definition, owner)
