"""Message and entry builders shared by the session tests (the reference's test utilities)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knightcode._session import AssistantMessage, UserMessage

USAGE: dict[str, Any] = {
    "input": 1,
    "output": 1,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 2,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def user_msg(text: str, timestamp: int = 1) -> UserMessage:
    return {"role": "user", "content": text, "timestamp": timestamp}


def assistant_msg(
    text: str,
    timestamp: int = 2,
    *,
    model: str = "test",
    usage: dict[str, Any] | None = None,
    stop_reason: str = "stop",
) -> AssistantMessage:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": model,
        "usage": usage or USAGE,  # type: ignore[typeddict-item]
        "stopReason": stop_reason,  # type: ignore[typeddict-item]
        "timestamp": timestamp,
    }


def write_jsonl(path: Path, *records: Any, trailing_newline: bool = True) -> Path:
    """Write records (dicts are JSON-encoded, str/bytes written as they are) one per line."""
    lines = []
    for record in records:
        if isinstance(record, bytes):
            lines.append(record)
        elif isinstance(record, str):
            lines.append(record.encode())
        else:
            lines.append(json.dumps(record, ensure_ascii=False).encode())
    data = b"\n".join(lines) + (b"\n" if trailing_newline else b"")
    path.write_bytes(data)
    return path


def read_records(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]


def header(
    session_id: str = "sess-1", version: int | None = 3, cwd: str = "/tmp"
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "session",
        "id": session_id,
        "timestamp": "2025-01-01T00:00:00Z",
        "cwd": cwd,
    }
    if version is not None:
        record["version"] = version
    return record
