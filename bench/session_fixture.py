"""A generated session file the size of a long working week: ~100 MB, ~100 000 entries.

The shape mimics real sessions: user prompts, assistant turns with thinking, text and tool
calls (with usage and costs), tool results carrying most of the bytes, occasional model and
thinking changes, labels, a few abandoned branches (with a branch summary) and non-ASCII text
(accents, CJK, emoji). The current leaf is on the main branch, which is ~95 000 entries deep, so
building the context walks almost the whole file. Deterministic for a given seed.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from knightcode._session import jsonl
from knightcode._session.ids import iso_timestamp

__all__ = ["write_session"]

_WORDS = [
    "the",
    "session",
    "file",
    "keeps",
    "every",
    "entry",
    "append",
    "only",
    "and",
    "the",
    "tree",
    "links",
    "parents",
    "by",
    "id",
    "while",
    "context",
    "building",
    "walks",
    "from",
    "leaf",
    "to",
    "root",
    "def",
    "return",
    "self",
    "path",
    "=",
    "open",
    "(",
    ")",
    "{",
    "}",
    ";",
    "42",
]
# Most text a coding agent stores is ASCII (code, logs); some has accents, a little has CJK or
# emoji. Python stores a string with one emoji at 4 bytes per character, so the mix matters.
_RARE = (("café", "naïve", "résumé"), ("日本語", "テスト"), ("😀", "🚀"))
_RARE_ODDS = (0.10, 0.03, 0.02)


def _text(rng: random.Random, size: int, odds: tuple[float, ...] = _RARE_ODDS) -> str:
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
    for choices, chance in zip(_RARE, odds, strict=True):
        if rng.random() < chance:
            words.insert(rng.randrange(len(words)), rng.choice(choices))
    if rng.random() < 0.5:
        words.append("\n")  # tool output is mostly lines
    return " ".join(words)


def _usage(rng: random.Random, context: int) -> dict[str, object]:
    output = rng.randint(20, 800)
    return {
        "input": context,
        "output": output,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": context + output,
        "cost": {
            "input": context * 3e-6,
            "output": output * 1.5e-5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": context * 3e-6 + output * 1.5e-5,
        },
    }


class _Writer:
    def __init__(self, path: Path, seed: int, odds: tuple[float, ...]) -> None:
        self.odds = odds
        self.handle = open(path, "wb")  # noqa: SIM115 - closed by write_session
        self.rng = random.Random(seed)
        self.clock = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
        self.count = 0
        self.bytes = 0

    def text(self, size: int) -> str:
        return _text(self.rng, size, self.odds)

    def entry(self, kind: str, parent: str | None, **fields: object) -> str:
        self.count += 1
        self.clock += timedelta(milliseconds=self.rng.randint(5, 4000))
        entry_id = f"{self.count:08x}"
        record: dict[str, object] = {
            "type": kind,
            "id": entry_id,
            "parentId": parent,
            "timestamp": iso_timestamp(self.clock),
        }
        record.update(fields)
        line = jsonl.encode_line(record)
        self.handle.write(line)
        self.bytes += len(line)
        return entry_id

    def turn(self, parent: str | None, context: int) -> str:
        """One user prompt, then assistant/tool rounds; returns the last id."""
        rng = self.rng
        ms = int(self.clock.timestamp() * 1000)
        leaf = self.entry(
            "message", parent, message={"role": "user", "content": self.text(250), "timestamp": ms}
        )
        for round_index in range(rng.randint(2, 5)):
            call_id = f"call_{self.count}_{round_index}"
            content = [
                {"type": "thinking", "thinking": self.text(250)},
                {"type": "text", "text": self.text(120)},
                {
                    "type": "toolCall",
                    "id": call_id,
                    "name": "read",
                    "arguments": {"path": f"src/mod_{rng.randint(1, 99)}.py", "offset": 1},
                },
            ]
            leaf = self.entry(
                "message",
                leaf,
                message={
                    "role": "assistant",
                    "content": content,
                    "api": "openai-completions",
                    "provider": "llama.cpp",
                    "model": "qwen3-coder",
                    "usage": _usage(rng, context),
                    "stopReason": "toolUse",
                    "timestamp": ms,
                },
            )
            leaf = self.entry(
                "message",
                leaf,
                message={
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": "read",
                    "content": [{"type": "text", "text": self.text(rng.randint(300, 1500))}],
                    "isError": False,
                    "timestamp": ms,
                },
            )
        return leaf


def write_session(
    path: Path, target_bytes: int = 100_000_000, seed: int = 7, *, emoji_everywhere: bool = False
) -> tuple[int, int]:
    """Write the benchmark session to ``path``; returns ``(entries, bytes)``.

    ``emoji_everywhere`` puts an astral character in every text: the worst case for memory,
    since CPython then stores each of those strings at 4 bytes per character.
    """
    odds = (_RARE_ODDS[0], _RARE_ODDS[1], 1.0) if emoji_everywhere else _RARE_ODDS
    writer = _Writer(path, seed, odds)
    header = {
        "type": "session",
        "version": 3,
        "id": "01a22876-0000-7000-8000-000000000000",
        "timestamp": iso_timestamp(writer.clock),
        "cwd": "/home/user/project",
    }
    line = jsonl.encode_line(header)
    writer.handle.write(line)
    writer.bytes += len(line)
    rng = writer.rng
    leaf = writer.entry("model_change", None, provider="llama.cpp", modelId="qwen3-coder")
    leaf = writer.entry("thinking_level_change", leaf, thinkingLevel="medium")
    main: list[str] = [leaf]
    context = 2000
    branch_every = target_bytes // 5
    next_branch = branch_every
    while writer.bytes < target_bytes:
        leaf = writer.turn(leaf, context)
        main.append(leaf)
        context = min(context + 600, 120_000)
        if rng.random() < 0.02:
            leaf = writer.entry("label", leaf, targetId=main[-2], label=f"checkpoint {len(main)}")
        if writer.bytes >= next_branch and writer.bytes < target_bytes * 0.9:
            # An abandoned attempt from a few turns back, then a summary of it on the main line.
            next_branch += branch_every
            fork_point = main[-4]
            side = fork_point
            for _ in range(6):
                side = writer.turn(side, context)
            leaf = writer.entry("branch_summary", leaf, fromId=side, summary=writer.text(600))
    writer.handle.close()
    return writer.count, writer.bytes
