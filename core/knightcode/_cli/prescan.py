"""A first look at the command line, before plugins are loaded.

Plugins can add flags, so the real parser can only be built after loading them — but which
plugins to load depends on ``-e``, ``--no-extensions`` and ``--approve``. This scan finds just
those, tolerating every option it does not know.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Prescan:
    """The plugin-related options of a command line."""

    extension_paths: list[Path] = field(default_factory=list)
    no_extensions: bool = False
    approve: bool = False


def prescan(args: list[str]) -> Prescan:
    """Pick ``-e/--extension PATH`` (repeatable), ``--no-extensions`` and ``--approve`` out of
    ``args``.
    """
    found = Prescan()
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            break
        if arg in ("-e", "--extension") and index + 1 < len(args):
            found.extension_paths.append(Path(args[index + 1]).expanduser())
            index += 2
            continue
        if arg.startswith("--extension="):
            found.extension_paths.append(Path(arg.split("=", 1)[1]).expanduser())
        elif arg.startswith("-e") and len(arg) > 2 and not arg.startswith("--"):
            found.extension_paths.append(Path(arg[2:]).expanduser())
        elif arg == "--no-extensions":
            found.no_extensions = True
        elif arg == "--approve":
            found.approve = True
        index += 1
    return found
