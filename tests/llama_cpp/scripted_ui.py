"""A scripted extension UI: answers dialogs like a user would, in order, and records them.

::

    ui = ScriptedUI(select("tiny-chat"), select(KEEP_OTHERS), confirm(True))

Each answer names the dialog kind it expects, so a test fails with a clear message when the
command asks something else. A ``select`` answer is an option or a unique prefix of one
(model options read ``tiny-chat — unloaded``). :data:`WAIT` never answers: the dialog stays open
until the code closes it (as a user who looks away). An answer may be a function of the dialog
(run when it opens, e.g. to cut the network first), returning the real answer.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


class _Wait:
    def __repr__(self) -> str:
        return "WAIT"


WAIT: Any = _Wait()


@dataclass
class Answer:
    kind: str
    value: Any


def select(value: Any) -> Answer:
    return Answer("select", value)


def confirm(value: Any) -> Answer:
    return Answer("confirm", value)


def text(value: Any) -> Answer:
    return Answer("input", value)


@dataclass
class Dialog:
    kind: str
    title: str
    options: list[str] = field(default_factory=list)
    message: str = ""
    secret: bool = False


class ScriptedUI:
    """An :class:`~knightcode.ExtensionUI` driven by a list of answers."""

    def __init__(self, *answers: Answer) -> None:
        self.answers: deque[Answer] = deque(answers)
        self.dialogs: list[Dialog] = []
        self.notices: list[tuple[str, str]] = []
        self.statuses: list[str | None] = []

    def add(self, *answers: Answer) -> None:
        self.answers.extend(answers)

    async def _answer(self, dialog: Dialog) -> Any:
        self.dialogs.append(dialog)
        if not self.answers:
            raise AssertionError(
                f"unexpected {dialog.kind} dialog {dialog.title!r} {dialog.options}"
            )
        answer = self.answers.popleft()
        if answer.kind != dialog.kind:
            raise AssertionError(f"expected a {answer.kind} dialog, got {dialog}")
        value = answer.value
        if callable(value):
            value = value(dialog)
            if inspect.isawaitable(value):
                value = await value
        if value is WAIT:
            await asyncio.Event().wait()  # until cancelled
        if dialog.kind == "select" and value is not None:
            matches = [o for o in dialog.options if o == value] or [
                o for o in dialog.options if o.startswith(value)
            ]
            if len(matches) != 1:
                raise AssertionError(f"{value!r} is not one option of {dialog.options}")
            value = matches[0]
        return value

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None:
        result: str | None = await self._answer(Dialog("select", title, list(options)))
        return result

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        return bool(await self._answer(Dialog("confirm", title, message=message)))

    async def input(
        self,
        title: str,
        placeholder: str = "",
        *,
        timeout: float | None = None,
        secret: bool = False,
    ) -> str | None:
        dialog = Dialog("input", title, message=placeholder, secret=secret)
        result: str | None = await self._answer(dialog)
        return result

    async def editor(self, title: str, prefill: str = "") -> str | None:
        result: str | None = await self._answer(Dialog("editor", title, message=prefill))
        return result

    def notify(self, message: str, level: str = "info") -> None:
        self.notices.append((level, message))

    def set_status(self, key: str, text: str | None) -> None:
        self.statuses.append(text)

    def notes(self, level: str | None = None) -> str:
        """Every notice (of ``level``) joined, for ``in`` assertions."""
        return "\n".join(m for lv, m in self.notices if level is None or lv == level)
