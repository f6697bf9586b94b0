"""The transcript's bookkeeping: what is printed when, and that nothing is printed twice.

Drives :class:`Transcript` with the session events a streamed turn produces and records what it
prints (a recording ``Renderers``: the text of each piece, instead of rich renderables).
"""

from __future__ import annotations

from typing import Any

from knightcode._modes.interactive.transcript import (
    SCREENS_ON_LOAD,
    SHOWN_ON_LOAD,
    Item,
    Transcript,
    Turn,
)
from knightcode._types.messages import AssistantContent


class Recorder:
    """Renders every piece as a short text and keeps what was emitted."""

    def __init__(self) -> None:
        self.printed: list[str] = []
        self.live_changes = 0

    def emit(self, renderable: object) -> None:
        if renderable is not None:
            self.printed.append(str(renderable))

    def live(self) -> None:
        self.live_changes += 1

    # Renderers
    def item(self, item: Item) -> str | None:
        if item.kind == "notice":
            return f"notice:{item.text}"
        if item.kind == "turn" and item.turn is not None:
            return "turn:" + "".join(
                b["text"] for b in item.turn.message["content"] if b["type"] == "text"
            )
        if item.message is not None:
            return f"message:{item.message['role']}"
        return None

    def text(self, item: Item) -> str | None:
        return self.item(item)

    def markdown(self, text: str) -> str:
        return f"md:{text.strip()}"

    def block(self, block: AssistantContent) -> str | None:
        if block["type"] == "thinking":
            return "thinking"
        if block["type"] == "text":
            return f"text:{block['text'].strip()}"
        return None

    def tools_and_stop(self, turn: Turn) -> str | None:
        calls = [b for b in turn.message["content"] if b["type"] == "toolCall"]
        return f"tools:{len(calls)}" if calls else None


def _transcript() -> tuple[Transcript, Recorder]:
    recorder = Recorder()
    transcript = Transcript(recorder.emit, recorder.emit, recorder.live, recorder)  # type: ignore[arg-type]
    return transcript, recorder


def _assistant(content: list[dict[str, Any]], stop: str = "stop") -> dict[str, Any]:
    return {"role": "assistant", "content": content, "stopReason": stop}


def _stream(transcript: Transcript, text: str, chunk: int = 3, index: int = 0) -> None:
    sent = ""
    for start in range(0, len(text), chunk):
        delta = text[start : start + chunk]
        sent += delta
        message = _assistant([{"type": "text", "text": sent}])
        transcript.on_event(
            {
                "type": "message_update",
                "message": message,  # type: ignore[typeddict-item]
                "assistantMessageEvent": {
                    "type": "text_delta",
                    "contentIndex": index,
                    "delta": delta,
                    "partial": message,  # type: ignore[typeddict-item]
                },
            }
        )


def test_completed_blocks_are_printed_while_streaming_and_nothing_twice() -> None:
    transcript, recorder = _transcript()
    text = "First paragraph.\n\nSecond paragraph.\n\n```py\nprint(1)\n```\n\nTail words"
    transcript.on_event({"type": "message_start", "message": _assistant([])})  # type: ignore[typeddict-item]
    _stream(transcript, text[: text.index("Second")])
    assert recorder.printed == ["md:First paragraph."]  # printed as soon as it was complete
    _stream(transcript, text[text.index("Second") :])
    assert recorder.printed[-1] == "md:```py\nprint(1)\n```"
    assert "Tail words" not in "".join(recorder.printed)  # the open block stays live
    live = transcript.turns[0]
    assert live.stream is not None and live.stream.tail().strip() == "Tail words"
    final = _assistant([{"type": "text", "text": text}])
    transcript.on_event({"type": "message_end", "message": final})  # type: ignore[typeddict-item]
    assert recorder.printed == [
        "md:First paragraph.",
        "md:Second paragraph.",
        "md:```py\nprint(1)\n```",
        "md:Tail words",
    ]
    assert transcript.turns == []
    # Kept whole for a reprint (ctrl+o), not printed again now.
    assert [item.kind for item in transcript.items] == ["turn"]


def test_a_turn_with_tools_prints_its_text_then_waits_for_the_results() -> None:
    transcript, recorder = _transcript()
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}
    message = _assistant([{"type": "text", "text": "Looking."}, call], stop="toolUse")
    transcript.on_event({"type": "message_start", "message": _assistant([])})  # type: ignore[typeddict-item]
    transcript.on_event({"type": "message_end", "message": message})  # type: ignore[typeddict-item]
    assert recorder.printed == ["text:Looking."]  # the tool block waits for its result
    result = {"role": "toolResult", "toolCallId": "c1", "content": [], "isError": False}
    transcript.on_event({"type": "message_start", "message": result})  # type: ignore[typeddict-item]
    transcript.on_event({"type": "message_end", "message": result})  # type: ignore[typeddict-item]
    assert recorder.printed == ["text:Looking.", "tools:1"]


def test_an_interrupted_stream_prints_what_arrived() -> None:
    transcript, recorder = _transcript()
    transcript.on_event({"type": "message_start", "message": _assistant([])})  # type: ignore[typeddict-item]
    _stream(transcript, "half a sent")
    transcript.flush_all()
    assert recorder.printed == ["md:half a sent"]


def test_opening_a_long_session_prints_only_its_last_items() -> None:
    transcript, recorder = _transcript()
    messages = []
    for n in range(SHOWN_ON_LOAD):
        messages.append({"role": "user", "content": f"q{n}"})
        messages.append(_assistant([{"type": "text", "text": f"a{n}"}]))
    transcript.load(messages, screen_lines=1000)  # type: ignore[arg-type]
    assert recorder.printed[0] == f"notice:{SHOWN_ON_LOAD:,} earlier messages are not shown " + (
        "here (/tree moves through them, /export writes them all)"
    )
    assert len(recorder.printed) == SHOWN_ON_LOAD + 1
    assert recorder.printed[-1] == f"turn:a{SHOWN_ON_LOAD - 1}"


def test_opening_a_session_prints_what_fills_a_few_screens() -> None:
    transcript, recorder = _transcript()
    messages = [
        {"role": "user", "content": f"q{n}"} if n % 2 == 0 else _assistant([]) for n in range(100)
    ]
    transcript.load(messages, screen_lines=10)  # type: ignore[arg-type]
    shown = SCREENS_ON_LOAD * 10  # one line per item here
    assert recorder.printed[0].startswith(f"notice:{100 - shown} earlier messages")
    assert len(recorder.printed) == shown + 1
    assert [item.kind for item in transcript.items][-1] == "turn"


def test_a_reprint_while_a_turn_streams_keeps_what_it_printed_already() -> None:
    transcript, recorder = _transcript()
    transcript.on_event({"type": "message_start", "message": _assistant([])})  # type: ignore[typeddict-item]
    _stream(transcript, "Already printed.\n\nStill open")
    assert recorder.printed == ["md:Already printed."]
    # A resize reprints everything: the live turn's printed block must be part of it.
    assert [str(r) for r in transcript.rendered_items()] == ["md:Already printed."]
