"""A 100 000-entry chain: every walk is iterative, nothing hits the recursion limit."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from knightcode._session import SessionManager, jsonl

from .helpers import header

DEPTH = 100_000


@pytest.fixture
def unfreeze_gc() -> Iterator[None]:
    """Loading a large session freezes the GC heap (see loading._bulk_allocation); give the
    rest of the test run its normal GC back."""
    yield
    gc.unfreeze()


def test_100k_entry_chain_without_recursion(tmp_path: Path, unfreeze_gc: None) -> None:
    assert sys.getrecursionlimit() < DEPTH  # otherwise the test proves nothing
    file = tmp_path / "deep.jsonl"
    lines = [jsonl.encode_line(header())]
    previous = None
    for n in range(DEPTH):
        entry_id = f"{n:08x}"
        role = "user" if n % 2 == 0 else "assistant"
        message = (
            {"role": "user", "content": f"q{n}", "timestamp": n}
            if role == "user"
            else {
                "role": "assistant",
                "content": [{"type": "text", "text": f"a{n}"}],
                "api": "a",
                "provider": "p",
                "model": "m",
                "usage": {"totalTokens": n},
                "stopReason": "stop",
                "timestamp": n,
            }
        )
        lines.append(
            jsonl.encode_line(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": previous,
                    "timestamp": "2025-01-01T00:00:00.000Z",
                    "message": message,
                }
            )
        )
        previous = entry_id
    file.write_bytes(b"".join(lines))

    gc.unfreeze()
    session = SessionManager.open(file)
    assert gc.isenabled() and gc.get_freeze_count() > 0  # the loaded entries left to refcounting
    assert session.leaf_id == f"{DEPTH - 1:08x}"
    assert len(session.get_branch()) == DEPTH
    assert len(session.build_context().messages) == DEPTH
    assert session.estimate_context_tokens().tokens == DEPTH - 1  # last assistant's usage

    tree = session.get_tree()
    assert len(tree) == 1
    node, depth = tree[0], 1
    while node.children:
        node = node.children[0]
        depth += 1
    assert depth == DEPTH
    assert repr(tree[0]) == "SessionTreeNode(id='00000000', children=1)"

    fork_leaf = f"{DEPTH // 2:08x}"
    session.create_branched_session(fork_leaf)
    assert len(session.get_entries()) == DEPTH // 2 + 1
    del tree, node  # dropping the deep tree must not overflow the stack either
