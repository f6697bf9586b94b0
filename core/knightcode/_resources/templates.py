"""Prompt templates: markdown files that become ``/name`` commands.

``/review src/a.py "the parser"`` replaces itself with the body of ``review.md``, its arguments
substituted: ``$1``…``$9`` (and beyond), ``$@``/``$ARGUMENTS`` (all of them), ``${@:N}`` (from the
Nth on) and ``${@:N:L}`` (L of them from the Nth). Arguments split on blanks, with single or
double quotes grouping words. Substitution is one pass over the template, so an argument that
itself holds ``$1`` is inserted as typed, never substituted again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from knightcode._resources.frontmatter import read_frontmatter, text_field, unreadable

DESCRIPTION_CUT = 60
"""A description taken from the first line is cut to this many characters."""

_COMMAND = re.compile(r"^/(\S+)(?:\s+(.*))?$", re.DOTALL)
_PLACEHOLDER = re.compile(r"\$\{@:(\d+)(?::(\d+))?\}|\$(\d+)|\$ARGUMENTS|\$@")


@dataclass(frozen=True)
class PromptTemplate:
    """One template.

    :param name: the command name (the file name without ``.md``)
    :param description: from the header, else the body's first line
    :param content: the body, header removed
    :param path: the file
    :param source: ``user``, ``project``, ``path``, ``package:<source>`` or ``plugin``
    :param argument_hint: the header's ``argument-hint``, shown in completion
    """

    name: str
    description: str
    content: str
    path: Path
    source: str
    argument_hint: str | None = None


@dataclass
class TemplateLoad:
    """Templates found and the warnings about them."""

    templates: list[PromptTemplate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def parse_command_args(text: str) -> list[str]:
    """Split an argument string on spaces and tabs; quotes (single or double) group words and
    are removed; an unclosed quote runs to the end; an empty argument (``""``) is dropped, as
    the reference does.
    """
    args: list[str] = []
    current: list[str] = []
    quote: str | None = None
    for char in text:
        if quote is not None:
            if char == quote:
                quote = None
            else:
                current.append(char)
        elif char in "\"'":
            quote = char
        elif char in " \t":
            if current:
                args.append("".join(current))
            current = []
        else:
            current.append(char)
    if current:
        args.append("".join(current))
    return args


def substitute_args(content: str, args: Sequence[str]) -> str:
    """``content`` with its placeholders replaced by ``args`` (missing ones become empty)."""

    def replace(match: re.Match[str]) -> str:
        start, length, position = match.group(1), match.group(2), match.group(3)
        if position is not None:
            index = int(position) - 1
            return args[index] if 0 <= index < len(args) else ""
        if start is not None:
            first = max(int(start) - 1, 0)
            last = first + int(length) if length is not None else len(args)
            return " ".join(args[first:last])
        return " ".join(args)

    return _PLACEHOLDER.sub(replace, content)


def load_template_file(path: Path, source: str) -> TemplateLoad:
    """One template file (unreadable: a warning and no template)."""
    result = TemplateLoad()
    try:
        parsed = read_frontmatter(path)
    except OSError as exc:
        result.warnings.append(unreadable(path, exc))
        return result
    description = text_field(parsed.fields, "description") or ""
    if not description:
        first = next((line.strip() for line in parsed.body.splitlines() if line.strip()), "")
        description = first[:DESCRIPTION_CUT] + ("..." if len(first) > DESCRIPTION_CUT else "")
    hint = text_field(parsed.fields, "argument-hint")
    name = path.name.removesuffix(".md")
    result.templates.append(PromptTemplate(name, description, parsed.body, path, source, hint))
    return result


def load_templates_from_dir(directory: Path, source: str) -> TemplateLoad:
    """The templates of :func:`template_files`, by name."""
    result = TemplateLoad()
    for path in template_files(directory):
        one = load_template_file(path, source)
        result.templates += one.templates
        result.warnings += one.warnings
    return result


def template_files(directory: Path) -> list[Path]:
    """The ``*.md`` files directly in ``directory`` (not its subdirectories), hidden ones
    skipped; none when it is missing.
    """
    try:
        paths = sorted(directory.iterdir())
    except OSError:
        return []
    return [
        path
        for path in paths
        if not path.name.startswith(".") and path.suffix == ".md" and path.is_file()
    ]


def split_command(text: str) -> tuple[str, str]:
    """``/name args`` → ``("name", "args")``: the name ends at the first blank or line break."""
    match = _COMMAND.match(text)
    return (match.group(1), match.group(2) or "") if match else ("", "")


def expand_template(text: str, templates: Sequence[PromptTemplate]) -> str | None:
    """The prompt ``/name args`` stands for, or None when ``text`` names no template."""
    name, rest = split_command(text)
    if not name:
        return None
    for template in templates:
        if template.name == name:
            return substitute_args(template.content, parse_command_args(rest))
    return None
