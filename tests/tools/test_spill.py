"""The bash spill file: head and tail kept within a cap, private, in this process's directory."""

from __future__ import annotations

import os
import random
import re
import stat
from pathlib import Path

import pytest

from knightcode._tools import ToolContext
from knightcode._tools.output_buffer import OutputBuffer
from knightcode._tools.spill import SpillFile, spill_dir

from .helpers import run, text_of


def spilled(stream: bytes, pieces: list[bytes], head: int, tail: int) -> bytes:
    spill = SpillFile("knightcode-test", head, tail)
    for piece in pieces:
        spill.write(piece)
    spill.close()
    data = Path(spill.path).read_bytes()
    os.unlink(spill.path)
    assert spill.received == len(stream)
    assert spill.dropped == max(0, len(stream) - head - tail)
    return data


def expected(stream: bytes, head: int, tail: int) -> tuple[bytes, bytes]:
    """The file's start and end around the marker (the whole stream when nothing was dropped)."""
    if len(stream) <= head + tail:
        return stream, b""
    return stream[:head], stream[-tail:]


@pytest.mark.parametrize("seed", range(6))
def test_keeps_head_and_tail_in_order_whatever_the_chunking(seed: int) -> None:
    rng = random.Random(seed)
    head, tail = rng.choice([(0, 7), (10, 8), (64, 1), (5, 100)])
    stream = bytes(rng.randrange(256) for _ in range(rng.choice([0, 3, 18, 200, 1000])))
    pieces, position = [], 0
    while position < len(stream):
        size = rng.choice([1, 2, 7, 50, 300])
        pieces.append(stream[position : position + size])
        position += size
    data = spilled(stream, pieces, head, tail)
    start, end = expected(stream, head, tail)
    if not end:
        assert data == stream
        return
    assert data.startswith(start) and data.endswith(end)
    marker = data[len(start) : len(data) - len(end)].decode()
    dropped = len(stream) - head - tail
    assert re.fullmatch(
        rf"\n\n\[\.\.\. \S+ \({dropped} bytes\) of output dropped here: the file keeps the "
        r"first \S+ and the last \S+ \.\.\.\]\n\n",
        marker,
    ), marker


def test_file_is_private_and_in_the_process_directory() -> None:
    spill = SpillFile("knightcode-test")
    try:
        assert Path(spill.path).parent == Path(spill_dir())
        assert stat.S_IMODE(os.stat(spill.path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(spill_dir()).st_mode) == 0o700
        assert (Path(spill_dir()) / ".lock").exists()
    finally:
        spill.close()
        os.unlink(spill.path)


def test_output_buffer_reports_what_its_spill_file_left_out() -> None:
    output = OutputBuffer(10, 100, "knightcode-test", spill_head_bytes=1000, spill_tail_bytes=500)
    for _ in range(30):
        output.append(b"x" * 99 + b"\n")
    output.finish()
    snapshot = output.snapshot(persist_if_truncated=True)
    output.close()
    assert snapshot.full_output_path is not None
    assert output.spill_dropped == 3000 - 1500
    size = Path(snapshot.full_output_path).stat().st_size
    os.unlink(snapshot.full_output_path)
    assert 1500 < size < 1700


async def test_bash_names_a_capped_spill_file(ctx: ToolContext) -> None:
    # 20 MB of output: over the 16 MB the file keeps.
    result = await run("bash", {"command": "head -c 20000000 /dev/zero | tr '\\0' 'y'"}, ctx)
    text = text_of(result)
    found = re.search(r"Full output: (\S+) \(its middle (\S+) left out\)\]$", text)
    assert found, text[-300:]
    assert found.group(2) == "3.1MB"
    assert result["details"]["fullOutputPath"] == found.group(1)
    size = Path(found.group(1)).stat().st_size
    os.unlink(found.group(1))
    assert 16 * 1024 * 1024 < size < 16 * 1024 * 1024 + 200
