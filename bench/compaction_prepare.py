"""Preparing a compaction of a 2-million-token session (issue 6): target < 300 ms.

Run: ``python -m bench.compaction_prepare`` (``--tokens 2000000``, ``--runs 5``, ``--keep DIR``).

The session comes from :mod:`bench.session_fixture` (prompts, assistant turns with thinking,
text and ``read`` calls, tool results carrying most of the text), grown until the context the
model would see holds the requested number of estimated tokens. What is timed is the work done
before any summary request is sent, on the loaded session:

* ``prepare_compaction``: the projection, ``tokensBefore`` from the rebuilt context, the cut
  point (default ``keepRecentTokens`` 20 000), the messages to summarize and the file lists;
* serialization of those messages (``convert_to_llm`` + ``serialize_conversation``) — the text
  of the summary request;
* and, for information, the cut point and the file lists alone.

Figures are the median of ``--runs`` runs.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from bench.session_fixture import write_session
from knightcode import CompactionSettings, FileOperations, convert_to_llm, serialize_conversation
from knightcode._session import SessionManager, estimate_tokens, project_path
from knightcode_builtins.compaction.cut_point import find_cut_point
from knightcode_builtins.compaction.file_ops import extract_file_ops
from knightcode_builtins.compaction.preparation import prepare_compaction

_T = TypeVar("_T")


def _median_ms(work: Callable[[], _T], runs: int) -> tuple[float, _T]:
    samples: list[float] = []
    for _ in range(runs):
        gc.collect()
        started = time.perf_counter()
        result = work()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), result


def _session(folder: Path, tokens: int) -> tuple[SessionManager, int]:
    """A fixture session whose context holds at least ``tokens`` estimated tokens."""
    size = tokens * 6  # about 6 file bytes per context token for this fixture's shape
    while True:
        path = folder / f"session-{size}.jsonl"
        write_session(path, target_bytes=size)
        session = SessionManager.open(path)
        total = sum(estimate_tokens(m) for m in session.build_context().messages)
        if total >= tokens:
            return session, total
        session.close()
        size = int(size * tokens / max(total, 1) * 1.05)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--keep", type=Path, default=None, help="write the session here and keep it"
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        session, total = _session(folder, args.tokens)
        path = session.get_branch()
        settings = CompactionSettings()
        session_file = session.session_file
        assert session_file is not None  # opened from a file
        print(
            f"session: {len(session.get_entries())} entries, {total:,} context tokens "
            f"({session_file.stat().st_size / 1e6:.1f} MB)"
        )

        # As builtin:compaction calls it: with the session's context of the branch.
        prepare_ms, prep = _median_ms(
            lambda: prepare_compaction(path, settings, session.build_context().messages),
            args.runs,
        )
        assert prep is not None
        messages = [*prep.messages_to_summarize, *prep.turn_prefix_messages]
        serialize_ms, text = _median_ms(
            lambda: serialize_conversation(convert_to_llm(messages)), args.runs
        )
        entries = project_path(path).entries
        cut_ms, _ = _median_ms(
            lambda: find_cut_point(entries, 0, len(entries), settings.keep_recent_tokens), args.runs
        )
        ops_ms, _ = _median_ms(lambda: extract_file_ops(messages, FileOperations()), args.runs)

        print(
            f"messages to summarize: {len(messages):,}; "
            f"serialized: {len(text) / 1e6:.1f} M characters"
        )
        print(
            f"prepare_compaction:     {prepare_ms:7.1f} ms  (cut point alone {cut_ms:.1f} ms, "
            f"file lists alone {ops_ms:.1f} ms)"
        )
        print(f"serialization:          {serialize_ms:7.1f} ms")
        print(f"prepare + serialize:    {prepare_ms + serialize_ms:7.1f} ms  (target 300 ms)")
        session.close()


if __name__ == "__main__":
    main()
