"""What plugins registered through the ``register_*`` hooks, deduplicated, with owners."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from knightcode._plugins.definitions import (
    REGISTRATION_KINDS,
    CommandDefinition,
    Definition,
    FlagDefinition,
    ProviderDefinition,
    ShortcutDefinition,
    ToolDefinition,
    key_of,
)

T = TypeVar("T")

FLAG_NAME = re.compile(r"[a-z0-9][a-z0-9-]*\Z")


@dataclass(frozen=True)
class Registered(Generic[T]):
    """A definition and the name of the plugin that registered it."""

    definition: T
    owner: str


class NamedRegistry(Generic[T]):
    """Definitions of one kind by name; the first registration of a name wins."""

    def __init__(self) -> None:
        self._items: dict[str, Registered[T]] = {}

    def add(self, definition: T, owner: str) -> str | None:
        """Add a definition; returns a conflict message when the name is already taken."""
        name = key_of(definition)
        existing = self._items.get(name)
        if existing is not None:
            return (
                f"{owner} registers {name!r}, already registered by {existing.owner}; "
                "keeping the first"
            )
        self._items[name] = Registered(definition, owner)
        return None

    def get(self, name: str) -> T | None:
        item = self._items.get(name)
        return item.definition if item else None

    def owner(self, name: str) -> str | None:
        """Which plugin registered ``name``."""
        item = self._items.get(name)
        return item.owner if item else None

    def __iter__(self) -> Iterator[Registered[T]]:
        return iter(self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def names(self) -> list[str]:
        return list(self._items)


@dataclass
class Registrations:
    """Everything registered by the loaded plugins, in load order."""

    tools: NamedRegistry[ToolDefinition] = field(default_factory=NamedRegistry)
    commands: NamedRegistry[CommandDefinition] = field(default_factory=NamedRegistry)
    providers: NamedRegistry[ProviderDefinition] = field(default_factory=NamedRegistry)
    flags: NamedRegistry[FlagDefinition] = field(default_factory=NamedRegistry)
    shortcuts: NamedRegistry[ShortcutDefinition] = field(default_factory=NamedRegistry)
    conflicts: list[str] = field(default_factory=list)

    def add(self, definition: Definition, owner: str) -> str | None:
        """File a definition in the registry of its kind; returns a conflict message when the
        name is already taken.
        """
        if isinstance(definition, ToolDefinition):
            return self.tools.add(definition, owner)
        if isinstance(definition, CommandDefinition):
            return self.commands.add(definition, owner)
        if isinstance(definition, ProviderDefinition):
            return self.providers.add(definition, owner)
        if isinstance(definition, FlagDefinition):
            return self.flags.add(definition, owner)
        return self.shortcuts.add(definition, owner)


def build_definition(hook: str, args: tuple[object, ...], kwargs: dict[str, object]) -> Definition:
    """Turn what a plugin passed to ``register(...)`` into a definition object.

    Accepts the definition object itself, or its fields as keyword arguments; anything else is a
    mistake in the plugin, reported with the fields the definition takes.
    """
    kind = REGISTRATION_KINDS[hook]
    if len(args) == 1 and not kwargs and isinstance(args[0], kind):
        return args[0]
    if args:
        raise TypeError(
            f"{hook}: register() takes a {kind.__name__} or keyword arguments, not {args!r}"
        )
    factory: Callable[..., Definition] = kind  # the fields arrive as keywords, checked here
    try:
        definition = factory(**kwargs)
    except TypeError as error:
        raise TypeError(f"{hook}: {error}".replace("__init__()", kind.__name__)) from None
    raw_name = key_of(definition)
    if not raw_name:
        raise ValueError(f"{hook}: a {kind.__name__} needs a non-empty name")
    if isinstance(definition, FlagDefinition):
        if not FLAG_NAME.match(definition.name):
            raise ValueError(
                f"flag name {definition.name!r} must be lower-case letters, digits and dashes, "
                "without leading dashes"
            )
        if definition.type not in ("boolean", "string"):
            raise ValueError(
                f"flag --{definition.name}: type must be 'boolean' or 'string', "
                f"not {definition.type!r}"
            )
    return definition
