"""The start-up header: key hints, what was loaded (context files, plugins and their errors),
and the model — printed once into the scrollback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import RenderableType

    from knightcode._agent.session import AgentSession
    from knightcode._keys.registry import KeyRegistry
    from knightcode._plugins.host import PluginHost

__all__ = ["build_header"]

HINTS = (
    ("app.interrupt", "interrupt"),
    ("app.clear", "clear"),
    ("app.exit", "exit (empty editor)"),
    ("app.model.select", "model"),
    ("app.thinking.cycle", "thinking"),
    ("app.tools.expand", "tool output"),
    ("tui.input.newLine", "new line"),
)


def build_header(
    agent: AgentSession,
    host: PluginHost,
    registry: KeyRegistry,
    context_files: list[Path],
    warnings: list[str],
) -> RenderableType:
    from knightcode import __version__
    from knightcode._plugins.records import PluginStatus

    lines: list[Text] = [Text.assemble(("knightcode", "bold cyan"), (f" v{__version__}", "dim"))]
    hints = Text(style="dim")
    for action, label in HINTS:
        keys = registry.keys_for(action)
        if keys:
            if hints:
                hints.append(" · ")
            hints.append(keys[0], style="bold")
            hints.append(f" {label}")
    hints.append(" · / commands · @ files · ! shell")
    lines.append(hints)
    if context_files:
        lines.append(Text("Context: " + ", ".join(str(p) for p in context_files), style="dim"))
    resources = agent.resources
    if resources is not None:
        for label, names in (
            ("Skills", [skill.name for skill in resources.skills]),
            ("Prompts", [f"/{template.name}" for template in resources.templates]),
        ):
            if names:
                lines.append(Text(f"{label}: {_listed(names)}", style="dim"))
    loaded = [r.name for r in host.records if r.status is PluginStatus.LOADED]
    if loaded:
        lines.append(Text("Plugins: " + ", ".join(loaded), style="dim"))
    for record in host.records:
        if record.status is PluginStatus.FAILED:
            lines.append(Text(f"Plugin {record.name} failed: {record.error}", style="red"))
    for warning in [*warnings, *registry.warnings]:
        lines.append(Text(f"Warning: {warning}", style="yellow"))
    for conflict in registry.conflicts:
        lines.append(Text(f"Key conflict: {conflict}", style="yellow"))
    from knightcode._modes.interactive.app import NO_MODEL_HELP
    from knightcode._modes.setup import NO_MODEL_API

    model = agent.model
    if model.api == NO_MODEL_API:
        lines.append(Text(NO_MODEL_HELP, style="yellow"))
    else:
        lines.append(Text(f"Model: {model.ref}", style="dim"))
    lines.append(Text(""))
    return Group(*lines)


LISTED_NAMES = 12
"""The most skill or template names the header shows (hundreds would push everything away)."""


def _listed(names: list[str]) -> str:
    """``a, b, c`` — the first :data:`LISTED_NAMES` and how many more."""
    shown = ", ".join(names[:LISTED_NAMES])
    more = len(names) - LISTED_NAMES
    return f"{shown} (+{more} more)" if more > 0 else shown
