"""One typed method per RPC command, mixed into :class:`knightcode.rpc.Client`.

Each method sends its command, waits for the response and returns its ``data`` (None for
commands that have none); a failed command raises :class:`knightcode.rpc.RpcError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from knightcode.rpc import _types as t

if TYPE_CHECKING:
    Record = dict[str, Any]

QueueMode = Literal["all", "one-at-a-time"]


class CommandMixin:
    """The command methods; :meth:`call` and the event helpers come from the client."""

    if TYPE_CHECKING:

        async def call(
            self, command: Mapping[str, Any], *, timeout: float | None = None
        ) -> Any: ...
        def mark(self) -> int: ...
        async def wait_for(
            self,
            predicate: Callable[[Record], bool],
            *,
            since: int = 0,
            timeout: float | None = None,
        ) -> Record: ...

        history: list[Record]

        def subscribe(self, listener: Callable[[Record], None]) -> Callable[[], None]: ...

    # --- prompting ---------------------------------------------------------------------------

    async def prompt(
        self,
        message: str,
        *,
        images: Sequence[Mapping[str, Any]] | None = None,
        streaming_behavior: Literal["steer", "followUp"] | None = None,
    ) -> None:
        """Send a prompt; returns once knightcode accepted it (running or queued). A message
        ``/name args`` for a plugin command runs that command instead.
        """
        command: dict[str, Any] = {"type": "prompt", "message": message}
        if images:
            command["images"] = [dict(image) for image in images]
        if streaming_behavior:
            command["streamingBehavior"] = streaming_behavior
        await self.call(command)

    async def prompt_and_wait(
        self, message: str, *, timeout: float | None = None, **options: Any
    ) -> list[Record]:
        """Send a prompt and wait until the agent settles; returns the events of the run."""
        mark = self.mark()
        await self.prompt(message, **options)
        await self.wait_for(
            lambda event: event["type"] == "agent_settled", since=mark, timeout=timeout
        )
        return self.history[mark:]

    async def steer(
        self, message: str, *, images: Sequence[Mapping[str, Any]] | None = None
    ) -> None:
        """Queue a message delivered after the running tool calls."""
        await self.call(
            {"type": "steer", "message": message, **({"images": list(images)} if images else {})}
        )

    async def follow_up(
        self, message: str, *, images: Sequence[Mapping[str, Any]] | None = None
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
        return cast(t.State, await self.call({"type": "get_state"}))

    async def get_messages(self) -> list[t.Message]:
        return cast(list[t.Message], (await self.call({"type": "get_messages"}))["messages"])

    async def set_model(self, provider: str, model_id: str) -> t.ModelInfo:
        return cast(
            t.ModelInfo,
            await self.call({"type": "set_model", "provider": provider, "modelId": model_id}),
        )

    async def cycle_model(self) -> t.CycleModelResult | None:
        return cast("t.CycleModelResult | None", await self.call({"type": "cycle_model"}))

    async def get_available_models(self) -> list[t.ModelInfo]:
        return cast(
            list[t.ModelInfo], (await self.call({"type": "get_available_models"}))["models"]
        )

    async def set_thinking_level(self, level: str) -> None:
        await self.call({"type": "set_thinking_level", "level": level})

    async def cycle_thinking_level(self) -> str | None:
        data = await self.call({"type": "cycle_thinking_level"})
        return None if data is None else str(data["level"])

    async def set_steering_mode(self, mode: QueueMode) -> None:
        await self.call({"type": "set_steering_mode", "mode": mode})

    async def set_follow_up_mode(self, mode: QueueMode) -> None:
        await self.call({"type": "set_follow_up_mode", "mode": mode})

    # --- compaction and retry -----------------------------------------------------------------

    async def compact(self, custom_instructions: str | None = None) -> dict[str, Any] | None:
        command: dict[str, Any] = {"type": "compact"}
        if custom_instructions is not None:
            command["customInstructions"] = custom_instructions
        return cast("dict[str, Any] | None", await self.call(command))

    async def set_auto_compaction(self, enabled: bool) -> None:
        await self.call({"type": "set_auto_compaction", "enabled": enabled})

    async def set_auto_retry(self, enabled: bool) -> None:
        await self.call({"type": "set_auto_retry", "enabled": enabled})

    async def abort_retry(self) -> None:
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
        request: dict[str, Any] = {"type": "bash", "command": command}
        if exclude_from_context:
            request["excludeFromContext"] = True
        if on_output is None:
            return cast(t.BashResult, await self.call(request))
        request["id"] = request_id = f"bash-{id(request)}"

        def forward(event: Record) -> None:
            if event.get("type") == "bash_execution_update" and event.get("id") == request_id:
                on_output(str(event.get("delta", "")))

        unsubscribe = self.subscribe(forward)
        try:
            return cast(t.BashResult, await self.call(request))
        finally:
            unsubscribe()

    async def abort_bash(self) -> None:
        await self.call({"type": "abort_bash"})

    # --- sessions -------------------------------------------------------------------------------

    async def new_session(self, parent_session: str | None = None) -> bool:
        """Start a new session; returns whether a plugin cancelled it."""
        command: dict[str, Any] = {"type": "new_session"}
        if parent_session is not None:
            command["parentSession"] = parent_session
        return bool((await self.call(command))["cancelled"])

    async def switch_session(self, session_path: str) -> bool:
        """Resume another session file; returns whether a plugin cancelled it."""
        return bool(
            (await self.call({"type": "switch_session", "sessionPath": session_path}))["cancelled"]
        )

    async def fork(self, entry_id: str) -> t.ForkResult:
        return cast(t.ForkResult, await self.call({"type": "fork", "entryId": entry_id}))

    async def get_fork_messages(self) -> list[t.ForkMessage]:
        return cast(
            list[t.ForkMessage], (await self.call({"type": "get_fork_messages"}))["messages"]
        )

    async def clone(self) -> bool:
        """Copy the current branch into a new session; returns whether a plugin cancelled it."""
        return bool((await self.call({"type": "clone"}))["cancelled"])

    async def get_last_assistant_text(self) -> str | None:
        return cast("str | None", (await self.call({"type": "get_last_assistant_text"}))["text"])

    async def set_session_name(self, name: str) -> None:
        await self.call({"type": "set_session_name", "name": name})

    async def get_session_stats(self) -> t.SessionStats:
        return cast(t.SessionStats, await self.call({"type": "get_session_stats"}))

    async def export_html(self, output_path: str | None = None) -> str:
        """Write the HTML transcript; returns its path."""
        command: dict[str, Any] = {"type": "export_html"}
        if output_path is not None:
            command["outputPath"] = output_path
        return str((await self.call(command))["path"])

    async def get_commands(self) -> list[t.CommandInfo]:
        return cast(list[t.CommandInfo], (await self.call({"type": "get_commands"}))["commands"])
