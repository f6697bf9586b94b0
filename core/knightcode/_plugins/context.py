"""The ``ctx`` object every event hook receives.

It is the plugin's window onto the running knightcode: where it runs, its settings, the user
interface (a headless one in print and JSON modes, RPC requests in RPC mode, the terminal in
interactive mode). Later subsystems add to it (the session, the model registry, abort …); plugins
should only use the attributes documented in ``docs/plugin-hooks.md``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from knightcode._config.loading import Settings
    from knightcode._plugins.host import PluginHost


class ExtensionUI(Protocol):
    """Dialogs and notices a plugin can ask for; every method is awaitable."""

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None: ...

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool: ...

    async def input(
        self, title: str, placeholder: str = "", *, timeout: float | None = None
    ) -> str | None: ...

    async def editor(self, title: str, prefill: str = "") -> str | None: ...

    def notify(self, message: str, level: str = "info") -> None: ...

    def set_status(self, key: str, text: str | None) -> None: ...


class HeadlessUI:
    """The UI when nobody can answer: dialogs resolve to their documented defaults at once
    (``None`` for a choice or text, ``False`` for a confirmation) and notices go to stderr.
    """

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None:
        return None

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        return False

    async def input(
        self, title: str, placeholder: str = "", *, timeout: float | None = None
    ) -> str | None:
        return None

    async def editor(self, title: str, prefill: str = "") -> str | None:
        return None

    def notify(self, message: str, level: str = "info") -> None:
        # stdout belongs to the JSON/RPC stream; people read stderr.
        print(f"{level}: {message}", file=sys.stderr)

    def set_status(self, key: str, text: str | None) -> None:
        return None


@dataclass
class ExtensionContext:
    """What a hook handler can see of knightcode.

    :param cwd: the working directory of the session
    :param agent_dir: the agent directory (``~/.knightcode/_agent`` unless overridden)
    :param host: the plugin host (flags: ``ctx.host.flag_value("name")``)
    :param settings: the merged settings (``None`` before they are loaded)
    :param ui: dialogs and notices, see :class:`ExtensionUI`
    :param has_ui: whether a person can answer dialogs
    :param extras: attributes added by later subsystems, reachable as ``ctx.<name>``
    """

    cwd: Path
    agent_dir: Path
    host: PluginHost | None = None
    settings: Settings | None = None
    ui: ExtensionUI = field(default_factory=HeadlessUI)
    has_ui: bool = False
    extras: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not fields: look them up among the extras so
        # subsystems can attach e.g. ``ctx.session`` without the kernel knowing them.
        extras = self.__dict__.get("extras", {})
        if name in extras:
            return extras[name]
        raise AttributeError(name)
