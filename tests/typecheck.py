"""A runtime check of a value against a type annotation, for the contract tests.

The hook contract is written as annotations (``_hookspecs.py``, the ``TypedDict`` shapes of
``_types``, the result dataclasses); :func:`problems` says where a value the kernel actually passes
departs from them. It knows the annotations the contract uses and refuses any other (a new kind
of annotation must be taught here, not silently accepted):

* ``object`` (anything), ``None``, ``bool``, ``int`` (a bool is not an int), ``float`` (an int
  will do), ``str``, ``Path`` and other classes (``isinstance``);
* ``Literal[...]`` (value and type), unions (``X | None``), ``list[T]``, ``tuple[T, ...]``,
  ``set[T]``, ``dict[K, V]``, ``Sequence[T]``, ``Mapping[K, V]``, ``Callable``;
* ``TypedDict``: required keys present, ``NotRequired`` keys optional, **no undeclared key**, each
  value checked; a union of ``TypedDict`` shapes is resolved by its discriminator (``type``,
  ``role`` or ``op``) so a problem is reported against the shape the value claims to be;
* dataclasses: ``isinstance``, and for knightcode's own, every field against its annotation;
* ``Protocol`` types (``AgentHandle``, ``SessionView``): every member exists (methods callable).

Annotations are resolved with :func:`hints`, which also supplies the names a module imports only
under ``if TYPE_CHECKING:`` (its own declaration of what it needs; :func:`type_checking_names`).
A problem reads ``<path>: <what is wrong>``, the path being how to reach the value from the
argument (``compaction_entry['usage']['cost']``).
"""

from __future__ import annotations

import ast
import collections.abc as abc
import dataclasses
import functools
import importlib
import inspect
import sys
import types
import typing
from pathlib import Path
from typing import Literal, NotRequired, Required, Union, get_args, get_origin, is_typeddict

__all__ = [
    "hints",
    "problems",
    "property_problems",
    "protocol_members",
    "render",
    "returns",
    "type_checking_names",
]

DISCRIMINATORS = ("type", "role", "op")
"""The keys that tell the members of a union of ``TypedDict`` shapes apart."""

_SEQUENCES: dict[object, type] = {
    list: list,
    set: set,
    frozenset: frozenset,
    abc.Sequence: abc.Sequence,
    abc.MutableSequence: abc.MutableSequence,
    abc.Set: abc.Set,
    abc.Iterable: abc.Iterable,
    abc.Collection: abc.Collection,
}
_MAPPINGS: dict[object, type] = {
    dict: dict,
    abc.Mapping: abc.Mapping,
    abc.MutableMapping: abc.MutableMapping,
}
_PROTOCOL_BASES = (object, typing.Protocol, typing.Generic)


# --- resolving annotations ------------------------------------------------------------------


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


@functools.cache
def type_checking_names(module_name: str) -> dict[str, object]:
    """The names ``module_name`` imports only under ``if TYPE_CHECKING:``, imported now."""
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    source = getattr(module, "__file__", None)
    if source is None:
        return {}
    tree = ast.parse(Path(source).read_text(encoding="utf-8"))
    names: dict[str, object] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for statement in ast.walk(node):
            if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
                imported = importlib.import_module(statement.module)
                for alias in statement.names:
                    names[alias.asname or alias.name] = getattr(imported, alias.name)
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    imported = importlib.import_module(alias.name)
                    top = alias.name.partition(".")[0]
                    names[alias.asname or top] = imported if alias.asname else sys.modules[top]
    return names


@functools.cache
def _annotations(owner: object) -> dict[str, object]:
    module_name = getattr(owner, "__module__", None)
    assert isinstance(module_name, str), f"{owner!r} has no module"
    namespace = {**vars(sys.modules[module_name]), **type_checking_names(module_name)}
    return typing.get_type_hints(owner, globalns=namespace, include_extras=True)


def hints(owner: object) -> dict[str, object]:
    """The resolved annotations of a function's parameters, a dataclass or a ``TypedDict``
    (``NotRequired`` kept), with the names its module imports for the type checker only.
    """
    return {name: hint for name, hint in _annotations(owner).items() if name != "return"}


def returns(function: object) -> object:
    """The resolved return annotation of ``function`` (``object`` when it has none)."""
    return _annotations(function).get("return", object)


# --- describing -----------------------------------------------------------------------------


def render(annotation: object) -> str:
    """An annotation as a reader writes it (``list[AgentMessage]``, ``Path | None``)."""
    if annotation is type(None) or annotation is None:
        return "None"
    origin = get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        return " | ".join(render(arg) for arg in get_args(annotation))
    if origin is Literal:
        return "Literal[" + ", ".join(repr(arg) for arg in get_args(annotation)) + "]"
    if origin is not None:
        name = getattr(origin, "__name__", None) or str(origin).replace("typing.", "")
        args = get_args(annotation)
        return f"{name}[{', '.join('...' if a is Ellipsis else render(a) for a in args)}]"
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _describe(value: object) -> str:
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return f"{type(value).__name__} {shown}"


# --- checking -------------------------------------------------------------------------------


def problems(value: object, annotation: object, path: str = "value") -> list[str]:
    """Where ``value`` departs from ``annotation`` (empty: it conforms).

    :raises TypeError: the annotation is of a kind this checker does not know
    """
    return _Checker().check(value, annotation, path)


def property_problems(value: object, cls: type, path: str = "value") -> list[str]:
    """Where the public properties ``cls`` declares, read on ``value``, depart from their
    getters' return annotations (``ctx.agent`` is an ``AgentHandle`` …).
    """
    return _Checker().properties(value, cls, path)


class _Checker:
    """One check; remembers the objects it is inside, so a cycle ends the recursion."""

    def __init__(self) -> None:
        self._inside: set[int] = set()

    def check(self, value: object, annotation: object, path: str) -> list[str]:
        if annotation is object or annotation is typing.Any:
            return []
        if annotation is None or annotation is type(None):
            return [] if value is None else [f"{path}: expected None, got {_describe(value)}"]
        origin = get_origin(annotation)
        args = get_args(annotation)
        if origin in (NotRequired, Required, typing.Annotated):
            return self.check(value, args[0], path)
        if origin is Literal:
            if any(value == arg and type(value) is type(arg) for arg in args):
                return []
            return [f"{path}: expected {render(annotation)}, got {_describe(value)}"]
        if origin is Union or origin is types.UnionType:
            return self._union(value, args, annotation, path)
        if origin in _SEQUENCES:
            return self._items(value, _SEQUENCES[origin], args, annotation, path)
        if origin is tuple:
            return self._tuple(value, args, annotation, path)
        if origin in _MAPPINGS:
            return self._mapping(value, _MAPPINGS[origin], args, annotation, path)
        if origin is abc.Callable or annotation is abc.Callable:
            return (
                [] if callable(value) else [f"{path}: expected a callable, got {_describe(value)}"]
            )
        if isinstance(annotation, typing.TypeVar):
            return []
        if isinstance(annotation, type):
            return self._class(value, annotation, path)
        raise TypeError(f"{path}: the checker does not know the annotation {annotation!r}")

    def _class(self, value: object, cls: type, path: str) -> list[str]:
        if is_typeddict(cls):
            return self._typeddict(value, cls, path)
        if getattr(cls, "_is_protocol", False) and cls is not typing.Protocol:
            return self._protocol(value, cls, path)
        if cls is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif cls is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        else:
            ok = isinstance(value, cls)
        if not ok:
            return [f"{path}: expected {cls.__name__}, got {_describe(value)}"]
        if dataclasses.is_dataclass(cls) and cls.__module__.startswith("knightcode"):
            return self._dataclass(value, cls, path)
        return []

    def _union(
        self, value: object, members: tuple[object, ...], annotation: object, path: str
    ) -> list[str]:
        found = [self.check(value, member, path) for member in members]
        if any(not problem for problem in found):
            return []
        present = [m for m in members if m is not None and m is not type(None)]
        if value is not None and len(present) == 1:  # ``X | None``: what is wrong with the X
            return found[members.index(present[0])]
        if isinstance(value, dict):
            shapes = [m for m in members if isinstance(m, type) and is_typeddict(m)]
            claimed = [shape for shape in shapes if _claims(value, shape)]
            if len(claimed) == 1:
                return found[members.index(claimed[0])]
            if shapes and not claimed:
                keys = {key: value.get(key) for key in DISCRIMINATORS if key in value}
                return [
                    f"{path}: {keys or 'no type/role key'} matches none of "
                    f"{', '.join(shape.__name__ for shape in shapes)}"
                ]
        return [f"{path}: expected {render(annotation)}, got {_describe(value)}"]

    def _items(
        self,
        value: object,
        kind: type,
        args: tuple[object, ...],
        annotation: object,
        path: str,
    ) -> list[str]:
        if not isinstance(value, kind) or (kind is not list and isinstance(value, (str, bytes))):
            return [f"{path}: expected {render(annotation)}, got {_describe(value)}"]
        if not args:
            return []
        out: list[str] = []
        for index, item in enumerate(typing.cast("abc.Iterable[object]", value)):
            out += self.check(item, args[0], f"{path}[{index}]")
        return out

    def _tuple(
        self, value: object, args: tuple[object, ...], annotation: object, path: str
    ) -> list[str]:
        if not isinstance(value, tuple):
            return [f"{path}: expected {render(annotation)}, got {_describe(value)}"]
        if len(args) == 2 and args[1] is Ellipsis:
            args = (args[0],) * len(value)
        if len(args) != len(value):
            return [f"{path}: expected {len(args)} items, got {len(value)}"]
        out: list[str] = []
        for index, (item, arg) in enumerate(zip(value, args, strict=True)):
            out += self.check(item, arg, f"{path}[{index}]")
        return out

    def _mapping(
        self,
        value: object,
        kind: type,
        args: tuple[object, ...],
        annotation: object,
        path: str,
    ) -> list[str]:
        if not isinstance(value, kind):
            return [f"{path}: expected {render(annotation)}, got {_describe(value)}"]
        if not args:
            return []
        out: list[str] = []
        for key, item in typing.cast("abc.Mapping[object, object]", value).items():
            out += self.check(key, args[0], f"{path} key {key!r}")
            out += self.check(item, args[1], f"{path}[{key!r}]")
        return out

    def _typeddict(self, value: object, shape: type, path: str) -> list[str]:
        if not isinstance(value, dict):
            return [f"{path}: expected {shape.__name__} (a dict), got {_describe(value)}"]
        fields = hints(shape)
        total = bool(getattr(shape, "__total__", True))
        out: list[str] = []
        for key, annotation in fields.items():
            origin = get_origin(annotation)
            # Computed from the annotations: on Python 3.11 ``__required_keys__`` is wrong for a
            # module with ``from __future__ import annotations`` (every key counts as required).
            required = origin is Required or (total and origin is not NotRequired)
            if key not in value:
                if required:
                    out.append(f"{path}: {shape.__name__} requires the key {key!r}, missing")
                continue
            out += self.check(value[key], annotation, f"{path}[{key!r}]")
        unknown = sorted((key for key in value if key not in fields), key=repr)
        if unknown:
            out.append(
                f"{path}: {', '.join(map(repr, unknown))} not declared by {shape.__name__} "
                f"(declared: {', '.join(fields)})"
            )
        return out

    def _dataclass(self, value: object, cls: type, path: str) -> list[str]:
        if id(value) in self._inside:
            return []
        self._inside.add(id(value))
        try:
            fields = hints(cls)
            out: list[str] = []
            for field in dataclasses.fields(cls):
                out += self.check(
                    getattr(value, field.name), fields[field.name], f"{path}.{field.name}"
                )
            return out
        finally:
            self._inside.discard(id(value))

    def _protocol(self, value: object, protocol: type, path: str) -> list[str]:
        out: list[str] = []
        for name in sorted(protocol_members(protocol)):
            declared = inspect.getattr_static(protocol, name, None)
            try:
                present = getattr(value, name)
            except AttributeError:
                out.append(f"{path}: {type(value).__name__} lacks {protocol.__name__}.{name}")
                continue
            if isinstance(declared, property):
                out += self._property(present, declared, f"{path}.{name}")
            elif callable(declared) and not callable(present):
                out.append(
                    f"{path}.{name}: {protocol.__name__} declares a method, got "
                    f"{_describe(present)}"
                )
        return out

    def _property(self, value: object, declared: property, path: str) -> list[str]:
        """A property's value against its getter's return annotation (one level: a protocol
        returned by a property is checked for its members, not theirs, so a cycle such as
        ``agent.session`` → ``session.…`` stays shallow).
        """
        if id(value) in self._inside:
            return []
        self._inside.add(id(value))
        try:
            return self.check(value, returns(declared.fget), path)
        finally:
            self._inside.discard(id(value))

    def properties(self, value: object, cls: type, path: str) -> list[str]:
        out: list[str] = []
        for name, declared in sorted(vars(cls).items()):
            if isinstance(declared, property) and not name.startswith("_"):
                out += self._property(getattr(value, name), declared, f"{path}.{name}")
        return out


def protocol_members(protocol: type) -> set[str]:
    """The public attributes, properties and methods a ``Protocol`` declares (its bases' too)."""
    names: set[str] = set()
    for base in protocol.__mro__:
        if base in _PROTOCOL_BASES:
            continue
        names.update(name for name in vars(base) if not name.startswith("_"))
        names.update(
            name for name in getattr(base, "__annotations__", {}) if not name.startswith("_")
        )
    return names


def _claims(value: dict[object, object], shape: type) -> bool:
    """Whether ``value``'s discriminator says it is a ``shape``."""
    fields = hints(shape)
    for key in DISCRIMINATORS:
        annotation = fields.get(key)
        if annotation is not None and get_origin(annotation) is Literal:
            return key in value and value[key] in get_args(annotation)
    return False
