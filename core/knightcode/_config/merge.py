"""Combining the global and the project ``settings.json`` and finding values in the result.

The files merge *recursively* before any lookup: objects merge key by key at every depth, while
arrays and scalars from the project replace the global value whole. Recursive (rather than
one-level) merging is what lets a project override a single field of one
``compaction.modelOverrides`` entry without restating the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

_MISSING = object()


def merge_settings(base: Mapping[str, object], override: Mapping[str, object]) -> dict[str, object]:
    """``override`` laid over ``base``: a new dict, objects merged key by key at every depth.

    Neither argument is modified; unchanged sub-objects are copied so that the result can be
    changed without touching the inputs.
    """
    merged: dict[str, object] = {}
    for key, value in base.items():
        merged[key] = merge_settings(value, {}) if isinstance(value, dict) else value
    for key, value in override.items():
        current = merged.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            merged[key] = merge_settings(current, value)
        else:
            merged[key] = merge_settings(value, {}) if isinstance(value, dict) else value
    return merged


def lookup(data: Mapping[str, object], parts: Sequence[str], default: object = None) -> object:
    """The value at a key path, or ``default`` when the path is absent or crosses a non-object."""
    current: object = data
    for part in parts:
        if not isinstance(current, dict):
            return default
        current = current.get(part, _MISSING)
        if current is _MISSING:
            return default
    return current


def supplies(data: Mapping[str, object] | None, parts: Sequence[str | int]) -> bool:
    """Whether ``data`` (one file's settings) supplied the merged value at a key path.

    True when the file defines the whole path, and also when it defines a prefix of it with an
    array or scalar: that value replaced the other file's wholesale, so everything below it came
    from this file (``extensions[2]`` comes from whichever file set ``extensions``).
    """
    if data is None:
        return False
    current: object = data
    for part in parts:
        if not isinstance(current, dict):
            return True
        if part not in current:
            return False
        current = current[part]
    return True


def migrate_legacy(data: dict[str, object]) -> dict[str, object]:
    """Rename keys from older versions in one file's settings (in place, and returned).

    ``queueMode`` became ``steeringMode``; an explicit ``steeringMode`` wins over it.
    """
    if "queueMode" in data:
        queue_mode = data.pop("queueMode")
        data.setdefault("steeringMode", queue_mode)
    return data
