"""Reading Python source for the generated docs: docstrings, class members and type aliases.

Everything is read from the source text (``ast`` and ``tokenize``), not from the imported
objects, so annotations appear exactly as written (``list[SessionEntry]``, not a resolved
``typing`` object) and comments on ``TypedDict`` fields can serve as their descriptions.
``scripts/hook_docs.py`` turns what is read here into ``docs/plugin-hooks.md``.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import io
import re
import textwrap
import tokenize
import typing
from dataclasses import dataclass, field
from types import ModuleType
from typing import Literal

__all__ = [
    "AliasInfo",
    "ClassInfo",
    "Docstring",
    "Field",
    "Member",
    "parse_docstring",
    "read_alias",
    "read_class",
    "rst_to_md",
    "segment",
]

_FIELD = re.compile(
    r"^:(?P<kind>param|ivar|returns|return|raises)(?: (?P<name>[\w.]+))?:\s*(?P<text>.*)$"
)
_VERSION = re.compile(r"^\.\. versionadded:: (?P<version>\S+)\s*$")
_ROLE = re.compile(r":[a-z]+:`~?(?P<target>[^`]+)`")
_LITERAL = re.compile(r"``(?P<code>[^`]+?)``")


@dataclass(frozen=True)
class Docstring:
    """A reST docstring split into the parts the docs use.

    :ivar summary: the first paragraph, on one line
    :ivar body: the paragraphs before the first field (markdown, line breaks kept)
    :ivar params: ``:param x:`` and ``:ivar x:`` texts by name, each on one line
    :ivar returns: the ``:returns:`` text, or None
    :ivar raises: the ``:raises X:`` texts by exception name
    :ivar version_added: the ``.. versionadded::`` version, or None
    """

    summary: str = ""
    body: str = ""
    params: dict[str, str] = field(default_factory=dict)
    returns: str | None = None
    raises: dict[str, str] = field(default_factory=dict)
    version_added: str | None = None


def rst_to_md(text: str) -> str:
    """Inline reST as markdown: ````code```` and ``:role:`~a.b.Name``` become ```code```."""

    def role(match: re.Match[str]) -> str:
        target = match.group("target")
        shown = target.rsplit(".", 1)[-1] if match.group(0).count("~") else target
        return f"`{shown}`"

    return _LITERAL.sub(lambda m: f"`{m.group('code')}`", _ROLE.sub(role, text))


def _join(lines: list[str]) -> str:
    return " ".join(line.strip() for line in lines if line.strip())


def parse_docstring(text: str | None) -> Docstring:
    """Split a docstring (as ``inspect.getdoc`` or ``ast.get_docstring`` return it)."""
    if not text:
        return Docstring()
    lines = inspect.cleandoc(text).splitlines()
    first_field = next(
        (i for i, line in enumerate(lines) if _FIELD.match(line) or _VERSION.match(line)),
        len(lines),
    )
    prose, fields = lines[:first_field], lines[first_field:]
    blank = next((i for i, line in enumerate(prose) if not line.strip()), len(prose))
    summary = rst_to_md(_join(prose[:blank]))
    body = rst_to_md("\n".join(prose[blank:]).strip())
    params: dict[str, str] = {}
    raises: dict[str, str] = {}
    returns: str | None = None
    version: str | None = None
    current: list[str] | None = None
    target: tuple[str, str | None] | None = None

    def close() -> None:
        nonlocal returns
        if target is None or current is None:
            return
        kind, name = target
        joined = rst_to_md(_join(current))
        if kind in ("param", "ivar") and name:
            params[name] = joined
        elif kind == "raises" and name:
            raises[name] = joined
        elif kind in ("returns", "return"):
            returns = joined

    for line in fields:
        match = _FIELD.match(line)
        version_match = _VERSION.match(line)
        if match or version_match:
            close()
            target, current = None, None
        if match:
            target = (match.group("kind"), match.group("name"))
            current = [match.group("text")]
        elif version_match:
            version = version_match.group("version")
        elif current is not None and line.strip():
            current.append(line)
    close()
    return Docstring(summary, body, params, returns, raises, version)


def segment(source: str, node: ast.AST) -> str:
    """The source text of ``node`` on one line (continuation lines joined)."""
    text = ast.get_source_segment(source, node) or ast.unparse(node)
    text = re.sub(r"\s*\n\s*", " ", text)
    return text.replace("( ", "(").replace("[ ", "[").replace(" )", ")").replace(" ]", "]")


@dataclass(frozen=True)
class Field:
    """A field of a ``TypedDict`` or a dataclass.

    :ivar name: the field name
    :ivar annotation: its type as written (``NotRequired[...]`` removed)
    :ivar optional: a ``NotRequired`` key of a ``TypedDict``
    :ivar default: a dataclass field's default as written, or None
    :ivar doc: its description, or ""
    """

    name: str
    annotation: str
    optional: bool = False
    default: str | None = None
    doc: str = ""


@dataclass(frozen=True)
class Member:
    """A public method or property of a class.

    :ivar name: the member name
    :ivar kind: ``"property"`` or ``"method"``
    :ivar parameters: the parameters after ``self``, as written
    :ivar returns: the return annotation as written, or ""
    :ivar is_async: an ``async def``
    :ivar doc: the docstring
    """

    name: str
    kind: Literal["property", "method"]
    parameters: str
    returns: str
    is_async: bool
    doc: Docstring


ClassKind = Literal["typeddict", "dataclass", "protocol", "class"]


@dataclass(frozen=True)
class ClassInfo:
    """What the docs show of a class.

    :ivar name: the class name
    :ivar kind: ``typeddict``, ``dataclass``, ``protocol`` or ``class``
    :ivar doc: its docstring
    :ivar fields: ``TypedDict`` keys or dataclass fields, in order
    :ivar members: public methods and properties, in order
    :ivar bases: the base classes as written
    """

    name: str
    kind: ClassKind
    doc: Docstring
    fields: list[Field]
    members: list[Member]
    bases: list[str]


@dataclass(frozen=True)
class AliasInfo:
    """A module-level type alias (``SessionEntry = MessageEntry | ...``).

    :ivar name: the alias name
    :ivar value: its value as written
    :ivar doc: the string literal under it, if any
    """

    name: str
    value: str
    doc: Docstring


def _comments(source: str) -> dict[int, str]:
    """Line number (1-based) -> the text of the comment ending that line."""
    found: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = token.string.lstrip("#").strip()
    return found


def _kind(cls: type) -> ClassKind:
    if typing.is_typeddict(cls):
        return "typeddict"
    if dataclasses.is_dataclass(cls):
        return "dataclass"
    if getattr(cls, "_is_protocol", False):
        return "protocol"
    return "class"


def _default(source: str, value: ast.expr) -> str:
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "field"
    ):
        for keyword in value.keywords:
            if keyword.arg == "default_factory":
                return f"{segment(source, keyword.value)}()"
            if keyword.arg == "default":
                return segment(source, keyword.value)
    return segment(source, value)


def _parameters(source: str, arguments: ast.arguments) -> str:
    """``a: int, b: str = "x", *, c: bool = False`` without ``self``."""
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
    defaults += arguments.defaults
    parts: list[str] = []

    def one(arg: ast.arg, default: ast.expr | None) -> str:
        text = arg.arg
        if arg.annotation is not None:
            text += f": {segment(source, arg.annotation)}"
            if default is not None:
                text += f" = {segment(source, default)}"
        elif default is not None:
            text += f"={segment(source, default)}"
        return text

    for index, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        if index == 0 and arg.arg in ("self", "cls"):
            continue
        parts.append(one(arg, default))
        if arguments.posonlyargs and arg is arguments.posonlyargs[-1]:
            parts.append("/")
    if arguments.vararg is not None:
        parts.append(f"*{one(arguments.vararg, None)}")
    elif arguments.kwonlyargs:
        parts.append("*")
    for arg, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        parts.append(one(arg, kw_default))
    if arguments.kwarg is not None:
        parts.append(f"**{one(arguments.kwarg, None)}")
    return ", ".join(parts)


def _is_property(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)


def _public(name: str) -> bool:
    return not name.startswith("_") or name == "__call__"


def read_class(cls: type) -> ClassInfo:
    """Read ``cls`` from its module's source."""
    source = textwrap.dedent(inspect.getsource(cls))
    node = ast.parse(source).body[0]
    if not isinstance(node, ast.ClassDef):
        raise TypeError(f"{cls.__name__}: not a class definition")
    comments = _comments(source)
    doc = parse_docstring(ast.get_docstring(node))
    fields: list[Field] = []
    members: list[Member] = []
    body = node.body
    for index, item in enumerate(body):
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            annotation = segment(source, item.annotation)
            optional = annotation.startswith("NotRequired[")
            if optional:
                annotation = annotation.removeprefix("NotRequired[")[:-1]
            following = body[index + 1] if index + 1 < len(body) else None
            attribute_doc = (
                following.value.value
                if isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
                else None
            )
            name = item.target.id
            text = doc.params.get(name) or (
                rst_to_md(_join(inspect.cleandoc(attribute_doc).splitlines()))
                if attribute_doc
                else comments.get(item.end_lineno or item.lineno, "")
            )
            default = _default(source, item.value) if item.value is not None else None
            fields.append(Field(name, annotation, optional, default, text))
        elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public(item.name):
            if any(
                isinstance(d, ast.Attribute) and d.attr == "setter" for d in item.decorator_list
            ):
                continue
            members.append(
                Member(
                    item.name,
                    "property" if _is_property(item) else "method",
                    _parameters(source, item.args),
                    segment(source, item.returns) if item.returns is not None else "",
                    isinstance(item, ast.AsyncFunctionDef),
                    parse_docstring(ast.get_docstring(item)),
                )
            )
    bases = [segment(source, base) for base in node.bases]
    return ClassInfo(cls.__name__, _kind(cls), doc, fields, members, bases)


def read_alias(module: ModuleType, name: str) -> AliasInfo:
    """Read the module-level assignment ``name = ...`` and the string literal under it."""
    source = inspect.getsource(module)
    body = ast.parse(source).body
    for index, node in enumerate(body):
        targets = (
            [node.target]
            if isinstance(node, ast.AnnAssign)
            else node.targets
            if isinstance(node, ast.Assign)
            else []
        )
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if value is None or not any(isinstance(t, ast.Name) and t.id == name for t in targets):
            continue
        following = body[index + 1] if index + 1 < len(body) else None
        text = (
            following.value.value
            if isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
            else None
        )
        return AliasInfo(name, segment(source, value), parse_docstring(text))
    raise LookupError(f"{module.__name__}.{name}: no module-level assignment")
