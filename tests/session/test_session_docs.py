"""The examples in docs/session-format.md are real, canonical lines of the format."""

from __future__ import annotations

import re
from pathlib import Path

from knightcode._session import jsonl
from knightcode._types.entries import ENTRY_TYPES

DOC = Path(__file__).resolve().parents[2] / "docs" / "session-format.md"


def example_lines() -> list[str]:
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    return [
        line
        for block in blocks
        for line in block.splitlines()
        if line.startswith("{") and "…" not in line
    ]


def test_every_example_is_written_exactly_as_knightcode_writes_it() -> None:
    lines = example_lines()
    assert len(lines) >= 13
    kinds = set()
    for line in lines:
        value = jsonl.parse_line(line.encode())
        assert jsonl.dumps(value) == line  # compact, key order, raw Unicode
        kinds.add(value.get("type") or value.get("role"))
    # Every entry type is shown, and the header, and an assistant message.
    assert ENTRY_TYPES | {"session", "assistant"} <= kinds


def test_documented_entry_types_match_the_code() -> None:
    documented = set(
        re.findall(r"^\| `([a-z_]+)` \| ", DOC.read_text(encoding="utf-8"), flags=re.MULTILINE)
    )
    assert documented >= ENTRY_TYPES
