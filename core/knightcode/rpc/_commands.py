"""One typed method per RPC command, mixed into :class:`knightcode.rpc.Client`.

Each method sends its command, waits for the response and returns its ``data`` (None for
commands that have none); a failed command raises :class:`knightcode.rpc.RpcError`. The return
types are the ``TypedDict`` shapes of :mod:`knightcode.rpc._types`, the same ones the server's
handlers are checked against; a response whose ``data`` is not an object with every required
key of its shape raises :class:`TypeError` (a client talking to something that is not a
knightcode of this protocol).
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, NotRequired, TypeVar, cast

from knightcode.rpc import _types as t

if TYPE_CHECKING:
    from knightcode._types.messages import ThinkingLevel

    Record = dict[str, object]

T = TypeVar("T")

QueueMode = t.QueueMode


_REQUIRED_KEYS: dict[object, frozenset[str]] = {}


def _required_keys(shape: object) -> frozenset[str]:
    """The keys a ``TypedDict`` requires (worked out once per shape)."""
    keys = _REQUIRED_KEYS.get(shape)
    if keys is None:
        # get_type_hints resolves the postponed annotations; ``__required_keys__`` cannot be
        # used: under ``from __future__ import annotations`` Python 3.11 counts NotRequired
        # keys as required.
        hints = typing.get_type_hints(shape, include_extras=True)
        keys = frozenset(
            k for k, hint in hints.items() if typing.get_origin(hint) is not NotRequired
        )
        _REQUIRED_KEYS[shape] = keys
    return keys


def expect_shape(data: object, shape: type[T], command: str) -> T:
    """``data`` as the ``TypedDict`` ``shape``, after checking it is an object that has every
    key ``shape`` requires.

    :raises TypeError: when it is not
    """
    if not isinstance(data, dict) or not _required_keys(shape) <= data.keys():
        raise TypeError(f"{command}: unexpected response data {data!r:.200}")
    # The check above is what the cast relies on: an object with the shape's keys, built by a
    # server whose handlers are type-checked against the same shape.
    return cast(T, data)


class CommandMixin:
    """The command methods; :meth:`call` and the event helpers come from the client."""

    if TYPE_CHECKING:
        # Provided by the client; declared here for the type checker.
        history: list[Record]

        async def call(
            self, command: Mapping[str, object], *, timeout: float | None = None
        ) -> object:
            """See :meth:`knightcode.rpc.Client.call`."""

        def mark(self) -> int:
            """See :meth:`knightcode.rpc.Client.mark`."""

        async def wait_for(
            self,
            predicate: Callable[[Record], bool],
            *,
            since: int = 0,
            timeout: float | None = None,
        ) -> Record:
            """See :meth:`knightcode.rpc.Client.wait_for`."""

        def subscribe(self, listener: Callable[[Record], None]) -> Callable[[], None]:
            """See :meth:`knightcode.rpc.Client.subscribe`."""

    async def _data(self, command: Mapping[str, object], shape: type[T]) -> T:
        """Send ``command`` and return its ``data``, checked against ``shape``."""
        return expect_shape(await self.call(command), shape, str(command.get("type")))

    async def _optional(self, command: Mapping[str, object], shape: type[T]) -> T | None:
        """Like :meth:`_data` for commands that answer ``null`` when they had nothing to do."""
        data = await self.call(command)
        return None if data is None else expect_shape(data, shape, str(command.get("type")))

    # --- prompting ---------------------------------------------------------------------------

    async def prompt(
        self,
        message: str,
        *,
        images: Sequence[Mapping[str, object]] | None = None,
        streaming_behavior: Literal["steer", "followUp"] | None = None,
    ) -> None:
        """Send a prompt; returns once knightcode accepted it (running or queued). A message
        ``/name args`` for a plugin command runs that command instead.
        """
        command: Record = {"type": "prompt", "message": message}
        if images:
            command["images"] = [dict(image) for image in images]
        if streaming_behavior:
            command["streamingBehavior"] = streaming_behavior
        await self.call(command)

    async def prompt_and_wait(
        self,
        message: str,
        *,
        timeout: float | None = None,
        images: Sequence[Mapping[str, object]] | None = None,
        streaming_behavior: Literal["steer", "followUp"] | None = None,
    ) -> list[Record]:
        """Send a prompt and wait until the agent settles; returns the events of the run."""
        mark = self.mark()
        await self.prompt(message, images=images, streaming_behavior=streaming_behavior)
        await self.wait_for(
            lambda event: event["type"] == "agent_settled", since=mark, timeout=timeout
        )
        return self.history[mark:]

    async def steer(
        self, message: str, *, images: Sequence[Mapping[str, object]] | None = None
    ) -> None:
        """Queue a message delivered after the running tool calls."""
        await self.call(
            {"type": "steer", "message": message, **({"images": list(images)} if images else {})}
        )

    async def follow_up(
        self, message: str, *, images: Sequence[Mapping[str, object]] | None = None
    ) -> None:
        """Queue a message delivered when the agent would otherwise stop."""
        await self.call(
            {
                "type": "follow_up",
                "message": message,
                **({"images": list(images)} if images else {}),
            }
        )

    async def abort(self) -> None:
        """Abort the running prompt; returns once it has settled."""
        await self.call({"type": "abort"})

    # --- state, model, thinking ---------------------------------------------------------------

    async def get_state(self) -> t.State:
        """The session's state: model, thinking level, streaming flags, queues, session file."""
        return await self._data({"type": "get_state"}, t.State)

    async def get_messages(self) -> list[t.Message]:
        """The conversation as the model sees it, oldest message first."""
        return (await self._data({"type": "get_messages"}, t.MessageList))["messages"]

    async def set_model(self, provider: str, model_id: str) -> t.ModelInfo:
        """Switch to ``provider/model_id``; returns the model."""
        command = {"type": "set_model", "provider": provider, "modelId": model_id}
        return await self._data(command, t.ModelInfo)

    async def cycle_model(self) -> t.CycleModelResult | None:
        """Switch to the next available model; None when there is no other."""
        return await self._optional({"type": "cycle_model"}, t.CycleModelResult)

    async def get_available_models(self) -> list[t.ModelInfo]:
        """The models the session can switch to (a live server is asked again)."""
        return (await self._data({"type": "get_available_models"}, t.ModelList))["models"]

    async def set_thinking_level(self, level: str) -> None:
        """Set the thinking level (``off`` … ``xhigh``) for reasoning models."""
        await self.call({"type": "set_thinking_level", "level": level})

    async def cycle_thinking_level(self) -> ThinkingLevel | None:
        """Step to the next thinking level; None for a model that does not reason."""
        data = await self._optional({"type": "cycle_thinking_level"}, t.ThinkingLevelResult)
        return None if data is None else data["level"]

    async def set_steering_mode(self, mode: QueueMode) -> None:
        """How queued steering messages are delivered: ``all`` at once or ``one-at-a-time``."""
        await self.call({"type": "set_steering_mode", "mode": mode})

    async def set_follow_up_mode(self, mode: QueueMode) -> None:
        """How queued follow-up messages are delivered: ``all`` at once or ``one-at-a-time``."""
        await self.call({"type": "set_follow_up_mode", "mode": mode})

    # --- compaction and retry -----------------------------------------------------------------

    async def compact(self, custom_instructions: str | None = None) -> dict[str, object] | None:
        """Summarise older history now; returns the compaction plugin's result (normally the
        fields of :class:`~knightcode.rpc._types.CompactionResult`: ``summary``,
        ``firstKeptEntryId``, ``tokensBefore`` …, but a plugin may report fewer), or None when
        nothing was compacted.
        """
        command: Record = {"type": "compact"}
        if custom_instructions is not None:
            command["customInstructions"] = custom_instructions
        data = await self.call(command)
        if data is not None and not isinstance(data, dict):
            raise TypeError(f"compact: unexpected response data {data!r:.200}")
        return data

    async def set_auto_compaction(self, enabled: bool) -> None:
        """Turn compaction at the context threshold on or off."""
        await self.call({"type": "set_auto_compaction", "enabled": enabled})

    async def set_auto_retry(self, enabled: bool) -> None:
        """Turn the automatic retry of failed requests on or off."""
        await self.call({"type": "set_auto_retry", "enabled": enabled})

    async def abort_retry(self) -> None:
        """Cancel a pending retry (the run ends with ``auto_retry_end`` ``success: false``)."""
        await self.call({"type": "abort_retry"})

    # --- bash -----------------------------------------------------------------------------------

    async def bash(
        self,
        command: str,
        *,
        exclude_from_context: bool = False,
        on_output: Callable[[str], None] | None = None,
    ) -> t.BashResult:
        """Run a shell command as the user (``!command``); ``on_output`` receives the streamed
        output (``bash_execution_update`` deltas) as it arrives.
        """
        request: Record = {"type": "bash", "command": command}
        if exclude_from_context:
            request["excludeFromContext"] = True
        if on_output is None:
            return await self._data(request, t.BashResult)
        request["id"] = request_id = f"bash-{id(request)}"

        def forward(event: Record) -> None:
            if event.get("type") == "bash_execution_update" and event.get("id") == request_id:
                on_output(str(event.get("delta", "")))

        unsubscribe = self.subscribe(forward)
        try:
            return await self._data(request, t.BashResult)
        finally:
            unsubscribe()

    async def abort_bash(self) -> None:
        """Kill the running ``bash`` commands."""
        await self.call({"type": "abort_bash"})

    # --- sessions -------------------------------------------------------------------------------

    async def new_session(self, parent_session: str | None = None) -> bool:
        """Start a new session; returns whether a plugin cancelled it."""
        command: Record = {"type": "new_session"}
        if parent_session is not None:
            command["parentSession"] = parent_session
        return bool((await self._data(command, t.Cancelled))["cancelled"])

    async def switch_session(self, session_path: str) -> bool:
        """Resume another session file; returns whether a plugin cancelled it."""
        command = {"type": "switch_session", "sessionPath": session_path}
        return bool((await self._data(command, t.Cancelled))["cancelled"])

    async def fork(self, entry_id: str) -> t.ForkResult:
        """Continue in a new session holding the branch before the user message ``entry_id``."""
        return await self._data({"type": "fork", "entryId": entry_id}, t.ForkResult)

    async def get_fork_messages(self) -> list[t.ForkMessage]:
        """The user messages :meth:`fork` can start from."""
        return (await self._data({"type": "get_fork_messages"}, t.ForkMessageList))["messages"]

    async def clone(self) -> bool:
        """Copy the current branch into a new session; returns whether a plugin cancelled it."""
        return bool((await self._data({"type": "clone"}, t.Cancelled))["cancelled"])

    async def get_last_assistant_text(self) -> str | None:
        """The text of the last assistant answer, or None."""
        return (await self._data({"type": "get_last_assistant_text"}, t.AssistantText))["text"]

    async def set_session_name(self, name: str) -> None:
        """Name the session (shown in session lists)."""
        await self.call({"type": "set_session_name", "name": name})

    async def get_session_stats(self) -> t.SessionStats:
        """Message counts, token totals and cost, and how full the context is."""
        return await self._data({"type": "get_session_stats"}, t.SessionStats)

    async def export_html(self, output_path: str | None = None) -> str:
        """Write the HTML transcript; returns its path."""
        command: Record = {"type": "export_html"}
        if output_path is not None:
            command["outputPath"] = output_path
        return str((await self._data(command, t.ExportResult))["path"])

    async def get_commands(self) -> list[t.CommandInfo]:
        """The plugins' slash commands (run one by sending ``/name args`` as a prompt)."""
        return (await self._data({"type": "get_commands"}, t.CommandList))["commands"]
