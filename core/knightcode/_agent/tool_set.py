"""Which tools the model is offered, and which it could be: the session's tool set.

Start-up (``_modes/setup.choose_tools``) decides the *default* active set: ``--tools``, else
settings ``defaultTools`` plus every plugin tool, then settings ``tools.enabled``. During the
session a plugin (``/tools``, codemode) changes it with :meth:`ToolSet.set_active`; those
choices are kept as per-tool overrides, so a ``/reload`` (which recomputes the defaults from the
reloaded plugins and settings) keeps what the user switched on or off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._plugins.definitions import ToolDefinition

__all__ = ["ToolInfo", "ToolSet"]

PromptBuilder = Callable[[dict[str, "ToolDefinition"]], str]
"""The system prompt for a given set of active tools (it lists them)."""


@dataclass(frozen=True)
class ToolInfo:
    """One tool the session could offer the model.

    :param name: what the model calls it
    :param origin: ``core`` for a built-in tool, else the plugin that registered it
        (``builtin:web-tools``, ``my-plugin``)
    :param description: the tool's description (what the model reads)
    :param active: whether the model is offered it now
    """

    name: str
    origin: str
    description: str
    active: bool


class ToolSet:
    """The available tools, the active ones among them, and the system prompt that lists them.

    :param available: every tool by name (built-ins and plugin tools, a plugin tool replacing
        a built-in of the same name), in the order they are listed
    :param origins: tool name -> plugin name; a name not in it is a core tool
    :param active: the default active names (an order the prompt keeps)
    :param system_prompt: the prompt for ``active``, already built
    :param build_prompt: rebuilds the prompt when the active set changes (None: the prompt is
        kept as it is, for sessions assembled without one, e.g. in tests)
    """

    def __init__(
        self,
        available: Mapping[str, ToolDefinition],
        origins: Mapping[str, str],
        active: Iterable[str],
        system_prompt: str,
        build_prompt: PromptBuilder | None = None,
    ) -> None:
        self._available = dict(available)
        self._origins = dict(origins)
        self._defaults = [name for name in active if name in self._available]
        self._overrides: dict[str, bool] = {}
        self._active = {name: self._available[name] for name in self._defaults}
        self._system_prompt = system_prompt
        self._build_prompt = build_prompt

    @property
    def active(self) -> dict[str, ToolDefinition]:
        """The tools the model is offered, by name."""
        return self._active

    @property
    def available(self) -> Mapping[str, ToolDefinition]:
        """Every tool the session could offer, active or not."""
        return self._available

    @property
    def system_prompt(self) -> str:
        """The system prompt listing the active tools."""
        return self._system_prompt

    def describe(self) -> list[ToolInfo]:
        """Every available tool with its origin and whether it is active."""
        return [
            ToolInfo(
                name,
                self._origins.get(name, "core"),
                tool.description,
                name in self._active,
            )
            for name, tool in self._available.items()
        ]

    def set_active(self, names: Iterable[str]) -> None:
        """Offer exactly ``names`` (in this order) from the next request on.

        :raises ValueError: a name is not an available tool (nothing changes)
        """
        wanted = list(dict.fromkeys(names))
        unknown = [name for name in wanted if name not in self._available]
        if unknown:
            raise ValueError(
                f"unknown tool {', '.join(map(repr, unknown))}; "
                f"available: {', '.join(sorted(self._available))}"
            )
        chosen = set(wanted)
        for name in self._available:
            on = name in chosen
            if on == (name in self._defaults):
                self._overrides.pop(name, None)
            else:
                self._overrides[name] = on
        self._apply(wanted)

    def replace(
        self,
        available: Mapping[str, ToolDefinition],
        origins: Mapping[str, str],
        defaults: Iterable[str],
        build_prompt: PromptBuilder | None,
        system_prompt: str | None = None,
    ) -> None:
        """New available tools and defaults (``/reload``), the session's own choices kept.

        :param system_prompt: the prompt for exactly ``defaults`` when the caller built it
            already; rebuilt when the overrides change the set
        """
        self._available = dict(available)
        self._origins = dict(origins)
        self._defaults = [name for name in defaults if name in self._available]
        self._build_prompt = build_prompt
        names = [name for name in self._defaults if self._overrides.get(name, True)]
        names += [
            name
            for name, on in self._overrides.items()
            if on and name in self._available and name not in names
        ]
        if system_prompt is not None and names == self._defaults:
            self._active = {name: self._available[name] for name in names}
            self._system_prompt = system_prompt
        else:
            self._apply(names)

    def _apply(self, names: list[str]) -> None:
        self._active = {name: self._available[name] for name in names}
        if self._build_prompt is not None:
            self._system_prompt = self._build_prompt(self._active)
