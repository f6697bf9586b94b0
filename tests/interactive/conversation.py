"""A session file holding a plain conversation of numbered exchanges (fullscreen tests, bench).

Exchange ``n`` is a user message ``question n`` and an assistant answer ``answer n`` with a few
lines of text, so a test can tell exactly which part of the transcript a screen shows.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.session.helpers import USAGE

__all__ = ["write_conversation"]


def _entry(number: int, parent: str | None, message: dict[str, object]) -> dict[str, object]:
    return {
        "type": "message",
        "id": f"{number:08x}",
        "parentId": parent,
        "timestamp": "2026-01-05T09:00:00.000Z",
        "message": message,
    }


def write_conversation(path: Path, cwd: Path, exchanges: int, lines: int = 3) -> Path:
    """Write ``exchanges`` user/assistant pairs (``2 * exchanges`` messages) to ``path``; each
    answer has ``lines`` paragraphs ``answer n line k``.
    """
    usage = USAGE
    records: list[dict[str, object]] = [
        {
            "type": "session",
            "version": 3,
            "id": "01a22876-0000-7000-8000-00000000f516",
            "timestamp": "2026-01-05T09:00:00.000Z",
            "cwd": str(cwd),
        }
    ]
    parent: str | None = None
    for n in range(exchanges):
        user = {"role": "user", "content": f"question {n:04d}", "timestamp": 0}
        records.append(_entry(2 * n + 1, parent, user))
        body = "\n\n".join(f"answer {n:04d} line {k}" for k in range(lines))
        answer = {
            "role": "assistant",
            "content": [{"type": "text", "text": body}],
            "api": "openai-completions",
            "provider": "scripted",
            "model": "scripted-model",
            "usage": usage,
            "stopReason": "stop",
            "timestamp": 0,
        }
        records.append(_entry(2 * n + 2, f"{2 * n + 1:08x}", answer))
        parent = f"{2 * n + 2:08x}"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path
