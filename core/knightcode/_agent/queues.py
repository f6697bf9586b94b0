"""Steering and follow-up queues.

Steering messages are delivered after the current tool batch, before the next model request;
follow-up messages only when the agent would otherwise stop. In ``one-at-a-time`` mode each
delivery takes one message; in ``all`` mode it takes the whole queue.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from knightcode._session.messages import content_text

if TYPE_CHECKING:
    from knightcode._types.messages import AgentMessage

Mode = Literal["one-at-a-time", "all"]
MODES: tuple[str, ...] = ("one-at-a-time", "all")


class MessageQueues:
    """The two queues; ``on_change`` is called with (steering texts, follow-up texts)."""

    def __init__(
        self,
        on_change: Callable[[list[str], list[str]], None],
        steering_mode: Mode = "one-at-a-time",
        follow_up_mode: Mode = "one-at-a-time",
    ) -> None:
        self.steering: list[AgentMessage] = []
        self.follow_up: list[AgentMessage] = []
        self.steering_mode: Mode = steering_mode
        self.follow_up_mode: Mode = follow_up_mode
        self._on_change = on_change

    def _changed(self) -> None:
        self._on_change([_text(m) for m in self.steering], [_text(m) for m in self.follow_up])

    def add_steering(self, message: AgentMessage) -> None:
        self.steering.append(message)
        self._changed()

    def add_follow_up(self, message: AgentMessage) -> None:
        self.follow_up.append(message)
        self._changed()

    def _take(self, queue: list[AgentMessage], mode: Mode) -> list[AgentMessage]:
        if not queue:
            return []
        taken = queue[:] if mode == "all" else queue[:1]
        del queue[: len(taken)]
        self._changed()
        return taken

    def take_steering(self) -> list[AgentMessage]:
        return self._take(self.steering, self.steering_mode)

    def take_follow_up(self) -> list[AgentMessage]:
        return self._take(self.follow_up, self.follow_up_mode)

    def clear(self) -> list[AgentMessage]:
        """Empty both queues (abort, ``dequeue``); returns what was queued, steering first."""
        taken = self.steering + self.follow_up
        if taken:
            self.steering, self.follow_up = [], []
            self._changed()
        return taken

    @property
    def pending(self) -> int:
        return len(self.steering) + len(self.follow_up)


def _text(message: AgentMessage) -> str:
    """How ``queue_update`` lists a queued message: its text."""
    content = message.get("content")
    return content_text(content if isinstance(content, (str, list)) else None)
