"""A small declarative validator for knightcode's JSON files (``settings.json``, ``models.json``).

A file's shape is a tree of :class:`Section` classes, each declaring its keys as :class:`Field`
attributes: ``max_retries = Field("maxRetries", COUNT, 3)`` reads the JSON key ``maxRetries``,
checks it with ``COUNT``, defaults to 3 and is read back as the typed attribute
``section.max_retries``.

Why not pydantic: start-up time. Every ``knightcode -p`` run reads these files, and importing
pydantic and building the settings and models.json models took about 70 ms of it:
``bench.agent_stream``'s start -> first message_update went from 253 ms to 183 ms when they moved
here (``python -c pass``: 19 ms). This module and its tables load in about a millisecond. It does
what those models did and no more:

- fields are checked in the order they are declared, and the first problem is raised as
  :class:`~knightcode._config.values.InvalidSetting` with its JSON key path
  (``providers.local.models[0].contextWindow``);
- keys no field declares are kept (:attr:`Section.extra`), rejected, or ignored, as the section
  says; a rejected key is reported only after every declared field passed;
- ``null`` is a value only where the spec is :func:`nullable`;
- only the camelCase JSON names are read, as by the raw readers in ``loading`` and
  ``compaction_settings`` (the pydantic models also took snake_case names; nothing relied on it,
  and a snake_case key in models.json is now an unknown key with a "did you mean" hint).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import EllipsisType
from typing import ClassVar, Generic, Literal, Self, TypeVar, cast, overload

from knightcode._config.values import InvalidSetting, describe

KeyPath = tuple[str | int, ...]
"""Where a value is in its file: JSON keys, and list positions as ints."""

T = TypeVar("T")
S = TypeVar("S", bound="Section")

UnknownKeys = Literal["keep", "reject", "ignore"]


class Spec(Generic[T]):
    """How one JSON value becomes a checked Python value of type ``T``.

    Invariant in ``T`` on purpose: ``Field("a", COUNT, "x")`` is a type error, not a field
    of type ``object``.
    """

    __slots__ = ()

    def parse(self, value: object, path: KeyPath) -> T:
        """The value for the attribute.

        :raises InvalidSetting: the first problem, at ``path`` or below it
        """
        raise NotImplementedError


def expected_object(value: object) -> str:
    """The problem with a value that should have been a JSON object."""
    return f"expected an object, got {describe(value)}"


class Checked(Spec[T]):
    """A value taken as it is once ``check`` (one of :mod:`knightcode._config.values`'s
    ``check_*`` functions, or alike) finds no problem; ``T`` is the type that check guarantees.
    """

    __slots__ = ("check",)

    def __init__(self, check: Callable[[object], str | None]) -> None:
        self.check = check

    def parse(self, value: object, path: KeyPath) -> T:
        problem = self.check(value)
        if problem is not None:
            raise InvalidSetting(path, problem)
        return cast(T, value)


class _Nullable(Spec[T | None]):
    __slots__ = ("spec",)

    def __init__(self, spec: Spec[T]) -> None:
        self.spec = spec

    def parse(self, value: object, path: KeyPath) -> T | None:
        return None if value is None else self.spec.parse(value, path)


def nullable(spec: Spec[T]) -> Spec[T | None]:
    """``spec``, or ``null`` (an Optional field: ``null`` means "not set")."""
    return _Nullable(spec)


class MapOf(Spec[dict[str, T]]):
    """A JSON object with keys of the user's choosing, each value following ``spec``."""

    __slots__ = ("spec",)

    def __init__(self, spec: Spec[T]) -> None:
        self.spec = spec

    def parse(self, value: object, path: KeyPath) -> dict[str, T]:
        if not isinstance(value, dict):
            raise InvalidSetting(path, expected_object(value))
        return {key: self.spec.parse(item, (*path, key)) for key, item in value.items()}


class ListOf(Spec[list[T]]):
    """A JSON array whose items each follow ``spec``."""

    __slots__ = ("spec",)

    def __init__(self, spec: Spec[T]) -> None:
        self.spec = spec

    def parse(self, value: object, path: KeyPath) -> list[T]:
        if not isinstance(value, list):
            raise InvalidSetting(path, f"expected a list, got {describe(value)}")
        return [self.spec.parse(item, (*path, index)) for index, item in enumerate(value)]


class Field(Generic[T]):
    """One key of a :class:`Section`: its JSON name, its spec, and its value when absent.

    Give ``default`` for an immutable default, ``factory`` for a fresh list, dict or section per
    instance, neither for a required key. As a class attribute it types the instance attribute of
    the same name (the parsed value lives in the instance ``__dict__``, which Python reads first).
    """

    __slots__ = ("default", "factory", "key", "name", "spec")

    @overload
    def __init__(self, key: str, spec: Spec[T], default: T) -> None: ...
    @overload
    def __init__(self, key: str, spec: Spec[T], *, factory: Callable[[], T]) -> None: ...
    @overload
    def __init__(self, key: str, spec: Spec[T]) -> None: ...
    def __init__(
        self,
        key: str,
        spec: Spec[T],
        default: T | EllipsisType = ...,
        *,
        factory: Callable[[], T] | None = None,
    ) -> None:
        if isinstance(default, (list, dict, Section)):
            raise TypeError(f"{key}: a mutable default would be shared; pass factory=")
        self.key = key
        self.spec = spec
        self.default = default
        self.factory = factory
        self.name = key

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def absent(self, path: KeyPath) -> T:
        """The value when the key is not in the file.

        :raises InvalidSetting: the key is required
        """
        if self.factory is not None:
            return self.factory()
        if isinstance(self.default, EllipsisType):
            raise InvalidSetting(path, "required")
        return self.default

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...
    @overload
    def __get__(self, instance: Section, owner: type) -> T: ...
    def __get__(self, instance: Section | None, owner: type) -> Self | T:
        if instance is None:
            return self
        raise AttributeError(self.name)  # only for an instance built without parse() or __init__


class Section:
    """A JSON object with declared keys; subclasses list their :class:`Field` attributes in the
    order they are checked and set :attr:`unknown_keys`.

    ``Cls()`` has every default (and raises for a required key); ``Cls.parse(data)`` checks data.
    """

    fields: ClassVar[tuple[Field[object], ...]] = ()
    keys: ClassVar[frozenset[str]] = frozenset()
    unknown_keys: ClassVar[UnknownKeys] = "keep"
    """What an undeclared key means: ``keep`` it in :attr:`extra`, ``reject`` the file, ``ignore``
    it."""

    extra: dict[str, object]
    """The undeclared keys and their values, as in the file (empty unless ``unknown_keys`` is
    ``keep``): a plugin's own settings, say."""

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        own = tuple(value for value in vars(cls).values() if isinstance(value, Field))
        for field in own:
            if field.name == "extra" or hasattr(Section, field.name):
                raise TypeError(f"{cls.__name__}.{field.name} would hide Section.{field.name}")
        cls.fields = (*cls.fields, *own)
        cls.keys = frozenset(field.key for field in cls.fields)

    def __init__(self) -> None:
        self._fill({}, ())

    @classmethod
    def parse(cls, value: object, path: KeyPath = ()) -> Self:
        """A section from a JSON object.

        :raises InvalidSetting: the first problem, in declaration order, then undeclared keys
        """
        if not isinstance(value, Mapping):
            raise InvalidSetting(path, expected_object(value))
        section = cls.__new__(cls)
        section._fill(value, path)
        return section

    @classmethod
    def unknown_key_problem(cls, key: str) -> str:
        """What to tell the user about an undeclared ``key`` when ``unknown_keys`` is ``reject``."""
        return "unknown key"

    def _fill(self, data: Mapping[str, object], path: KeyPath) -> None:
        values = self.__dict__
        for field in self.fields:
            key = field.key
            if key in data:
                values[field.name] = field.spec.parse(data[key], (*path, key))
            else:
                values[field.name] = field.absent((*path, key))
        unknown = [key for key in data if key not in self.keys]
        if unknown and self.unknown_keys == "reject":
            raise InvalidSetting((*path, unknown[0]), self.unknown_key_problem(unknown[0]))
        keep = self.unknown_keys == "keep"
        self.extra = {key: data[key] for key in unknown} if keep else {}

    def copy(self) -> Self:
        """A shallow copy, to change some attributes of."""
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        return clone

    def to_json(self) -> dict[str, object]:
        """The declared fields under their JSON names (values as they are, not converted)."""
        return {field.key: self.__dict__[field.name] for field in self.fields}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.__dict__ == self.__dict__

    def __repr__(self) -> str:
        shown = ", ".join(f"{field.name}={self.__dict__[field.name]!r}" for field in self.fields)
        return f"{type(self).__name__}({shown})"


class SectionOf(Spec[S]):
    """A nested JSON object, checked by the :class:`Section` class ``cls``."""

    __slots__ = ("cls",)

    def __init__(self, cls: type[S]) -> None:
        self.cls = cls

    def parse(self, value: object, path: KeyPath) -> S:
        return self.cls.parse(value, path)


def nested(key: str, cls: type[S]) -> Field[S]:
    """A field holding a nested section, all defaults when the key is absent."""
    return Field(key, SectionOf(cls), factory=cls)
