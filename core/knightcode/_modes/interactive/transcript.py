"""The transcript: session events in, finished items out to the scrollback, the rest live.

An item is *finished* when nothing about it can change any more: a user message at once, an
assistant message when it ended and every tool it called has its result, a summary, a notice.
Finished items are rendered once and written above the live region (:mod:`.scrollback`); they
are also kept, so that toggling thinking or tool output can print the transcript again.

The live part is the assistant message being streamed with its running tools. Its text goes
through :class:`~.render.StreamingMarkdown`: a delta costs work proportional to its own length,
each top-level block (paragraph, list, code block…) is printed to the scrollback once as soon as
it is complete, and the live region re-renders only the open block — by a timer, at most
``LIVE_FPS`` times a second. The cost of a delta does not grow with the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from rich.console import RenderableType

    from knightcode._modes.interactive.render.markdown_stream import StreamingMarkdown
    from knightcode._types.events import SessionEvent
    from knightcode._types.messages import (
        AgentMessage,
        AssistantContent,
        AssistantMessage,
        ToolCall,
        ToolResult,
        ToolResultMessage,
    )

__all__ = ["Renderers", "Transcript", "ViewOptions", "group_messages"]

NoticeLevel = Literal["info", "warning", "error"]

#: At most this many finished items of an existing session are printed when it is opened …
SHOWN_ON_LOAD = 200
#: … and no more than fill this many screens.
SCREENS_ON_LOAD = 3
#: How many messages from the end are grouped into items for that (tool results included).
TAIL_MESSAGES_PER_ITEM = 8


@dataclass
class ViewOptions:
    """What the reader chose to see; changing it reprints the transcript."""

    expand_tools: bool = False
    show_thinking: bool = False
    expand_hint: str = "ctrl+o"
    thinking_hint: str = "ctrl+t"


@dataclass
class Turn:
    """An assistant message and the results of the tools it called.

    ``printed`` content blocks are in the scrollback already; ``stream`` splits the text block
    at ``stream_index`` while it streams.
    """

    message: AssistantMessage
    results: dict[str, ToolResultMessage] = field(default_factory=dict)
    partial: dict[str, ToolResult] = field(default_factory=dict)
    running: set[str] = field(default_factory=set)
    ended: bool = False
    printed: int = 0
    stream: StreamingMarkdown | None = None
    stream_index: int = -1
    pieces: list[str | int] = field(default_factory=list)
    """What of it is in the scrollback already: streamed markdown blocks (text) and content
    blocks (their index), in order — for printing it again (a reprint) while it is live."""

    def calls(self) -> list[ToolCall]:
        return [block for block in self.message["content"] if block["type"] == "toolCall"]

    @property
    def finished(self) -> bool:
        return self.ended and all(call["id"] in self.results for call in self.calls())


class Renderers(Protocol):
    """How the transcript gets its pieces drawn (the app binds width, theme and toggles)."""

    def item(self, item: Item) -> RenderableType | None: ...

    def text(self, item: Item) -> str | None:
        """``item`` rendered to terminal text at the current width (None: nothing shown)."""
        ...

    def markdown(self, text: str) -> RenderableType | None: ...

    def block(self, block: AssistantContent) -> RenderableType | None: ...

    def tools_and_stop(self, turn: Turn) -> RenderableType | None: ...


@dataclass
class Item:
    """One finished thing in the transcript."""

    kind: Literal["message", "turn", "notice", "raw"]
    message: AgentMessage | None = None
    turn: Turn | None = None
    text: str = ""
    level: NoticeLevel = "info"
    renderable: RenderableType | None = None


def group_messages(messages: list[AgentMessage], first: int = 0) -> list[tuple[Item, int]]:
    """``messages[first:]`` as transcript items, each with the index of its first message: an
    assistant message and its tools' results make one turn.
    """
    items: list[tuple[Item, int]] = []
    turn: Turn | None = None
    turn_start = 0
    for index in range(first, len(messages)):
        message = messages[index]
        if message["role"] == "assistant":
            if turn is not None:
                items.append((Item("turn", turn=turn), turn_start))
            turn, turn_start = Turn(message, ended=True, printed=len(message["content"])), index
            if not turn.calls():
                items.append((Item("turn", turn=turn), turn_start))
                turn = None
        elif message["role"] == "toolResult":
            if turn is not None:
                turn.results[message["toolCallId"]] = message
                if turn.finished:
                    items.append((Item("turn", turn=turn), turn_start))
                    turn = None
            # (a result whose call lies before ``first`` shows nothing)
        else:
            if turn is not None:
                items.append((Item("turn", turn=turn), turn_start))
                turn = None
            items.append((Item("message", message=message), index))
    if turn is not None:
        items.append((Item("turn", turn=turn), turn_start))
    return items


class Transcript:
    """Turns session events into finished items and a live renderable.

    :param emit: writes a renderable to the scrollback (None: nothing to show)
    :param emit_text: writes text already rendered (:meth:`Renderers.text`) to the scrollback
    :param live_changed: called (cheaply) when the live part changed; the app re-renders later
    :param render: the app's renderers at the current width and view options
    """

    def __init__(
        self,
        emit: Callable[[RenderableType | None], None],
        emit_text: Callable[[str], None],
        live_changed: Callable[[], None],
        render: Renderers,
    ) -> None:
        self._emit = emit
        self._emit_text = emit_text
        self._live_changed = live_changed
        self._render = render
        self.options = ViewOptions()
        self.items: list[Item] = []
        self.turns: list[Turn] = []  # live, oldest first
        self.adding: Item | None = None
        """The item being written while :meth:`add` runs (fullscreen marks user messages)."""

    # --- finished items ---------------------------------------------------------------------

    def add(self, item: Item) -> None:
        """Keep ``item`` and write it to the scrollback."""
        self.items.append(item)
        self.adding = item
        try:
            self._emit(self._render.item(item))
        finally:
            self.adding = None

    def notice(self, text: str, level: NoticeLevel = "info") -> None:
        self.add(Item("notice", text=text, level=level))

    def add_renderable(self, renderable: RenderableType) -> None:
        self.add(Item("raw", renderable=renderable))

    def rendered_items(self) -> list[RenderableType]:
        """Everything in the scrollback, rendered with the current options (for a reprint):
        the finished items, then what the live turns printed already.
        """
        rendered = [self._render.item(item) for item in self.items]
        for turn in self.turns:
            content = turn.message["content"]
            for piece in turn.pieces:
                if isinstance(piece, str):
                    rendered.append(self._render.markdown(piece))
                elif piece < len(content):
                    rendered.append(self._render.block(content[piece]))
        return [r for r in rendered if r is not None]

    def load(self, messages: list[AgentMessage], screen_lines: int = 50) -> None:
        """Show a session's existing messages (start-up, resume, tree navigation).

        Only the last few screens of it are printed (``screen_lines`` is the terminal's
        height): a long session would otherwise take seconds to render into the scrollback
        before the editor is usable. A first line says how many earlier ones there are and where
        to find them.
        """
        # Only the tail can be shown: group that much (a long session has ~100,000 messages).
        first = max(0, len(messages) - SHOWN_ON_LOAD * TAIL_MESSAGES_PER_ITEM)
        items = group_messages(messages, first)
        shown = self._last_screens([item for item, _ in items], screen_lines)
        starts = {id(item): start for item, start in items}
        hidden = starts[id(shown[0][0])] if shown else len(messages)
        if hidden > 0:
            self.notice(
                f"{hidden:,} earlier messages are not shown here "
                "(/tree moves through them, /export writes them all)"
            )
        for item, text in shown:
            self.items.append(item)
            self._emit_text(text)

    def _last_screens(self, items: list[Item], screen_lines: int) -> list[tuple[Item, str]]:
        """The last items, rendered, that fill :data:`SCREENS_ON_LOAD` screens (at most
        :data:`SHOWN_ON_LOAD` of them): rendered newest first, so a long session costs only what
        is shown.
        """
        shown: list[tuple[Item, str]] = []
        lines = 0
        for item in reversed(items):
            if len(shown) >= SHOWN_ON_LOAD or lines >= SCREENS_ON_LOAD * screen_lines:
                break
            text = self._render.text(item)
            if text is None:
                continue
            shown.append((item, text))
            lines += text.count("\n") + 1
        shown.reverse()
        return shown

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
                turn = self.turns[-1]
                turn.message = event["message"]
                update = event["assistantMessageEvent"]
                if update["type"] == "text_delta":
                    self._stream_text(turn, update["contentIndex"], update["delta"])
                elif update["type"] == "text_end" and turn.stream_index == update["contentIndex"]:
                    self._end_stream(turn)
                self._live_changed()
        elif event["type"] == "message_end":
            message = event["message"]
            if message["role"] == "assistant" and self.turns:
                turn = self.turns[-1]
                turn.message = message
                turn.ended = True
                self._print_text_blocks(turn, len(message["content"]))
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

    # --- streaming ----------------------------------------------------------------------------

    def _stream_text(self, turn: Turn, index: int, delta: str) -> None:
        if turn.stream is None or turn.stream_index != index:
            if turn.stream is not None:
                self._end_stream(turn)
            self._print_text_blocks(turn, index)  # thinking before this text, printed in order
            from knightcode._modes.interactive.render.markdown_stream import StreamingMarkdown

            turn.stream, turn.stream_index = StreamingMarkdown(), index
        turn.stream.append(delta)
        for block in turn.stream.take_completed():
            if block.strip():
                turn.pieces.append(block)
                self._emit(self._render.markdown(block))

    def _end_stream(self, turn: Turn) -> None:
        if turn.stream is None:
            return
        for block in turn.stream.finish():
            turn.pieces.append(block)
            self._emit(self._render.markdown(block))
        turn.printed = max(turn.printed, turn.stream_index + 1)
        turn.stream, turn.stream_index = None, -1

    def _print_text_blocks(self, turn: Turn, upto: int) -> None:
        """Print the thinking and text blocks before ``upto`` not printed yet (tool calls wait
        for their results).
        """
        self._end_stream(turn)
        content = turn.message["content"]
        for index in range(turn.printed, min(upto, len(content))):
            block = content[index]
            if block["type"] != "toolCall":
                turn.pieces.append(index)
                self._emit(self._render.block(block))
        turn.printed = max(turn.printed, min(upto, len(content)))

    def _finish_turn(self, turn: Turn) -> None:
        self._print_text_blocks(turn, len(turn.message["content"]))
        self._emit(self._render.tools_and_stop(turn))
        self.items.append(Item("turn", turn=turn))  # kept for reprints; printed piece by piece

    def _flush_finished(self) -> None:
        # In order: a finished turn waits behind an unfinished older one.
        while self.turns and self.turns[0].finished:
            self._finish_turn(self.turns.pop(0))
        self._live_changed()

    def flush_all(self) -> None:
        """Write whatever is live as it stands (the run ended or was interrupted)."""
        while self.turns:
            turn = self.turns.pop(0)
            turn.ended = True
            self._finish_turn(turn)
        self._live_changed()
