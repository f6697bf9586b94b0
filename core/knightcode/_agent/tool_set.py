"""Which tools the model is offered, and which it could be: the session's tool set.

Start-up (``_modes/setup.choose_tools``) decides the *default* active set: ``--tools``, else
settings ``defaultTools`` plus the plugin tools (those with ``default_active``), then settings
``tools.enabled``. During the session a plugin (``/tools``, codemode) changes it with
:meth:`ToolSet.set_active`; those choices are kept as per-tool overrides, so a ``/reload``
(which recomputes the defaults from the reloaded plugins and settings) keeps what the user
switched on or off.

A plugin may also add and remove tools while the session runs (:meth:`ToolSet.add`,
:meth:`ToolSet.remove`: an MCP server whose tool list arrives after start-up). Those changes
survive a ``/reload``, which rebuilds the registered tools but keeps the ones added at run time
and leaves out the ones removed. Like every change here, they apply from the next run: a run in
progress keeps the tools and the system prompt it started with (the dicts are replaced, never
changed in place).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
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
    :param parameters: the JSON schema of its arguments (codemode turns it into a function
        signature)
    """

    name: str
    origin: str
    description: str
    active: bool
    parameters: Mapping[str, object] = field(default_factory=dict, compare=False, repr=False)


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
        # Tools added at run time (name -> definition, origin), and registered tools removed at
        # run time (name -> origin): both outlive ``replace``.
        self._added: dict[str, tuple[ToolDefinition, str]] = {}
        self._removed: dict[str, str] = {}

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
                tool.parameters,
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
        for name, origin in self._removed.items():
            if self._origins.get(name, "core") == origin:
                self._available.pop(name, None)
                self._origins.pop(name, None)
        for name, (definition, origin) in self._added.items():
            self._available[name] = definition
            self._origins[name] = origin
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

    def add(
        self, definitions: Iterable[ToolDefinition], origin: str, *, active: bool = True
    ) -> list[str]:
        """Make these tools available (a name already there gets the new definition and keeps
        whether it is active; a new one is active when ``active``); returns their names.

        :param origin: the plugin they come from (``/tools`` and ``available_tools`` show it)
        """
        added = list(definitions)
        available = dict(self._available)
        names = list(self._active)
        for definition in added:
            name = definition.name
            known = name in available
            available[name] = definition
            self._origins[name] = origin
            self._added[name] = (definition, origin)
            self._removed.pop(name, None)
            if known:
                continue
            on = active
            if on == (name in self._defaults):
                self._overrides.pop(name, None)
            else:
                self._overrides[name] = on
            if on and name not in names:
                names.append(name)
        self._available = available
        self._apply(names)
        return [definition.name for definition in added]

    def remove(self, names: Iterable[str]) -> list[str]:
        """Make these tools unavailable (inactive too); names that are not there are ignored.
        Returns the names removed.
        """
        gone = [name for name in dict.fromkeys(names) if name in self._available]
        if not gone:
            return []
        available = dict(self._available)
        for name in gone:
            del available[name]
            self._removed[name] = self._origins.pop(name, "core")
            self._added.pop(name, None)
            self._overrides.pop(name, None)
        self._available = available
        self._defaults = [name for name in self._defaults if name in available]
        self._apply([name for name in self._active if name in available])
        return gone

    def _apply(self, names: list[str]) -> None:
        self._active = {name: self._available[name] for name in names}
        if self._build_prompt is not None:
            self._system_prompt = self._build_prompt(self._active)
