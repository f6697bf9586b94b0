"""``read`` streams: the same result as a whole-file read, in bounded memory, stoppable.

The whole-file reference is what ``read`` did before (decode, ``split("\\n")``, truncate): the
scan must agree with it whatever the chunking, multi-byte characters and invalid bytes cut at
chunk edges included.
"""

from __future__ import annotations

import asyncio
import errno
import os
import random
import re
import threading
import time
from pathlib import Path

import pytest

from knightcode._abort import AbortSignal
from knightcode._tools import LocalBackend, ToolContext, ToolError
from knightcode._tools.read_window import LineScanner, LineWindow
from knightcode._tools.truncate import truncate_head, utf8_len

from .helpers import run, text_of

PIECES = [
    b"a",
    b"xyz",
    b"\n",
    b"\n\n",
    "é".encode(),
    "😀".encode(),
    b"\xff",
    b"\xe2\x82",
    b" " * 40,
]


def scan(data: bytes, start: int, limit: int | None, sizes: list[int]) -> LineWindow:
    scanner = LineScanner(start, limit)
    position, index = 0, 0
    while position < len(data):
        size = sizes[index % len(sizes)]
        index += 1
        assert scanner.feed(data[position : position + size])
        position += size
    return scanner.result(eof=True)


def sample(rng: random.Random) -> bytes:
    if rng.random() < 0.3:  # lines near the 50 KB limit
        lines = [
            rng.choice([b"short", "é".encode() * rng.randint(25590, 25610), b"y" * 51199])
            for _ in range(rng.randint(1, 3))
        ]
        return b"\n".join(lines) + rng.choice([b"", b"\n"])
    size = rng.choice([0, 7, 3000, 51200, 70000])
    newline_rate = rng.choice([0.0, 0.05, 0.9])
    out = bytearray()
    while len(out) < size:
        out += b"\n" if rng.random() < newline_rate else rng.choice(PIECES)
    return bytes(out)


@pytest.mark.parametrize("seed", range(40))
def test_scan_agrees_with_a_whole_file_read(seed: int) -> None:
    rng = random.Random(seed)
    data = sample(rng)
    lines = data.decode("utf-8", "replace").split("\n")
    start = rng.choice([0, 0, 1, len(lines) - 1, len(lines), rng.randrange(len(lines) + 1)])
    limit = rng.choice([None, None, 0, 1, 3000, rng.randrange(len(lines) + 2)])
    window = scan(data, start, limit, [rng.choice([1, 2, 3, 5, 4096, 1 << 20]) for _ in range(5)])
    assert window.file_lines == len(lines) and window.counted_all
    assert window.reached_start == (start < len(lines))
    if not window.reached_start:
        return
    span = lines[start:] if limit is None else lines[start : start + limit]
    text = "\n".join(span)
    assert (window.span_lines, window.span_bytes) == (len(text.split("\n")), utf8_len(text))
    assert window.first_line_bytes == utf8_len(text.split("\n")[0])
    streamed = truncate_head(
        window.text, total_lines=window.span_lines, total_bytes=window.span_bytes
    )
    assert streamed == truncate_head(text)


def test_kept_text_is_bounded_by_the_limits() -> None:
    window = scan(b"0123456789\n" * 200_000, 0, None, [1 << 20])
    assert len(window.text) < 60_000 and window.file_lines == 200_001


def sparse(path: Path, size: int, prefix: bytes = b"") -> Path:
    with path.open("wb") as handle:
        handle.write(prefix)
        handle.truncate(size)
    return path


async def test_totals_past_the_count_limit_are_lower_bounds(
    ctx: ToolContext, project_dir: Path
) -> None:
    # 3000 lines, then 100 MB of NULs: counting stops 64 MB past what is shown.
    lines = b"".join(b"line %d\n" % i for i in range(1, 3001))
    sparse(project_dir / "big.log", 100 * 1024 * 1024, lines)
    output = text_of(await run("read", {"path": "big.log"}, ctx))
    assert output.endswith(
        "\n\n[Showing lines 1-2000 of at least 3001. Use offset=2001 to continue.]"
    )
    output = text_of(await run("read", {"path": "big.log", "limit": 10}, ctx))
    assert output.endswith(
        "line 10\n\n[At least 2991 more lines in file. Use offset=11 to continue.]"
    )
    output = text_of(await run("read", {"path": "big.log", "offset": 3001}, ctx))
    assert re.match(r"\[Line 3001 is over 6\d\.\dMB, exceeds 50\.0KB limit\.", output), output


async def test_fifo_and_devices_are_refused_without_opening(
    ctx: ToolContext, project_dir: Path
) -> None:
    os.mkfifo(project_dir / "pipe")
    for path in (str(project_dir / "pipe"), "/dev/zero", "/dev/null"):
        started = time.monotonic()
        with pytest.raises(ToolError) as info:
            await asyncio.wait_for(run("read", {"path": path}, ctx), 5)
        assert str(info.value) == (
            f"Cannot read {path}: not a regular file (a FIFO, socket or device). "
            "read only reads regular files."
        )
        assert time.monotonic() - started < 1


async def test_backend_refuses_a_fifo_and_a_directory(project_dir: Path) -> None:
    os.mkfifo(project_dir / "pipe")
    backend = LocalBackend(project_dir)
    with pytest.raises(OSError) as info:
        await asyncio.wait_for(backend.read_chunks(str(project_dir / "pipe")).__anext__(), 5)
    assert info.value.errno == errno.EINVAL
    with pytest.raises(IsADirectoryError):
        await backend.read_chunks(str(project_dir)).__anext__()
    with pytest.raises(OSError) as info:  # read_file too: edit and grep never hang on one
        await asyncio.wait_for(backend.read_file(str(project_dir / "pipe")), 5)
    assert info.value.errno == errno.EINVAL


async def test_a_path_swapped_for_a_fifo_never_blocks(project_dir: Path) -> None:
    (project_dir / "file").write_text("content")
    os.mkfifo(project_dir / "pipe")
    target, link = project_dir / "target", project_dir / "target.new"
    stop = threading.Event()

    def swap() -> None:  # the path flips between the file and the FIFO as fast as it can
        while not stop.is_set():
            for name in ("file", "pipe"):
                os.symlink(project_dir / name, link)
                os.replace(link, target)

    swapper = threading.Thread(target=swap)
    swapper.start()
    backend = LocalBackend(project_dir)
    outcomes: set[str] = set()
    try:
        for _ in range(300):
            try:
                chunks = [c async for c in backend.read_chunks(str(target), 1024)]
                outcomes.add(b"".join(chunks).decode())
            except OSError as error:
                outcomes.add(errno.errorcode[error.errno or 0])
    finally:
        stop.set()
        swapper.join()
    assert outcomes <= {"content", "EINVAL", "ENOENT"}


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_abort_and_timeout_stop_a_long_read(project_dir: Path) -> None:
    # Skipping to line 2 of 1 TB of NULs would take minutes.
    sparse(project_dir / "huge.bin", 1024**4)
    before = open_fds()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(
            run("read", {"path": "huge.bin", "offset": 2}, ToolContext.local(project_dir)), 0.3
        )
    signal = AbortSignal()
    ctx = ToolContext.local(project_dir, signal=signal)
    reading = asyncio.ensure_future(run("read", {"path": "huge.bin", "offset": 2}, ctx))
    await asyncio.sleep(0.2)
    started = time.monotonic()
    signal.abort()
    with pytest.raises(ToolError, match=r"^Operation aborted$"):
        await reading
    assert time.monotonic() - started < 0.1
    for _ in range(100):  # the abandoned chunk reads return and close their descriptors
        if open_fds() == before:
            break
        await asyncio.sleep(0.02)
    assert open_fds() == before


class WholeFileBackend(LocalBackend):
    """A backend written before ``read_chunks`` existed: ``read`` falls back to ``read_file``."""

    read_chunks = None


@pytest.mark.parametrize(
    "args",
    [{}, {"offset": 1500}, {"limit": 10}, {"offset": 2999, "limit": 5}, {"offset": 4000}],
)
async def test_a_backend_without_read_chunks_gives_the_same_results(
    project_dir: Path, args: dict[str, int]
) -> None:
    (project_dir / "f.txt").write_text("".join(f"line {i} é\n" for i in range(3000)))
    os.mkfifo(project_dir / "pipe")
    results = []
    for backend in (LocalBackend(project_dir), WholeFileBackend(project_dir)):
        ctx = ToolContext(project_dir, backend)
        try:
            results.append(text_of(await run("read", {"path": "f.txt", **args}, ctx)))
        except ToolError as error:
            results.append(str(error))
        with pytest.raises(ToolError, match="not a regular file"):
            await asyncio.wait_for(run("read", {"path": "pipe"}, ctx), 5)
    assert results[0] == results[1]
