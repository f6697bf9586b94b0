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
    offline: bool = False
    """``--offline``: set in the environment before plugins load (they may check it then)."""
    mode: str | None = None
    """``--mode`` as given, or ``text`` for ``-p``/``--print`` (None: interactive)."""
    wants_help: bool = False
    """``-h``/``--help`` or ``--version``: the answer is printed on stdout."""

    @property
    def owns_stdout(self) -> bool:
        """Whether stdout carries only knightcode's output (the answer, JSONL or RPC), so
        plugins must not write there.
        """
        return self.mode in ("text", "json", "rpc") and not self.wants_help


def prescan(args: list[str]) -> Prescan:
    """Pick ``-e/--extension PATH`` (repeatable), ``--no-extensions``, ``--approve``, the mode
    (``--mode``, ``-p``) and ``--help`` out of ``args``.
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
        elif arg == "--mode" and index + 1 < len(args):
            found.mode = args[index + 1]
            index += 2
            continue
        elif arg.startswith("--mode="):
            found.mode = arg.split("=", 1)[1]
        elif arg in ("-p", "--print"):
            found.mode = found.mode or "text"
        elif arg in ("-h", "--help", "-v", "--version"):
            found.wants_help = True
        elif arg in ("-ne", "--no-extensions"):
            found.no_extensions = True
        elif arg in ("-nt", "-nbt", "-nc", "-ns", "-np"):
            pass  # multi-letter short options, not clusters of switches
        elif arg.startswith("-") and not arg.startswith("--") and arg[1:].isalpha():
            # A cluster of short switches, ``-cp``: click reads it as ``-c -p``.
            if "p" in arg:
                found.mode = found.mode or "text"
            found.wants_help = found.wants_help or "h" in arg
        elif arg == "--offline":
            found.offline = True
        elif arg == "--approve":
            found.approve = True
        index += 1
    return found
