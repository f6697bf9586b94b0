"""Answering a script's requests on the host: tool calls through the kernel, classifications
through the model registry.

A tool call becomes ``ctx.call_tool`` — a nested call with the ``tool_call``/``tool_result``
hooks, its own execution events and ``parentToolCallId`` — limited to the tools the script may
call. ``classify`` goes to ``ctx.context.model_registry.classify`` with the call's abort signal.
Every request is recorded for the ``code`` result's summary and, when it starts, reported as a
partial result (the calls so far, ``read ✓``/``grep …``), which the interactive UI shows under
the running ``code`` call.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode import ToolContext

    from .channel import Channel

__all__ = ["CallRecord", "Dispatcher", "serve"]

_POLL_FIRST = 0.0005  # seconds: right after a request the next one tends to follow soon
_POLL_MAX = 0.02


@dataclass
class CallRecord:
    """One request of the script: ``name`` is the tool (or ``classify``); ``ok`` is None while
    it runs.
    """

    name: str
    call_id: str | None = None
    ok: bool | None = None

    def to_json(self) -> dict[str, object]:
        """The record in the ``code`` result's ``details.calls``."""
        data: dict[str, object] = {"name": self.name, "ok": self.ok}
        if self.call_id is not None:
            data["toolCallId"] = self.call_id
        return data

    def mark(self) -> str:
        """``read ✓``: one line of the live progress."""
        status = "…" if self.ok is None else ("✓" if self.ok else "✗")
        return f"{self.name} {status}"


class Dispatcher:
    """Answers requests for one ``code`` call.

    :param ctx: the ``code`` call's context (its nested calls and abort signal)
    :param allowed: the tools the script may call
    :param progress: called with the records whenever one starts
    """

    def __init__(
        self,
        ctx: ToolContext,
        allowed: Collection[str],
        progress: Callable[[list[CallRecord]], None],
    ) -> None:
        self._ctx = ctx
        self._allowed = allowed
        self._progress = progress
        self.records: list[CallRecord] = []

    async def handle(self, request: object) -> dict[str, object]:
        """The answer to one request (never raises for a failed call: it is an answer)."""
        if not isinstance(request, dict):
            return _failure("the request could not be read")
        op = request.get("op")
        if op == "call":
            return await self._call(request.get("tool"), request.get("args"))
        if op == "classify":
            return await self._classify(request)
        return _failure(f"unknown request {op!r}")

    def _begin(self, name: str) -> CallRecord:
        record = CallRecord(name)
        self.records.append(record)
        self._progress(self.records)
        return record

    def _end(self, record: CallRecord, ok: bool) -> None:
        # Not reported by itself: the next start (or the code call's result) shows it, which
        # halves the updates on the stream.
        record.ok = ok

    async def _call(self, tool: object, args: object) -> dict[str, object]:
        if not isinstance(tool, str) or not isinstance(args, dict):
            return _failure("a tool call needs a tool name and an arguments object")
        if tool not in self._allowed:
            listed = ", ".join(sorted(self._allowed)) or "none"
            return _failure(f"{tool!r} cannot be called from a script (callable: {listed})")
        record = self._begin(tool)
        result = await self._ctx.call_tool(tool, {str(key): value for key, value in args.items()})
        record.call_id = result.tool_call_id
        self._end(record, not result.is_error)
        if result.is_error:
            return {"ok": False, "error": result.text, "details": result.details}
        return {"ok": True, "text": result.text, "details": result.details}

    async def _classify(self, request: dict[object, object]) -> dict[str, object]:
        from knightcode import ClassificationError

        registry = self._ctx.context.model_registry if self._ctx.context is not None else None
        model, state, questions = (request.get(key) for key in ("model", "state", "questions"))
        temperature = request.get("temperature", 1.0)
        if registry is None:
            return _failure("classify needs a session (no model registry here)")
        if not isinstance(model, str) or not isinstance(questions, dict):
            return _failure(
                "classify(model, state, questions): model is 'provider/id', "
                "questions a dict of question id -> question"
            )
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
            return _failure("classify: temperature must be a number")
        record = self._begin(f"classify({model})")
        try:
            found = await registry.classify(
                model,
                state,
                {str(key): value for key, value in questions.items()},
                temperature=float(temperature),
                signal=self._ctx.signal,
            )
        except ClassificationError as error:
            self._end(record, False)
            return _failure(str(error))
        self._end(record, True)
        answers = {qid: dataclasses.asdict(answer) for qid, answer in found.answers.items()}
        return {"ok": True, "answers": answers, "model": found.model.ref}


def _failure(message: str) -> dict[str, object]:
    return {"ok": False, "error": message}


async def serve(channel: Channel, dispatcher: Dispatcher, stop: asyncio.Event) -> None:
    """Answer the script's requests until ``stop`` is set (the script has ended) or the task is
    cancelled.
    """
    delay = _POLL_FIRST
    while not stop.is_set():
        try:
            requests = channel.take_requests()
        except OSError:  # the script removed its own channel: nobody is left to answer
            return
        if not requests:
            await asyncio.sleep(delay)
            delay = min(delay * 2, _POLL_MAX)
            continue
        delay = _POLL_FIRST
        for number, request in requests:
            try:
                answer = await dispatcher.handle(request)
            except Exception as error:  # a bug must not leave the script waiting forever
                answer = _failure(f"{type(error).__name__}: {error}")
            channel.respond(number, answer)
