"""``RpcUI``: the plugins' ``ctx.ui`` in RPC mode, as ``extension_ui_request`` records.

Dialogs (``select``, ``confirm``, ``input``, ``editor``) write a request with a fresh ``id`` and
wait for the client's ``extension_ui_response`` with that ``id``. A dialog given a ``timeout``
(seconds in Python, sent as milliseconds like the reference) resolves to its default when the
client does not answer in time: ``None`` for a choice or text, ``False`` for a confirmation —
the same defaults as a cancelled dialog. Notices (``notify``, ``set_status``, ``set_widget``,
``set_title``, ``set_editor_text``) are fire-and-forget requests that expect no answer.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from typing import TypeVar

from knightcode._modes.rpc.commands import UiAnswer
from knightcode._modes.rpc.responses import Record

__all__ = ["RpcUI"]

T = TypeVar("T")
Write = Callable[[Record], None]


def _text_answer(answer: UiAnswer) -> str | None:
    return None if answer.cancelled else answer.value


def _confirm_answer(answer: UiAnswer) -> bool:
    return False if answer.cancelled else bool(answer.confirmed)


class RpcUI:
    """Implements :class:`knightcode._plugins.context.ExtensionUI` over the RPC stream.

    :param write: writes one record to stdout
    """

    def __init__(self, write: Write) -> None:
        self._write = write
        self._pending: dict[str, asyncio.Future[UiAnswer | None]] = {}
        self._closed = False

    # --- dialogs ----------------------------------------------------------------------------

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None:
        return await self._dialog(
            {"method": "select", "title": title, "options": list(options)},
            None,
            _text_answer,
            timeout,
        )

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        return await self._dialog(
            {"method": "confirm", "title": title, "message": message},
            False,
            _confirm_answer,
            timeout,
        )

    async def input(
        self,
        title: str,
        placeholder: str = "",
        *,
        timeout: float | None = None,
        secret: bool = False,
    ) -> str | None:
        request: Record = {"method": "input", "title": title, "placeholder": placeholder}
        if secret:
            # Only when set, so plain requests stay as the reference writes them; the client
            # masks the field. The answer arrives on stdin and is never written back to stdout.
            request["secret"] = True
        return await self._dialog(request, None, _text_answer, timeout)

    async def editor(self, title: str, prefill: str = "") -> str | None:
        return await self._dialog(
            {"method": "editor", "title": title, "prefill": prefill}, None, _text_answer, None
        )

    async def _dialog(
        self,
        request: Record,
        default: T,
        parse: Callable[[UiAnswer], T],
        timeout: float | None,
    ) -> T:
        if self._closed:
            return default  # shutting down: nobody will answer any more
        request_id = str(uuid.uuid4())
        future: asyncio.Future[UiAnswer | None] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        record: Record = {"type": "extension_ui_request", "id": request_id, **request}
        if timeout is not None and timeout > 0:
            record["timeout"] = int(timeout * 1000)
        self._write(record)
        try:
            if timeout is not None and timeout > 0:
                answer = await asyncio.wait_for(future, timeout)
            else:
                answer = await future
        except TimeoutError:
            return default
        finally:
            self._pending.pop(request_id, None)
        return default if answer is None else parse(answer)

    def resolve(self, answer: UiAnswer) -> bool:
        """Hand the client's answer to the waiting dialog; False when no dialog has that id
        (answered already, timed out, or never asked), which the reference ignores silently.
        """
        future = self._pending.pop(answer.id, None)
        if future is None or future.done():
            return False
        future.set_result(answer)
        return True

    @property
    def waiting(self) -> int:
        """How many dialogs wait for an answer."""
        return len(self._pending)

    def close(self) -> None:
        """Resolve every open dialog to its default and answer later ones at once (shutdown)."""
        self._closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_result(None)
        self._pending.clear()

    # --- notices ----------------------------------------------------------------------------

    def _notice(self, request: Record) -> None:
        # Written even while shutting down: stdout stays open until the process exits.
        self._write({"type": "extension_ui_request", "id": str(uuid.uuid4()), **request})

    def notify(self, message: str, level: str = "info") -> None:
        self._notice({"method": "notify", "message": message, "notifyType": level})

    def set_status(self, key: str, text: str | None) -> None:
        self._notice({"method": "setStatus", "statusKey": key, "statusText": text})

    def set_widget(self, key: str, lines: Sequence[str] | None) -> None:
        """Show lines of text under ``key`` in the client's UI (None removes the widget)."""
        self._notice(
            {
                "method": "setWidget",
                "widgetKey": key,
                "widgetLines": list(lines) if lines is not None else None,
            }
        )

    def set_title(self, title: str) -> None:
        """Ask the client to set its window or terminal title."""
        self._notice({"method": "setTitle", "title": title})

    def set_editor_text(self, text: str) -> None:
        """Ask the client to put ``text`` into its input editor."""
        self._notice({"method": "set_editor_text", "text": text})
