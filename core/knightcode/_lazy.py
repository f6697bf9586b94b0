"""Module attributes loaded on first use (PEP 562), so importing a package stays cheap."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module

__all__ = ["lazy_attributes"]


def lazy_attributes(module_name: str, locations: Mapping[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` that imports ``name`` from ``locations[name]`` (a module path)
    the first time it is asked for, and keeps it in the module so later look-ups skip it.
    """

    def __getattr__(name: str) -> object:
        location = locations.get(name)
        if location is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        value = getattr(import_module(location), name)
        sys.modules[module_name].__dict__[name] = value
        return value

    return __getattr__
