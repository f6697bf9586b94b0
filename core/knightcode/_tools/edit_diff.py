"""Matching and applying ``edit`` replacements, and the numbered diff shown for an edit.

Everything here works on LF-normalised text without a BOM; ``edit.py`` strips and restores those.
The error texts are the reference's, because models have learned to react to them.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import pairwise

from knightcode._tools.errors import ToolError

__all__ = [
    "Edit",
    "apply_edits",
    "detect_line_ending",
    "fuzzy_find",
    "generate_diff",
    "normalize_for_fuzzy_match",
    "normalize_to_lf",
    "restore_line_endings",
    "strip_bom",
]

# What JavaScript's trimEnd() strips (str.rstrip() would also take \x1c-\x1f and \x85).
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_FUZZY_CHARS = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),  # smart single quotes
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),  # smart double quotes
        **dict.fromkeys(
            "\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"
        ),  # hyphens, dashes, minus
        # special spaces: no-break, U+2002-U+200A, narrow no-break, medium math, ideographic
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)


@dataclass(frozen=True)
class Edit:
    """One replacement: ``old_text`` must occur exactly once in the original file."""

    old_text: str
    new_text: str


def detect_line_ending(content: str) -> str:
    r"""``"\r\n"`` when the first line break is CRLF, else ``"\n"``."""
    lf = content.find("\n")
    if lf == -1:
        return "\n"
    crlf = content.find("\r\n")
    return "\r\n" if crlf != -1 and crlf < lf else "\n"


def normalize_to_lf(text: str) -> str:
    """CRLF and lone CR become LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def restore_line_endings(text: str, ending: str) -> str:
    """Turn LF back into ``ending``."""
    return text.replace("\n", "\r\n") if ending == "\r\n" else text


def strip_bom(content: str) -> tuple[str, str]:
    """``(bom, text)``: models never include the invisible BOM in ``oldText``."""
    return ("\ufeff", content[1:]) if content.startswith("\ufeff") else ("", content)


def normalize_for_fuzzy_match(text: str) -> str:
    """NFKC, no trailing whitespace per line, ASCII quotes and hyphens, plain spaces."""
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(line.rstrip(_JS_WHITESPACE) for line in text.split("\n"))
    return text.translate(_FUZZY_CHARS)


@dataclass(frozen=True)
class _Match:
    index: int
    length: int
    fuzzy: bool


def fuzzy_find(content: str, old_text: str) -> _Match | None:
    """Where ``old_text`` is in ``content``: an exact match first, else a match of the fuzzy
    normalisations (then ``index`` refers to the normalised content).
    """
    exact = content.find(old_text)
    if exact != -1:
        return _Match(exact, len(old_text), False)
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    index = normalize_for_fuzzy_match(content).find(fuzzy_old)
    return _Match(index, len(fuzzy_old), True) if index != -1 else None


def _count(content: str, old_text: str) -> int:
    # Occurrences are counted in fuzzy space so "a  \n" and "a\n" count as the same text.
    return normalize_for_fuzzy_match(content).count(normalize_for_fuzzy_match(old_text))


def _not_found(path: str, index: int, many: bool) -> ToolError:
    if many:
        return ToolError(
            f"Could not find edits[{index}] in {path}. The oldText must match exactly including "
            "all whitespace and newlines."
        )
    return ToolError(
        f"Could not find the exact text in {path}. The old text must match exactly including "
        "all whitespace and newlines."
    )


def _not_unique(path: str, index: int, many: bool, occurrences: int) -> ToolError:
    if many:
        return ToolError(
            f"Found {occurrences} occurrences of edits[{index}] in {path}. Each oldText must be "
            "unique. Please provide more context to make it unique."
        )
    return ToolError(
        f"Found {occurrences} occurrences of the text in {path}. The text must be unique. "
        "Please provide more context to make it unique."
    )


def _unchanged(path: str, many: bool) -> ToolError:
    if many:
        return ToolError(f"No changes made to {path}. The replacements produced identical content.")
    return ToolError(
        f"No changes made to {path}. The replacement produced identical content. This might "
        "indicate an issue with special characters or the text not existing as expected."
    )


def apply_edits(content: str, edits: list[Edit], path: str) -> tuple[str, str]:
    """Apply all edits to LF-normalised ``content``; returns ``(base, new)``.

    Every edit is matched against the original, never against the result of another edit, then
    they are applied back to front so offsets stay valid. When any edit needs the fuzzy match the
    whole operation runs on the normalised content (``base`` is then the normalised original).

    :raises ToolError: empty ``oldText``, not found, not unique, overlapping, or no change
    """
    edits = [Edit(normalize_to_lf(e.old_text), normalize_to_lf(e.new_text)) for e in edits]
    many = len(edits) > 1
    for i, edit in enumerate(edits):
        if not edit.old_text:
            prefix = f"edits[{i}]." if many else ""
            raise ToolError(f"{prefix}oldText must not be empty in {path}.")
    needs_fuzzy = any((m := fuzzy_find(content, e.old_text)) is not None and m.fuzzy for e in edits)
    base = normalize_for_fuzzy_match(content) if needs_fuzzy else content
    matches: list[tuple[int, int, int, str]] = []  # (index, length, edit number, new text)
    for i, edit in enumerate(edits):
        match = fuzzy_find(base, edit.old_text)
        if match is None:
            raise _not_found(path, i, many)
        occurrences = _count(base, edit.old_text)
        if occurrences > 1:
            raise _not_unique(path, i, many, occurrences)
        matches.append((match.index, match.length, i, edit.new_text))
    matches.sort(key=lambda m: m[0])
    for previous, current in pairwise(matches):
        if previous[0] + previous[1] > current[0]:
            raise ToolError(
                f"edits[{previous[2]}] and edits[{current[2]}] overlap in {path}. "
                "Merge them into one edit or target disjoint regions."
            )
    new = base
    for index, length, _, new_text in reversed(matches):
        new = new[:index] + new_text + new[index + length :]
    if new == base:
        raise _unchanged(path, many)
    return base, new


def _tokens(text: str) -> list[str]:
    r"""Lines with their ``\n`` (the last one without, if unterminated), as jsdiff's diffLines
    splits them.
    """
    pieces = text.split("\n")
    tokens = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        tokens.append(pieces[-1])
    return tokens


def _line_parts(old: str, new: str) -> list[tuple[str, str]]:
    """``[(kind, text)]`` with kind ``"="``, ``"-"`` or ``"+"``, removals before additions."""
    a, b = _tokens(old), _tokens(new)
    # Edits are local: trimming the common head and tail keeps SequenceMatcher's quadratic
    # worst case away from large files.
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    parts: list[tuple[str, list[str]]] = []

    def add(kind: str, lines: list[str]) -> None:
        if not lines:
            return
        if parts and parts[-1][0] == kind:
            parts[-1][1].extend(lines)
        else:
            parts.append((kind, list(lines)))

    add("=", a[:head])
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, mid_a, mid_b, autojunk=False).get_opcodes():
        if tag == "equal":
            add("=", mid_a[i1:i2])
        else:
            add("-", mid_a[i1:i2])
            add("+", mid_b[j1:j2])
    add("=", a[len(a) - tail :])
    return [(kind, "".join(lines)) for kind, lines in parts]


def generate_diff(old: str, new: str, context_lines: int = 4) -> tuple[str, int | None]:
    """The reference's display diff: ``+NN text``, ``-NN text``, `` NN text`` lines, ``...`` for
    skipped context, numbers padded to the widest line number. Returns ``(diff,
    first_changed_line)`` where the line number is in the new file.
    """
    parts = _line_parts(old, new)
    width = len(str(max(len(old.split("\n")), len(new.split("\n")))))
    out: list[str] = []
    old_no = new_no = 1
    last_was_change = False
    first_changed: int | None = None
    gap = f" {'':>{width}} ..."

    def context(lines: list[str]) -> None:
        nonlocal old_no, new_no
        for line in lines:
            out.append(f" {old_no:>{width}} {line}")
            old_no += 1
            new_no += 1

    for i, (kind, value) in enumerate(parts):
        raw = value.split("\n")
        if raw[-1] == "":
            raw.pop()
        if kind != "=":
            if first_changed is None:
                first_changed = new_no
            for line in raw:
                if kind == "+":
                    out.append(f"+{new_no:>{width}} {line}")
                    new_no += 1
                else:
                    out.append(f"-{old_no:>{width}} {line}")
                    old_no += 1
            last_was_change = True
            continue
        next_is_change = i < len(parts) - 1 and parts[i + 1][0] != "="
        if last_was_change and next_is_change:
            if len(raw) <= context_lines * 2:
                context(raw)
            else:
                context(raw[:context_lines])
                out.append(gap)
                skipped = len(raw) - 2 * context_lines
                old_no += skipped
                new_no += skipped
                context(raw[len(raw) - context_lines :])
        elif last_was_change:
            context(raw[:context_lines])
            skipped = len(raw) - min(len(raw), context_lines)
            if skipped > 0:
                out.append(gap)
                old_no += skipped
                new_no += skipped
        elif next_is_change:
            skipped = max(0, len(raw) - context_lines)
            if skipped > 0:
                out.append(gap)
                old_no += skipped
                new_no += skipped
            context(raw[skipped:])
        else:
            old_no += len(raw)
            new_no += len(raw)
        last_was_change = False
    return "\n".join(out), first_changed
