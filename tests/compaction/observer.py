"""A test plugin recording the compaction hooks, optionally answering ``session_before_compact``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from knightcode import AbortSignal, hookimpl


class Observer:
    """Records ``session_before_compact``, ``session_compact``, ``session_compact_failed`` and
    what ``agent_before_settle`` sees; ``answer(preparation)`` supplies the before-hook's result."""

    plugin_name = "observer"

    def __init__(self, answer: Callable[[Any], Any] | None = None) -> None:
        self.answer = answer
        self.log: list[tuple[str, dict[str, Any]]] = []

    def calls(self, hook: str) -> list[dict[str, Any]]:
        return [arguments for name, arguments in self.log if name == hook]

    @hookimpl
    def session_before_compact(
        self,
        preparation: Any,
        branch_entries: list[Any],
        custom_instructions: Any,
        reason: str,
        will_retry: bool,
        signal: Any,
    ) -> Any:
        self.log.append(
            (
                "session_before_compact",
                {
                    "preparation": preparation,
                    "branch_entries": branch_entries,
                    "custom_instructions": custom_instructions,
                    "reason": reason,
                    "will_retry": will_retry,
                    "signal": signal,
                },
            )
        )
        assert isinstance(signal, AbortSignal)
        return self.answer(preparation) if self.answer else None

    @hookimpl
    def session_compact(self, compaction_entry: Any, from_extension: bool) -> None:
        self.log.append(
            ("session_compact", {"entry": compaction_entry, "from_extension": from_extension})
        )

    @hookimpl
    def session_compact_failed(
        self, reason: str, error_message: Any, aborted: bool, will_retry: bool, from_extension: bool
    ) -> None:
        self.log.append(
            (
                "session_compact_failed",
                {
                    "reason": reason,
                    "error_message": error_message,
                    "aborted": aborted,
                    "will_retry": will_retry,
                    "from_extension": from_extension,
                },
            )
        )

    @hookimpl
    def agent_before_settle(self, ctx: Any) -> None:
        roles = [m["role"] for m in ctx.agent.session.build_context().messages]
        self.log.append(
            (
                "agent_before_settle",
                {"roles": roles, "messages": [m["role"] for m in ctx.agent.messages]},
            )
        )
