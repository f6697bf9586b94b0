"""A minimal, fast server-sent-events decoder.

It is fed raw byte chunks as they arrive and returns, per chunk, the list of complete events in
it, so a client pays one Python-level iteration per *network read* rather than one async step per
line (a streamed answer is tens of thousands of one-token events). Lines are split on LF only;
one trailing CR is stripped, so CRLF streams work too. Only ``data`` (and, in :meth:`feed_events`,
``event``) fields matter to model APIs; ``id``, ``retry`` and comments are ignored.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import AsyncGenerator, AsyncIterator, Callable

__all__ = ["SSEDecoder", "iter_sse_data", "parse_json"]


class SSEDecoder:
    """Turns a byte stream into SSE events; keep one per response."""

    __slots__ = ("_data", "_event", "_tail")

    def __init__(self) -> None:
        self._tail = b""
        self._data: list[str] = []
        self._event = ""

    def feed(self, chunk: bytes) -> list[str]:
        """The ``data`` payloads (multi-line data joined by LF) of the events completed by
        ``chunk``. Event names are skipped like ``id`` (model APIs repeat the type in the data);
        use :meth:`feed_events` when they matter.
        """
        out: list[str] = []
        data = self._data
        for line in self._lines(chunk):
            if not line:
                if data:
                    out.append(data[0] if len(data) == 1 else "\n".join(data))
                    data = self._data = []
            elif line[:6] == "data: ":
                data.append(line[6:])
            elif line[:5] == "data:":
                data.append(line[5:])
            # other fields (event, id, retry) and ":" comments carry nothing needed here
        return out

    def feed_events(self, chunk: bytes) -> list[tuple[str, str]]:
        """``(event name, data)`` for each event completed by ``chunk``; the name is
        ``"message"`` when the event has none.
        """
        out: list[tuple[str, str]] = []
        for line in self._lines(chunk):
            if not line:
                if self._data:
                    data = self._data
                    out.append(
                        (self._event or "message", data[0] if len(data) == 1 else "\n".join(data))
                    )
                self._data = []
                self._event = ""
                continue
            name, _, value = line.partition(":")
            if value[:1] == " ":
                value = value[1:]
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._event = value
        return out

    def flush(self) -> list[str]:
        """At end of stream: a last event not followed by a blank line.

        Strictly such an event is incomplete, but some servers omit the final blank line; the
        client decides from the content whether the stream really finished.
        """
        return self.feed(b"\n\n") if (self._tail or self._data) else []

    def _lines(self, chunk: bytes) -> list[str]:
        # Decode once per network read, up to the last LF: a LF byte never occurs inside a
        # multi-byte UTF-8 sequence, so the cut is always on a character boundary. Splitting the
        # str on "\n" only (not splitlines) keeps U+2028 and friends inside their line.
        buffer = self._tail + chunk if self._tail else chunk
        cut = buffer.rfind(b"\n")
        if cut < 0:
            self._tail = buffer
            return []
        self._tail = buffer[cut + 1 :]
        text = buffer[:cut].decode("utf-8", "replace")
        lines = text.split("\n")
        if "\r" in text:  # CRLF framing: strip one trailing CR per line
            lines = [line[:-1] if line[-1:] == "\r" else line for line in lines]
        return lines


async def iter_sse_data(chunks: AsyncIterator[bytes]) -> AsyncGenerator[list[str], None]:
    """The ``data`` payloads of a byte stream, as one list per network read (possibly empty),
    and at the end whatever :meth:`SSEDecoder.flush` finds.
    """
    decoder = SSEDecoder()
    async for chunk in chunks:
        yield decoder.feed(chunk)
    tail = decoder.flush()
    if tail:
        yield tail


# typeshed types the C scanner's argument as the Python fallback class; a decoder is what it takes.
_scan: Callable[[str, int], tuple[object, int]] = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def parse_json(text: str) -> object:
    """Parse one JSON event payload.

    The C scanner behind ``json.loads`` is called directly: the wrapper's encoding detection and
    whitespace checks cost more than the parse itself for a 150-byte chunk. Anything unusual
    (leading whitespace, invalid JSON) falls back to ``json.loads`` for its error message.

    The result is any JSON value: a client states the shape it expects once, where it binds this
    function (see ``openai_completions``), not per payload.
    """
    try:
        return _scan(text, 0)[0]
    except StopIteration:
        return json.loads(text)
