"""Reading a theme file: JSON with ``name``, optional ``vars`` and ``colors`` (every required
token of :mod:`.tokens`), validated so that each mistake is named by file and token.

A colour is ``"#rrggbb"``, an xterm palette index ``0`` to ``255``, ``""`` (the terminal's own
colour) or the name of a ``vars`` entry (which may name another one). Every problem of a file is
collected, not just the first, so one edit fixes them all; a file with problems is reported and
not used (the caller falls back to the default theme).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from knightcode._errors import KnightcodeError
from knightcode._themes.tokens import OPTIONAL, REQUIRED

__all__ = ["ColourValue", "ThemeFileError", "ThemeSpec", "load_theme_file", "parse_theme"]

ColourValue = str | int
"""A resolved colour: ``"#rrggbb"``, a palette index, or ``""`` for the terminal default."""

_HEX = re.compile(r"#[0-9a-fA-F]{6}")
_TOP_LEVEL = frozenset({"$schema", "name", "vars", "colors", "export"})
_EXPORT = frozenset({"pageBg", "cardBg", "infoBg"})
_VALUE_HELP = '"#rrggbb", 0-255, "" or a name from vars'


class ThemeFileError(KnightcodeError):
    """A theme file that cannot be used, with every problem found in it.

    :param source: the file (or ``builtin:<name>``)
    :param problems: one line each, naming the token (``colors.accent: ...``)
    """

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__(f"{source}: " + "; ".join(problems))


@dataclass(frozen=True)
class ThemeSpec:
    """A valid theme file, its variables resolved.

    :param name: the theme's name (what setting ``theme`` selects)
    :param colours: every token it defines, resolved to a colour
    :param source: where it came from: a path, or ``builtin:<name>``
    """

    name: str
    colours: dict[str, ColourValue]
    source: str


def load_theme_file(path: Path) -> ThemeSpec:
    """Read and validate ``path``; raises :class:`ThemeFileError` (never a bare traceback)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ThemeFileError(str(path), [f"cannot be read: {error}"]) from None
    try:
        data: object = json.loads(text)
    except json.JSONDecodeError as error:
        problem = f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        raise ThemeFileError(str(path), [problem]) from None
    return parse_theme(data, str(path))


def parse_theme(data: object, source: str) -> ThemeSpec:
    """Validate a theme file's parsed JSON; raises :class:`ThemeFileError` naming each token."""
    if not isinstance(data, dict):
        raise ThemeFileError(source, ["a theme file is a JSON object"])
    problems = [f"{key}: unknown field" for key in data if key not in _TOP_LEVEL]
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append("name: required, a non-empty string")
    variables = _mapping(data, "vars", problems)
    colours = _mapping(data, "colors", problems)
    _check_export(data.get("export"), problems)
    resolved: dict[str, ColourValue] = {}
    for token, value in colours.items():
        if token not in REQUIRED and token not in OPTIONAL:
            problems.append(f"colors.{token}: unknown token")
            continue
        colour = _resolve(value, variables, f"colors.{token}", problems, ())
        if colour is not None:
            resolved[token] = colour
    missing = sorted(REQUIRED - colours.keys())
    if missing:
        problems.append(f"colors: missing required token{'s' * (len(missing) > 1)} "
                        + ", ".join(missing))  # fmt: skip
    if problems or not isinstance(name, str):
        raise ThemeFileError(source, problems)
    return ThemeSpec(name.strip(), resolved, source)


def _mapping(data: dict[str, object], key: str, problems: list[str]) -> dict[str, object]:
    value = data.get(key, {} if key == "vars" else None)
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items()}
    problems.append(f"{key}: required, an object" if value is None else f"{key}: not an object")
    return {}


def _check_export(value: object, problems: list[str]) -> None:
    """The reference's HTML export colours: accepted (knightcode has no HTML export yet)."""
    if value is None:
        return
    if not isinstance(value, dict):
        problems.append("export: not an object")
        return
    for key, colour in value.items():
        if key not in _EXPORT:
            problems.append(f"export.{key}: unknown token")
        elif not _literal(colour) and not isinstance(colour, str):
            problems.append(f"export.{key}: bad colour value {json.dumps(colour)} "
                            f"(use {_VALUE_HELP})")  # fmt: skip


def _literal(value: object) -> bool:
    """A colour written out: ``"#rrggbb"``, ``""`` or a palette index."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0 <= value <= 255
    return isinstance(value, str) and (value == "" or _HEX.fullmatch(value) is not None)


def _resolve(
    value: object,
    variables: dict[str, object],
    where: str,
    problems: list[str],
    seen: tuple[str, ...],
) -> ColourValue | None:
    """``value`` as a colour, following variables; a problem (named ``where``) gives None."""
    if _literal(value):
        assert isinstance(value, str | int)
        return value.lower() if isinstance(value, str) else value
    if isinstance(value, str) and not value.startswith("#"):
        if value in seen:
            chain = " -> ".join((*seen, value))
            problems.append(f"{where}: variables refer to each other in a loop ({chain})")
            return None
        if value not in variables:
            problems.append(f'{where}: undefined variable "{value}" (not in vars)')
            return None
        return _resolve(variables[value], variables, where, problems, (*seen, value))
    shown = json.dumps(value)
    via = f" (through vars.{seen[-1]})" if seen else ""
    problems.append(f"{where}: bad colour value {shown}{via}; use {_VALUE_HELP}")
    return None
