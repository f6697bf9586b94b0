"""Rendering a streamed answer: deltas per second through StreamingMarkdown and rich.

Run: ``python -m bench.interactive_stream_render`` (``--deltas 20000 --runs 3 --width 100``).

A generated answer (paragraphs, headings, fenced code, loose lists, tables) is cut into deltas of
1-8 characters, as a model streams tokens. Each delta is appended to a
:class:`StreamingMarkdown`; every completed block is rendered once (``render_assistant_text`` +
``to_ansi`` at width 100, truecolor) and written to a StringIO, as the app writes it into the
scrollback; every 600 deltas (30 frames/s at ~18,000 deltas/s) the open tail is rendered too, as
the live region repaints. The figure is deltas / wall time, median of the runs. For comparison it
also times the naive way at the same frame rate: re-rendering the whole message each frame.

Target (issue 12): >= 20,000 deltas/s for a 20,000-delta answer.
"""

from __future__ import annotations

import argparse
import io
import random
import statistics
import time

from knightcode._modes.interactive.render.ansi import to_ansi
from knightcode._modes.interactive.render.markdown_stream import StreamingMarkdown
from knightcode._modes.interactive.render.messages import render_assistant_text
from knightcode._modes.interactive.render.options import RenderOptions

FRAME_EVERY = 600

_TEXT = (
    "the render writes each finished block once into the terminal scrollback while the live "
    "region shows only the open tail so a long answer costs the same per token as a short one "
    "`StreamingMarkdown` **bold** *emphasis* function value request session model tool"
)
_WORDS = _TEXT.split(" ")

_CODE = [
    "def handle(request: Request) -> Response:",
    '    """Answer one request."""',
    "    if request.path == '/health':",
    "        return Response(200, b'ok')",
    "    payload = json.loads(request.body or b'{}')",
    "    result = await service.run(payload, timeout=30)",
    "",
    "    return Response(200, json.dumps(result).encode())",
]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 20))).capitalize() + "."


def _answer(rng: random.Random, chars: int) -> str:
    parts: list[str] = []
    size = 0
    while size < chars:
        kind = rng.randrange(10)
        if kind == 0:
            part = "## " + " ".join(rng.choice(_WORDS) for _ in range(4))
        elif kind in (1, 2):
            lines = [rng.choice(_CODE) for _ in range(rng.randint(4, 14))]
            part = "```python\n" + "\n".join(lines) + "\n```"
        elif kind == 3:
            part = "\n\n".join(f"{n}. {_sentence(rng)}" for n in range(1, rng.randint(3, 6)))
        elif kind == 4:
            rows = [f"| {rng.choice(_WORDS)} | {rng.randint(0, 999)} |" for _ in range(4)]
            part = "\n".join(["| name | value |", "|---|---|", *rows])
        else:
            part = " ".join(_sentence(rng) for _ in range(rng.randint(2, 5)))
        parts.append(part)
        size += len(part) + 2
    return "\n\n".join(parts) + "\n"


def _deltas(text: str, count: int, rng: random.Random) -> list[str]:
    """``text`` cut into ``count`` pieces of 1-8 characters (repeating the text if needed)."""
    out: list[str] = []
    i = 0
    while len(out) < count:
        size = rng.randint(1, 8)
        if i + size > len(text):
            i = 0
        out.append(text[i : i + size])
        i += size
    return out


def run_streaming(deltas: list[str], o: RenderOptions) -> tuple[float, int]:
    """Seconds to stream ``deltas`` the constant-per-delta way; and how many blocks it wrote."""
    sink = io.StringIO()
    stream = StreamingMarkdown()
    blocks = 0
    started = time.perf_counter()
    for index, delta in enumerate(deltas, 1):
        stream.append(delta)
        for block in stream.take_completed():
            sink.write(to_ansi(render_assistant_text(block, o), o.width))
            blocks += 1
        if index % FRAME_EVERY == 0:
            to_ansi(render_assistant_text(stream.tail(), o), o.width)
    for block in stream.finish():
        sink.write(to_ansi(render_assistant_text(block, o), o.width))
        blocks += 1
    return time.perf_counter() - started, blocks


def run_whole(deltas: list[str], o: RenderOptions) -> float:
    """Seconds to stream ``deltas`` re-rendering the whole message every frame."""
    parts: list[str] = []
    started = time.perf_counter()
    for index, delta in enumerate(deltas, 1):
        parts.append(delta)
        if index % FRAME_EVERY == 0:
            to_ansi(render_assistant_text("".join(parts), o), o.width)
    to_ansi(render_assistant_text("".join(parts), o), o.width)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--width", type=int, default=100)
    parser.add_argument("--no-whole", action="store_true", help="skip the naive comparison")
    args = parser.parse_args()
    rng = random.Random(12)
    text = _answer(rng, args.deltas * 5)
    deltas = _deltas(text, args.deltas, rng)
    o = RenderOptions(width=args.width)
    run_streaming(deltas[:2000], o)  # warm-up: imports, pygments lexers, console cache
    timings = []
    blocks = 0
    for _ in range(args.runs):
        seconds, blocks = run_streaming(deltas, o)
        timings.append(seconds)
    median = statistics.median(timings)
    chars = sum(map(len, deltas))
    print(f"answer: {args.deltas} deltas, {chars} characters, {blocks} blocks, width {args.width}")
    print(f"streamed (blocks once + tail every {FRAME_EVERY} deltas): {median:.3f} s")
    print(f"  -> {args.deltas / median:,.0f} deltas/s (target 20,000)")
    if not args.no_whole:
        whole = run_whole(deltas, o)
        print(f"naive (whole message every {FRAME_EVERY} deltas): {whole:.3f} s")
        print(f"  -> {args.deltas / whole:,.0f} deltas/s")


if __name__ == "__main__":
    main()
