"""Which files a conversation read and changed, tracked across summaries.

A summary that says "fixed the parser" is more useful when the model also knows *which* files
were involved, so default compactions and branch summaries end with ``<read-files>`` and
``<modified-files>`` lists and store them in ``details`` (``{"readFiles", "modifiedFiles"}``). The
lists accumulate: the next default summary starts from the previous one's ``details``. Summaries a
plugin supplied (``fromHook``) are not trusted to use that format and are not carried.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from knightcode import FileOperations

if TYPE_CHECKING:
    from knightcode import AgentMessage, BranchSummaryEntry, CompactionEntry

__all__ = [
    "carry_details",
    "compute_file_lists",
    "extract_file_ops",
    "format_file_operations",
]

_KINDS = {"read": "read", "write": "written", "edit": "edited"}


def extract_file_ops(messages: Iterable[AgentMessage], ops: FileOperations) -> None:
    """Add the ``path`` argument of every ``read``/``write``/``edit`` call in ``messages``."""
    for message in messages:
        if message["role"] != "assistant":
            continue
        for block in message["content"]:
            if block["type"] != "toolCall":
                continue
            kind = _KINDS.get(block["name"])
            path = block["arguments"].get("path")
            if kind is not None and isinstance(path, str) and path:
                getattr(ops, kind).add(path)


def carry_details(entry: CompactionEntry | BranchSummaryEntry | None, ops: FileOperations) -> None:
    """Seed ``ops`` from a knightcode-generated summary entry's ``details`` (not ``fromHook``)."""
    if entry is None or entry.get("fromHook"):
        return
    details = entry.get("details")
    if not isinstance(details, dict):
        return
    read, modified = details.get("readFiles"), details.get("modifiedFiles")
    if isinstance(read, list):
        ops.read.update(path for path in read if isinstance(path, str))
    if isinstance(modified, list):
        ops.edited.update(path for path in modified if isinstance(path, str))


def compute_file_lists(ops: FileOperations) -> tuple[list[str], list[str]]:
    """``(read_files, modified_files)``, sorted; a file both read and changed counts as changed."""
    modified = ops.edited | ops.written
    return sorted(ops.read - modified), sorted(modified)


def format_file_operations(
    read_files: list[str], modified_files: list[str], limit_tokens: int | None = None
) -> str:
    """The tags appended to a summary (an empty string when there are no files).

    :param limit_tokens: the share of the summary cap the lists may take: beyond it, a list
        keeps its first paths and says how many it left out (changed files first, they matter
        more). The entry's ``details`` keep the whole lists.
    """
    if limit_tokens is not None:
        room = limit_tokens * 4 - _TAGS_UNITS
        modified_files = _shown(modified_files, room)
        read_files = _shown(read_files, room - _units(modified_files))
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


# The tags and separators around the two lists, in UTF-16 code units (what the estimate counts),
# plus room for the two "[… more]" lines.
_TAGS_UNITS = 2 * len("\n\n<modified-files>\n\n</modified-files>") + 2 * len("[99999 more]\n")


def _units(paths: list[str]) -> int:
    return sum(len(path.encode("utf-16-le")) // 2 + 1 for path in paths)


def _shown(paths: list[str], room: int) -> list[str]:
    """The first ``paths`` that fit ``room`` code units, then how many were left out."""
    used = 0
    for index, path in enumerate(paths):
        used += len(path.encode("utf-16-le")) // 2 + 1
        if used > room:
            return [*paths[:index], f"[{len(paths) - index} more]"]
    return paths
