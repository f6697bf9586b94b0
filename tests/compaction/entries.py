"""Session entries built by hand, with predictable ids (``test-id-0``, ``test-id-1`` …), like the
reference's compaction tests."""

from __future__ import annotations

from typing import Any


def usage(
    input: int = 100, output: int = 50, cache_read: int = 0, cache_write: int = 0
) -> dict[str, Any]:
    return {
        "input": input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": input + output + cache_read + cache_write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def user(text: str, timestamp: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": timestamp}


def assistant(
    text: str = "",
    *,
    calls: list[tuple[str, dict[str, Any]]] = (),  # type: ignore[assignment]
    use: dict[str, Any] | None = None,
    stop: str = "stop",
    timestamp: int = 2,
    thinking: str | None = None,
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking})
    if text:
        content.append({"type": "text", "text": text})
    for index, (name, arguments) in enumerate(calls):
        content.append(
            {"type": "toolCall", "id": f"call-{index}", "name": name, "arguments": arguments}
        )
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": use or usage(),
        "stopReason": stop if not calls else "toolUse",
        "timestamp": timestamp,
    }


def tool_result(text: str, name: str = "read", call_id: str = "call-0") -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 3,
    }


def bash(command: str, output: str) -> dict[str, Any]:
    return {
        "role": "bashExecution",
        "command": command,
        "output": output,
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 4,
    }


class Chain:
    """Entries appended one after another, each the child of the previous one."""

    def __init__(self) -> None:
        self.entries: list[Any] = []
        self._counter = 0

    def _add(self, kind: str, **fields: Any) -> dict[str, Any]:
        entry = {
            "type": kind,
            "id": f"test-id-{self._counter}",
            "parentId": self.entries[-1]["id"] if self.entries else None,
            "timestamp": f"2026-01-01T00:00:{self._counter % 60:02d}.000Z",
            **fields,
        }
        self._counter += 1
        self.entries.append(entry)
        return entry

    def message(self, message: dict[str, Any]) -> dict[str, Any]:
        return self._add("message", message=message)

    def compaction(
        self, summary: str, first_kept: str, *, details: Any = None, from_hook: bool | None = None
    ) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if details is not None:
            extra["details"] = details
        if from_hook is not None:
            extra["fromHook"] = from_hook
        return self._add(
            "compaction", summary=summary, firstKeptEntryId=first_kept, tokensBefore=10000, **extra
        )

    def model_change(self, provider: str, model_id: str) -> dict[str, Any]:
        return self._add("model_change", provider=provider, modelId=model_id)

    def thinking(self, level: str) -> dict[str, Any]:
        return self._add("thinking_level_change", thinkingLevel=level)

    def custom_message(self, text: str) -> dict[str, Any]:
        return self._add("custom_message", customType="note", content=text, display=True)

    def label(self, target: str, label: str) -> dict[str, Any]:
        return self._add("label", targetId=target, label=label)

    def edit(self, *edits: dict[str, Any]) -> dict[str, Any]:
        return self._add("context_edit", edits=list(edits), reason="test")

    def custom(self) -> dict[str, Any]:
        return self._add("custom", customType="state", data={})
