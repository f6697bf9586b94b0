"""The built-in themes, ``dark`` and ``light``: theme files shipped in the package (so they
show the format and validate against the published schema like any user's).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._modes.interactive.render.theme import Theme
    from knightcode._themes.loader import ThemeSpec

__all__ = ["BUILTIN_NAMES", "builtin_path", "builtin_spec", "builtin_theme"]

BUILTIN_NAMES = ("dark", "light")
_DIR = Path(__file__).parent / "builtin"


def builtin_path(name: str) -> Path:
    """The file of built-in theme ``name``."""
    return _DIR / f"{name}.json"


@cache
def builtin_spec(name: str) -> ThemeSpec:
    """Built-in theme ``name``, validated (a broken built-in is a bug: it raises)."""
    from knightcode._themes.loader import load_theme_file

    return load_theme_file(builtin_path(name))


@cache
def builtin_theme(name: str) -> Theme:
    """Built-in theme ``name`` as the renderers' :class:`Theme`."""
    from knightcode._themes.build import build_theme

    return build_theme(builtin_spec(name))
