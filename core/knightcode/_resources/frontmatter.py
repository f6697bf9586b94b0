"""The ``---``-fenced YAML header of skill and template files.

Only the subset these files use is understood — ``key: value`` pairs with plain, quoted or block
(``|``/``>``) values, and nested blocks (``metadata:``) kept as raw text — so no YAML library is
needed at start-up, where every skill file is read. The parser is lenient on purpose: a header it
cannot make sense of yields what it could read, and the file's validation says what is missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

FrontmatterValue = str | bool
"""A value: text, or a YAML ``true``/``false``."""

_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*))?\s*$")


@dataclass
class Frontmatter:
    """A parsed file: its header fields (in file order) and the body after the header."""

    fields: dict[str, FrontmatterValue] = field(default_factory=dict)
    body: str = ""
    error: str | None = None
    """Why part of the header could not be read (e.g. ``"invalid frontmatter at line 3"``)."""


def _scalar(raw: str) -> FrontmatterValue:
    """A one-line value: quotes removed, ``true``/``false`` as booleans, a ``#`` comment off."""
    text = raw.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        inner = text[1:-1]
        return inner.replace("''", "'") if text[0] == "'" else inner.replace('\\"', '"')
    text = re.sub(r"\s+#.*$", "", text)
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    return text


def _block(lines: list[str], style: str) -> str:
    """An indented block: ``|`` keeps the line breaks, ``>`` (and plain text) folds them."""
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    kept = [line[cut:] if line.strip() else "" for line in lines]
    if style.startswith("|"):
        return "\n".join(kept).strip("\n")
    paragraphs = "\n".join(kept).strip().split("\n\n")
    return "\n".join(" ".join(part.split()) for part in paragraphs)


def _parse_header(header: str) -> tuple[dict[str, FrontmatterValue], str | None]:
    fields: dict[str, FrontmatterValue] = {}
    error: str | None = None
    lines = header.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        match = _KEY.match(line)
        index += 1
        if match is None:
            if error is None and line.strip() and not line.lstrip().startswith("#"):
                # Line numbers count from the file's first line, the opening ``---``.
                error = f"invalid frontmatter at line {index + 1}: {line.strip()[:40]!r}"
            continue
        key, value = match.group(1), (match.group(2) or "").strip()
        nested: list[str] = []
        while index < len(lines) and (not lines[index].strip() or lines[index][:1] in " \t-"):
            nested.append(lines[index])
            index += 1
        if value in ("", "|", ">", "|-", ">-", "|+", ">+"):
            fields[key] = _block(nested, value or "|")
        elif nested and value[0] not in "\"'":
            # A plain value continued on indented lines: YAML folds them into one line.
            fields[key] = _block([value, *nested], ">")
        else:
            fields[key] = _scalar(value)
    return fields, error


def parse_frontmatter(text: str) -> Frontmatter:
    """Split ``text`` into its header fields and body; no header (or no closing ``---``)
    means no fields and the whole text as body.
    """
    normalized = text.replace("\r\n", "\n").lstrip("\ufeff")
    if not normalized.startswith("---"):
        return Frontmatter({}, normalized)
    end = normalized.find("\n---", 3)
    if end == -1:
        return Frontmatter({}, normalized)
    header = normalized[3:end].lstrip(" \t").removeprefix("\n")
    rest = normalized[end + 4 :]
    # The closing fence ends its line; whatever follows on it is not body.
    newline = rest.find("\n")
    body = "" if newline == -1 else rest[newline + 1 :]
    fields, error = _parse_header(header)
    return Frontmatter(fields, body.strip(), error)


def text_field(fields: dict[str, FrontmatterValue], key: str) -> str | None:
    """A field as text (a boolean written where text was meant reads as its YAML spelling)."""
    value = fields.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def read_frontmatter(path: Path) -> Frontmatter:
    """``path`` parsed (undecodable bytes replaced, so a stray byte never hides a resource).

    :raises OSError: the file cannot be read
    """
    return parse_frontmatter(path.read_bytes().decode("utf-8", errors="replace"))


def unreadable(path: Path, error: OSError) -> str:
    """The warning for a resource file that cannot be read."""
    return f"{path}: cannot read: {error.strerror or error}"
