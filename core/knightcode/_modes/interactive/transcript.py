"""The transcript: session events in, finished items out to the scrollback, the rest live.

An item is *finished* when nothing about it can change any more: a user message at once, an
assistant message when it ended and every tool it called has its result, a summary, a notice.
Finished items are rendered once and written above the live region (:mod:`.scrollback`); they
are also kept, so that toggling thinking or tool output can print the transcript again.

The live part is the assistant message being streamed with its running tools. A delta only
stores the message and marks the view dirty (constant work per delta); the live region is
re-rendered by a timer at most ``LIVE_FPS`` times a second, and only its last screenful.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from rich.console import RenderableType

    from knightcode._types.events import SessionEvent
    from knightcode._types.messages import (
        AgentMessage,
        AssistantMessage,
        ToolCall,
        ToolResult,
        ToolResultMessage,
    )

__all__ = ["Transcript", "ViewOptions"]

NoticeLevel = Literal["info", "warning", "error"]


@dataclass
class ViewOptions:
    """What the reader chose to see; changing it reprints the transcript."""

    expand_tools: bool = False
    show_thinking: bool = False
    expand_hint: str = "ctrl+o"
    thinking_hint: str = "ctrl+t"


@dataclass
class Turn:
    """An assistant message and the results of the tools it called."""

    message: AssistantMessage
    results: dict[str, ToolResultMessage] = field(default_factory=dict)
    partial: dict[str, ToolResult] = field(default_factory=dict)
    running: set[str] = field(default_factory=set)
    ended: bool = False

    def calls(self) -> list[ToolCall]:
        return [block for block in self.message["content"] if block["type"] == "toolCall"]

    @property
    def finished(self) -> bool:
        return self.ended and all(call["id"] in self.results for call in self.calls())


@dataclass
class Item:
    """One finished thing in the transcript."""

    kind: Literal["message", "turn", "notice", "raw"]
    message: AgentMessage | None = None
    turn: Turn | None = None
    text: str = ""
    level: NoticeLevel = "info"
    renderable: RenderableType | None = None


class Transcript:
    """Turns session events into finished items and a live renderable.

    :param emit: writes a finished item's renderable to the scrollback
    :param live_changed: called (cheaply) when the live part changed; the app re-renders later
    :param render_item: renders an item with the current view options
    """

    def __init__(
        self,
        emit: Callable[[RenderableType], None],
        live_changed: Callable[[], None],
        render_item: Callable[[Item, ViewOptions], RenderableType],
    ) -> None:
        self._emit = emit
        self._live_changed = live_changed
        self._render_item = render_item
        self.options = ViewOptions()
        self.items: list[Item] = []
        self.turns: list[Turn] = []  # live, oldest first

    # --- finished items ---------------------------------------------------------------------

    def add(self, item: Item) -> None:
        """Keep ``item`` and write it to the scrollback."""
        self.items.append(item)
        self._emit(self._render_item(item, self.options))

    def notice(self, text: str, level: NoticeLevel = "info") -> None:
        self.add(Item("notice", text=text, level=level))

    def add_renderable(self, renderable: RenderableType) -> None:
        self.add(Item("raw", renderable=renderable))

    def rendered_items(self) -> list[RenderableType]:
        """Every finished item rendered with the current options (for a reprint)."""
        return [self._render_item(item, self.options) for item in self.items]

    def load(self, messages: list[AgentMessage]) -> None:
        """Show a session's existing messages (start-up, resume, tree navigation)."""
        turn: Turn | None = None
        for message in messages:
            if message["role"] == "assistant":
                if turn is not None:
                    self.add(Item("turn", turn=turn))
                turn = Turn(message, ended=True)
                if not turn.calls():
                    self.add(Item("turn", turn=turn))
                    turn = None
            elif message["role"] == "toolResult" and turn is not None:
                turn.results[message["toolCallId"]] = message
                if turn.finished:
                    self.add(Item("turn", turn=turn))
                    turn = None
            else:
                if turn is not None:
                    self.add(Item("turn", turn=turn))
                    turn = None
                self.add(Item("message", message=message))
        if turn is not None:
            self.add(Item("turn", turn=turn))

    # --- events -----------------------------------------------------------------------------

    def on_event(self, event: SessionEvent) -> None:
        if event["type"] == "message_start":
            message = event["message"]
            if message["role"] == "assistant":
                self.turns.append(Turn(message))
                self._live_changed()
            elif message["role"] not in ("toolResult",):
                self.add(Item("message", message=message))
        elif event["type"] == "message_update":
            if self.turns:
                self.turns[-1].message = event["message"]
                self._live_changed()
        elif event["type"] == "message_end":
            message = event["message"]
            if message["role"] == "assistant" and self.turns:
                self.turns[-1].message = message
                self.turns[-1].ended = True
                self._flush_finished()
            elif message["role"] == "toolResult":
                for turn in self.turns:
                    if any(call["id"] == message["toolCallId"] for call in turn.calls()):
                        turn.results[message["toolCallId"]] = message
                        turn.running.discard(message["toolCallId"])
                self._flush_finished()
        elif event["type"] == "tool_execution_start":
            for turn in self.turns:
                if any(call["id"] == event["toolCallId"] for call in turn.calls()):
                    turn.running.add(event["toolCallId"])
            self._live_changed()
        elif event["type"] == "tool_execution_update":
            for turn in self.turns:
                if event["toolCallId"] in turn.running:
                    turn.partial[event["toolCallId"]] = event["partialResult"]
            self._live_changed()
        elif event["type"] == "agent_end":
            self.flush_all()

    def _flush_finished(self) -> None:
        # In order: a finished turn waits behind an unfinished older one.
        while self.turns and self.turns[0].finished:
            self.add(Item("turn", turn=self.turns.pop(0)))
        self._live_changed()

    def flush_all(self) -> None:
        """Write whatever is live as it stands (the run ended or was interrupted)."""
        while self.turns:
            turn = self.turns.pop(0)
            turn.ended = True
            self.add(Item("turn", turn=turn))
        self._live_changed()
