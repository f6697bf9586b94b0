"""``knightcode._llm`` imports its names on first use, from a table of where each one lives."""

from __future__ import annotations

import importlib

import pytest

llm = importlib.import_module("knightcode._llm")


@pytest.mark.parametrize("name", llm.__all__)
def test_every_exported_name_resolves(name: str) -> None:
    # A table entry naming the wrong module raises AttributeError only when the name is used.
    assert getattr(llm, name) is not None
