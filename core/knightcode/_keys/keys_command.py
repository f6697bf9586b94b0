"""``/keys``: the keys doctor's analysis inside the UI, without taking the terminal over.

The UI owns the terminal, so it cannot be asked which protocol it speaks; what is known from the
environment and tmux (``extended-keys``, the prefix, screen, the terminal program) is enough to
report the bindings tmux or screen cannot deliver and the keys they or the terminal take.
``knightcode keys doctor`` does the full check and writes the proposals.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from knightcode._keys.doctor import active_bindings, analyse, proposed_file_values
from knightcode._keys.probe import detect
from knightcode._keys.report import report_lines

if TYPE_CHECKING:
    from rich.console import RenderableType

    from knightcode._keys.registry import KeyRegistry

__all__ = ["keys_report"]


async def keys_report(registry: KeyRegistry) -> RenderableType:
    """The report as a renderable (tmux is asked in a thread: it may take a moment)."""
    from rich.text import Text

    terminal = await asyncio.to_thread(detect, dict(os.environ))
    bindings = active_bindings(registry)
    findings = analyse(bindings, terminal)
    current = {b.owner: registry.keys_for(b.owner) for b in bindings if not b.is_plugin}
    values = proposed_file_values(findings, current)
    lines = report_lines(terminal, findings, values, registry.path)
    lines += [
        "",
        "knightcode keys doctor (in a shell) also asks the terminal itself, shows the id of each "
        "key pressed and writes the proposals with --write.",
    ]
    text = Text("Keys", style="bold")
    text.append("\n" + "\n".join(lines), style="")
    return text
