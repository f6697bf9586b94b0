"""Is the classifier gate on? tools.json's ``gate`` section, read again only when the file changes.

The gate's hooks run for every tool call, so the question must cost next to nothing when the
answer is no: one ``stat`` of tools.json, compared with the last one seen. The file is parsed
again only when its modification time, size or inode changed (an atomic rewrite by
``knightcode tools`` always changes the inode).

Only the ``gate`` section is read here: a wrong value elsewhere in tools.json (a bad
``search.count``) is the web tools' business and does not switch the gate off or on. A file that
is not JSON at all, or a broken ``gate`` section, may hide an enabled gate: that fails closed
(:class:`GateUnreadable`): every tool call is blocked, with that message, until the file is fixed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .config import FILE_NAME, ToolsConfigError, _Reader, read_tools_json
from .gate_config import GateConfig, parse_gate

__all__ = ["GateUnreadable", "gate_of"]


class GateUnreadable(ToolsConfigError):
    """tools.json cannot be read well enough to tell whether the gate is on."""


@dataclass(frozen=True)
class _Seen:
    path: str
    signature: tuple[int, int, int, int] | None  # mtime_ns, ctime_ns, size, inode; None: no file
    gate: GateConfig | GateUnreadable | None


_cache: dict[Path, _Seen] = {}  # by agent directory


def gate_of(agent_dir: Path) -> GateConfig | None:
    """The gate's settings when it is enabled in ``agent_dir``'s tools.json; None when it is off
    (or there is no tools.json).

    :raises GateUnreadable: tools.json is broken where the gate is concerned (the message names
        the file and the key, and says that tool calls are blocked until it is fixed)
    """
    seen = _cache.get(agent_dir)
    path = seen.path if seen is not None else os.path.join(agent_dir, FILE_NAME)
    try:
        info = os.stat(path)
        signature: tuple[int, int, int, int] | None = (
            info.st_mtime_ns,
            info.st_ctime_ns,
            info.st_size,
            info.st_ino,
        )
    except OSError:
        signature = None
    if seen is None or seen.signature != signature:
        gate = _read(Path(path)) if signature is not None else None
        seen = _cache[agent_dir] = _Seen(path, signature, gate)
    if isinstance(seen.gate, GateUnreadable):
        raise seen.gate
    return seen.gate


def _read(path: Path) -> GateConfig | GateUnreadable | None:
    try:
        data = read_tools_json(path)
        if data is None:
            return None
        gate = parse_gate(_Reader(data, str(path), "").section("gate"))
    except ToolsConfigError as exc:
        return GateUnreadable(
            f"{exc} — the web-tools classifier gate cannot tell whether it is on, so it blocks "
            "every tool call until tools.json is fixed"
        )
    return gate if gate.enabled else None
