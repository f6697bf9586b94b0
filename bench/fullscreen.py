"""Fullscreen transcript over a 10,000-message session: time per page, prompt jumps, search.

(a) model: the fullscreen pane's model (``_modes.interactive.fullscreen.model``) with the app's
    real renderers (markdown answers with code blocks, tool calls with results), in process —
    what each key costs the UI, without the terminal:
    open (entries built, the last page rendered), page up from the end over never-seen entries
    (cold) and back down (cached), top, prompt jumps, search before anything was prerendered
    (cold: renders every entry once), the idle prerendering itself, and search over the cached
    lines, per typed key.
(b) terminal: ``knightcode --fullscreen --session FILE`` in tmux on a 10,000-message session
    file: time from sending PageUp (or ctrl+end, or a search keystroke) to the screen showing the
    change, polled with ``capture-pane`` (a poll costs ~2 ms: a floor on these figures).

Run: ``python -m bench.fullscreen [--messages 10000] [--pages 200] [--only model,terminal]``
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import RenderableType

from bench.session_fixture import _WORDS
from knightcode._modes.interactive.fullscreen.model import Entry, TranscriptModel
from knightcode._modes.interactive.render.ansi import render_segments
from knightcode._modes.interactive.render.options import RenderOptions
from knightcode._modes.interactive.transcript import Item, group_messages
from knightcode._types.messages import AgentMessage
from tests.session.helpers import USAGE

WIDTH, HEIGHT = 120, 40


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(count))


def conversation(messages: int, seed: int = 16) -> list[AgentMessage]:
    """``messages`` messages: prompts, markdown answers, and every third answer a tool call
    with its result.
    """
    rng = random.Random(seed)
    usage = USAGE
    out: list[dict[str, object]] = []
    n = 0
    while len(out) < messages:
        out.append({"role": "user", "content": f"prompt {n} {_words(rng, 20)}", "timestamp": 0})
        text = (
            f"## Answer {n}\n\n{_words(rng, 60)}\n\n- {_words(rng, 8)}\n- {_words(rng, 8)}\n\n"
            f"```python\ndef f{n}(x):\n    return x + {n}\n```\n"
        )
        content: list[dict[str, object]] = [{"type": "text", "text": text}]
        tool = n % 3 == 0 and len(out) + 2 < messages
        if tool:
            content.append(
                {"type": "toolCall", "id": f"c{n}", "name": "bash", "arguments": {"command": "ls"}}
            )
        out.append(
            {
                "role": "assistant",
                "content": content,
                "api": "x",
                "provider": "x",
                "model": "x",
                "usage": usage,
                "stopReason": "toolUse" if tool else "stop",
                "timestamp": 0,
            }
        )
        if tool:
            out.append(
                {
                    "role": "toolResult",
                    "toolCallId": f"c{n}",
                    "toolName": "bash",
                    "content": [{"type": "text", "text": "\n".join(_WORDS[:12])}],
                    "isError": False,
                    "timestamp": 0,
                }
            )
        n += 1
    return out[:messages]  # type: ignore[return-value]


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"mean {statistics.fmean(ordered):.2f} ms, p99 {p99:.2f} ms, max {ordered[-1]:.2f} ms"
        f" ({len(ordered)} samples)"
    )


def _timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def bench_model(messages: int, pages: int) -> None:
    from knightcode._modes.interactive.view import render_item

    options = RenderOptions(
        width=WIDTH, expand_tools=False, show_thinking=False, cwd=Path("."), expand_hint="ctrl+o"
    )
    started = time.perf_counter()
    model = TranscriptModel(render_segments)
    model.resize(WIDTH, HEIGHT)
    history = conversation(messages)
    for item, _ in group_messages(history):

        def source(item: Item = item) -> RenderableType | None:
            return render_item(item, options)

        prompt = item.message is not None and item.message["role"] == "user"
        model.append(Entry(source, prompt))
    model.visible()
    print(f"model: {messages:,} messages, {len(model.entries):,} entries, {WIDTH}x{HEIGHT}")
    print(f"  open (entries + last page): {(time.perf_counter() - started) * 1000:.1f} ms")

    def page(direction: int) -> None:
        model.page(direction)
        model.visible()

    cold = [_timed(lambda: page(-1)) for _ in range(pages)]
    print(f"  page up, never-seen entries: {_ms(cold)}")
    warm = [_timed(lambda: page(1)) for _ in range(pages)]
    print(f"  page down, cached entries:   {_ms(warm)}")

    def then_draw(move: Callable[[], object]) -> Callable[[], None]:
        def both() -> None:
            move()
            model.visible()

        return both

    print(f"  top: {_timed(then_draw(model.to_top)):.2f} ms;"
          f" bottom: {_timed(then_draw(model.to_bottom)):.2f} ms")  # fmt: skip
    jumps = [_timed(then_draw(model.previous_prompt)) for _ in range(pages)]
    print(f"  previous prompt: {_ms(jumps)}")
    searched = _timed(functools.partial(model.search, "def f4242"))
    first = model.match_count
    started = time.perf_counter()
    while not model.prerender(0.018):  # the pane's slices while a search waits
        pass
    complete = (time.perf_counter() - started) * 1000
    print(
        f"  search 'def f4242' before prerendering: answers in {searched:.1f} ms ({first} found"
        f" among the rendered), complete after {complete:.0f} ms ({model.match_count} match)"
    )

    fresh = TranscriptModel(render_segments)
    fresh.resize(WIDTH, HEIGHT)
    for entry in model.entries:
        fresh.append(Entry(entry.source, entry.prompt))
    ticks = []
    while True:
        done = False

        def tick() -> None:
            nonlocal done
            done = fresh.prerender(0.006)

        ticks.append(_timed(tick))
        if done:
            break
    total = sum(ticks) / 1000
    print(f"  idle prerendering, 6 ms slices: {total:.2f} s in all; per tick {_ms(ticks)}")
    typed = [_timed(functools.partial(fresh.search, q)) for q in _prefixes("return x + 4242")]
    print(f"  search as typed ('return x + 4242', after prerendering): per key {_ms(typed)};"
          f" {fresh.match_count} match")  # fmt: skip
    fresh.search("session")

    def next_match() -> None:
        fresh.step(1)
        fresh.visible()

    steps = [_timed(next_match) for _ in range(100)]
    print(f"  next match ('session', {fresh.match_count:,} matches): {_ms(steps)}")


def _prefixes(text: str) -> list[str]:
    return [text[: n + 1] for n in range(len(text))]


def bench_terminal(messages: int, pages: int) -> None:
    from knightcode.testing import TmuxSession
    from tests.interactive.conversation import write_conversation

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        project = root / "project"
        project.mkdir()
        env = dict(os.environ)
        env["HOME"] = str(root)
        env["KNIGHTCODE_CODING_AGENT_DIR"] = str(root / "agent")
        session = write_conversation(root / "s.jsonl", project, messages // 2)
        last = f"answer {messages // 2 - 1:04d} line 2"
        command = [sys.executable, "-m", "knightcode", "--fullscreen", "--session", str(session)]
        started = time.perf_counter()
        ui = TmuxSession.start(command, cwd=project, env=env, width=WIDTH, height=HEIGHT)
        try:
            ui.wait_for(last, timeout=60)
            print(f"terminal: {messages:,} messages, {WIDTH}x{HEIGHT}")
            print(f"  start to last answer shown: {(time.perf_counter() - started) * 1000:.0f} ms")
            time.sleep(1.0)
            samples = [_until_changed(ui, "PageUp") for _ in range(pages)]
            print(f"  PageUp to screen changed: {_ms(samples)}")
            print(f"  ctrl+end back to the end: {_until_changed(ui, 'C-End'):.1f} ms")
            print(f"  ctrl+home to the top: {_until_changed(ui, 'C-Home'):.1f} ms")
            ui.send_keys("C-S-f")
            ui.wait_for("Search:")
            keys = [_until_changed(ui, ch, text=True) for ch in "answer 4321 line 1"]
            print(f"  search, per typed key (screen updated): {_ms(keys)}")
        finally:
            ui.kill()


def _until_changed(ui: object, key: str, *, text: bool = False) -> float:
    before = ui.capture()  # type: ignore[attr-defined]
    started = time.perf_counter()
    if text:
        ui.send_text(key)  # type: ignore[attr-defined]
    else:
        ui.send_keys(key)  # type: ignore[attr-defined]
    while ui.capture() == before:  # type: ignore[attr-defined]
        if time.perf_counter() - started > 10:
            raise AssertionError(f"{key} changed nothing")
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--only", default="model,terminal")
    args = parser.parse_args()
    parts = args.only.split(",")
    if "model" in parts:
        bench_model(args.messages, args.pages)
    if "terminal" in parts:
        bench_terminal(args.messages, args.pages)


if __name__ == "__main__":
    main()
