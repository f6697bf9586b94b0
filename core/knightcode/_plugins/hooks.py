"""``Hooks``: the typed way to fire hooks — one method per hook, named like it.

The kernel (and a plugin that fires hooks for others, as ``builtin:compaction`` does with
``session_before_compact``) calls ``await hooks.tool_call(tool_call_id=…, tool_name=…,
input=…)`` and gets a typed answer (``Block | None``), combined from every plugin's handler by the
rule the hookspec declares. Each method checks, once per hook, that the combination it applies
is the one the hookspec records, so the two cannot drift apart.

A hook nobody implements costs one dict look-up: ``message_update`` fires once per streamed
delta.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from knightcode._plugins import dispatch
from knightcode._plugins.combine import Rule
from knightcode._plugins.dispatch import AgentStartOutcome, Call, InputOutcome
from knightcode._plugins.parsing import (
    parse_backend,
    parse_bash,
    parse_block,
    parse_cancel,
    parse_compaction,
    parse_fork,
    parse_messages,
    parse_payload,
    parse_resources,
    parse_tree,
    parse_verdict,
)

if TYPE_CHECKING:
    from knightcode._abort import AbortSignal
    from knightcode._llm.types import Model
    from knightcode._plugins.host import PluginHost
    from knightcode._plugins.preparations import CompactionPreparation, TreePreparation
    from knightcode._plugins.results import (
        BashAnswer,
        Block,
        Cancel,
        CompactionOverride,
        CompactionVerdict,
        ForkOptions,
        Resources,
        RunInBackend,
        ToolResultPatch,
        TreeNavigationOptions,
    )
    from knightcode._tools.backend import ExecutionBackend
    from knightcode._types.entries import (
        BranchSummaryEntry,
        CompactionEntry,
        SessionEntry,
        SessionHeader,
    )
    from knightcode._types.events import CompactionReason
    from knightcode._types.messages import (
        AgentMessage,
        AssistantMessage,
        ImageContent,
        ThinkingLevel,
        ToolResult,
        ToolResultContent,
        ToolResultMessage,
    )
    from knightcode._types.stream import AssistantMessageEvent

__all__ = ["AgentStartOutcome", "Hooks", "InputOutcome"]


class Hooks:
    """Fires hooks on the plugins of one :class:`~knightcode._plugins.host.PluginHost`."""

    def __init__(self, host: PluginHost) -> None:
        self._host = host
        self._checked: set[str] = set()

    def has(self, hook: str) -> bool:
        """Whether any loaded plugin implements ``hook`` (lets callers skip building arguments)."""
        return bool(self._host.handlers(hook))

    def _call(self, hook: str, rule: Rule, **kwargs: object) -> Call:
        if hook not in self._checked:
            declared = self._host.rule(hook).rule
            if declared is not rule:
                raise AssertionError(f"{hook} is declared {declared.value}, fired as {rule.value}")
            self._checked.add(hook)
        context = self._host.context
        if context is None:
            raise RuntimeError(
                f"cannot fire {hook}: the host has no hook context (build it with "
                "create_plugin_host)"
            )
        kwargs["ctx"] = context
        handlers = self._host.handlers(hook)
        if self._host.trace:
            print(
                f"knightcode trace: {hook} ({len(handlers)} handler(s), rule {rule.value})",
                file=sys.stderr,
            )
        return Call(
            hook,
            handlers,
            kwargs,
            self._host.report_handler_error,
            self._host.trace,
            self._host.hook_timeout,
        )

    # --- start-up and resources -----------------------------------------------------------

    async def execution_backend(self) -> ExecutionBackend | None:
        """See the hookspec ``execution_backend``."""
        if not self.has("execution_backend"):
            return None
        return await dispatch.last_result(
            self._call("execution_backend", Rule.LAST_RESULT), parse_backend
        )

    async def resources_discover(
        self, *, cwd: Path, reason: Literal["startup", "reload"]
    ) -> list[Resources]:
        """See the hookspec ``resources_discover``: every plugin's resources, in load order."""
        if not self.has("resources_discover"):
            return []
        call = self._call("resources_discover", Rule.COLLECT, cwd=cwd, reason=reason)
        return await dispatch.collect(call, parse_resources)

    # --- session lifecycle ----------------------------------------------------------------

    async def session_start(
        self,
        *,
        reason: Literal["startup", "reload", "new", "resume", "fork"],
        previous_session_file: Path | None,
    ) -> None:
        """See the hookspec ``session_start``."""
        if self.has("session_start"):
            await dispatch.notify(
                self._call(
                    "session_start",
                    Rule.NOTIFY,
                    reason=reason,
                    previous_session_file=previous_session_file,
                )
            )

    async def session_delete(self, *, session_file: Path, header: SessionHeader | None) -> None:
        """See the hookspec ``session_delete``."""
        if self.has("session_delete"):
            await dispatch.notify(
                self._call("session_delete", Rule.NOTIFY, session_file=session_file, header=header)
            )

    async def session_shutdown(
        self,
        *,
        reason: Literal["quit", "reload", "new", "resume", "fork"],
        target_session_file: Path | None,
    ) -> None:
        """See the hookspec ``session_shutdown``."""
        if self.has("session_shutdown"):
            await dispatch.notify(
                self._call(
                    "session_shutdown",
                    Rule.NOTIFY,
                    reason=reason,
                    target_session_file=target_session_file,
                )
            )

    async def session_before_switch(
        self, *, reason: Literal["new", "resume"], target_session_file: Path | None
    ) -> Cancel | None:
        """See the hookspec ``session_before_switch``."""
        if not self.has("session_before_switch"):
            return None
        call = self._call(
            "session_before_switch",
            Rule.CANCEL_OR_LAST,
            reason=reason,
            target_session_file=target_session_file,
        )
        return await dispatch.cancel_or_last(call, parse_cancel)

    async def session_before_fork(
        self, *, entry_id: str, position: Literal["before", "at"]
    ) -> Cancel | ForkOptions | None:
        """See the hookspec ``session_before_fork``."""
        if not self.has("session_before_fork"):
            return None
        call = self._call(
            "session_before_fork", Rule.CANCEL_OR_LAST, entry_id=entry_id, position=position
        )
        return await dispatch.cancel_or_last(call, parse_fork)

    async def session_before_compact(
        self,
        *,
        preparation: CompactionPreparation,
        branch_entries: list[SessionEntry],
        custom_instructions: str | None,
        reason: CompactionReason,
        will_retry: bool,
        signal: AbortSignal,
    ) -> Cancel | CompactionOverride | None:
        """See the hookspec ``session_before_compact``."""
        if not self.has("session_before_compact"):
            return None
        call = self._call(
            "session_before_compact",
            Rule.CANCEL_OR_LAST,
            preparation=preparation,
            branch_entries=branch_entries,
            custom_instructions=custom_instructions,
            reason=reason,
            will_retry=will_retry,
            signal=signal,
        )
        return await dispatch.cancel_or_last(call, parse_compaction)

    async def session_compact(
        self, *, compaction_entry: CompactionEntry, from_extension: bool
    ) -> None:
        """See the hookspec ``session_compact``."""
        if self.has("session_compact"):
            await dispatch.notify(
                self._call(
                    "session_compact",
                    Rule.NOTIFY,
                    compaction_entry=compaction_entry,
                    from_extension=from_extension,
                )
            )

    async def session_compact_failed(
        self,
        *,
        reason: CompactionReason,
        error_message: str | None,
        aborted: bool,
        will_retry: bool,
        from_extension: bool,
    ) -> None:
        """See the hookspec ``session_compact_failed``."""
        if self.has("session_compact_failed"):
            await dispatch.notify(
                self._call(
                    "session_compact_failed",
                    Rule.NOTIFY,
                    reason=reason,
                    error_message=error_message,
                    aborted=aborted,
                    will_retry=will_retry,
                    from_extension=from_extension,
                )
            )

    async def session_check_compaction(
        self,
        *,
        trigger: Literal[
            "before_prompt", "between_turns", "after_run", "overflow", "length", "manual"
        ],
        message: AssistantMessage | None,
        will_retry: bool,
        custom_instructions: str | None,
    ) -> CompactionVerdict | None:
        """See the hookspec ``session_check_compaction``."""
        if not self.has("session_check_compaction"):
            return None
        call = self._call(
            "session_check_compaction",
            Rule.FIRST_RESULT,
            trigger=trigger,
            message=message,
            will_retry=will_retry,
            custom_instructions=custom_instructions,
        )
        return await dispatch.first_result(call, parse_verdict)

    async def session_before_tree(
        self, *, preparation: TreePreparation, signal: AbortSignal
    ) -> Cancel | TreeNavigationOptions | None:
        """See the hookspec ``session_before_tree``."""
        if not self.has("session_before_tree"):
            return None
        call = self._call(
            "session_before_tree", Rule.CANCEL_OR_LAST, preparation=preparation, signal=signal
        )
        return await dispatch.cancel_or_last(call, parse_tree)

    async def session_tree(
        self,
        *,
        new_leaf_id: str | None,
        old_leaf_id: str | None,
        summary_entry: BranchSummaryEntry | None,
        from_extension: bool,
    ) -> None:
        """See the hookspec ``session_tree``."""
        if self.has("session_tree"):
            await dispatch.notify(
                self._call(
                    "session_tree",
                    Rule.NOTIFY,
                    new_leaf_id=new_leaf_id,
                    old_leaf_id=old_leaf_id,
                    summary_entry=summary_entry,
                    from_extension=from_extension,
                )
            )

    # --- agent and turns ------------------------------------------------------------------

    async def before_agent_start(
        self, *, prompt: str, images: list[ImageContent], system_prompt: str
    ) -> AgentStartOutcome:
        """See the hookspec ``before_agent_start``: the messages of every handler and the
        final system prompt.
        """
        if not self.has("before_agent_start"):
            return AgentStartOutcome([], system_prompt)
        call = self._call(
            "before_agent_start",
            Rule.COLLECT_AND_CHAIN,
            prompt=prompt,
            images=images,
            system_prompt=system_prompt,
        )
        return await dispatch.collect_and_chain(call)

    async def agent_start(self) -> None:
        """See the hookspec ``agent_start``."""
        if self.has("agent_start"):
            await dispatch.notify(self._call("agent_start", Rule.NOTIFY))

    async def agent_end(self, *, messages: list[AgentMessage], will_retry: bool) -> None:
        """See the hookspec ``agent_end``."""
        if self.has("agent_end"):
            await dispatch.notify(
                self._call("agent_end", Rule.NOTIFY, messages=messages, will_retry=will_retry)
            )

    async def agent_before_settle(self, *, aborted: bool) -> None:
        """See the hookspec ``agent_before_settle``."""
        if self.has("agent_before_settle"):
            await dispatch.notify(self._call("agent_before_settle", Rule.NOTIFY, aborted=aborted))

    async def turn_start(self, *, turn_index: int, timestamp: int) -> None:
        """See the hookspec ``turn_start``."""
        if self.has("turn_start"):
            await dispatch.notify(
                self._call("turn_start", Rule.NOTIFY, turn_index=turn_index, timestamp=timestamp)
            )

    async def turn_end(
        self,
        *,
        turn_index: int,
        message: AssistantMessage,
        tool_results: list[ToolResultMessage],
    ) -> None:
        """See the hookspec ``turn_end``."""
        if self.has("turn_end"):
            await dispatch.notify(
                self._call(
                    "turn_end",
                    Rule.NOTIFY,
                    turn_index=turn_index,
                    message=message,
                    tool_results=tool_results,
                )
            )

    async def context(self, *, messages: list[AgentMessage]) -> list[AgentMessage]:
        """See the hookspec ``context``: the messages to send (a deep copy is handed to the
        handlers, so they never change the session's).
        """
        if not self.has("context"):
            return messages
        call = self._call("context", Rule.TRANSFORM_CHAIN, messages=copy.deepcopy(messages))
        result = await dispatch.transform_chain(call, "messages", parse_messages)
        return result  # type: ignore[return-value]  # parse_messages checked each has a role

    async def before_provider_request(self, *, payload: dict[str, object]) -> dict[str, object]:
        """See the hookspec ``before_provider_request``: the body to send."""
        if not self.has("before_provider_request"):
            return payload
        call = self._call("before_provider_request", Rule.TRANSFORM_CHAIN, payload=payload)
        return await dispatch.transform_chain(call, "payload", parse_payload)

    async def after_provider_response(self, *, status: int, headers: dict[str, str]) -> None:
        """See the hookspec ``after_provider_response``."""
        if self.has("after_provider_response"):
            await dispatch.notify(
                self._call("after_provider_response", Rule.NOTIFY, status=status, headers=headers)
            )

    # --- messages and tool execution ------------------------------------------------------

    async def message_start(self, *, message: AgentMessage) -> None:
        """See the hookspec ``message_start``."""
        if self.has("message_start"):
            await dispatch.notify(self._call("message_start", Rule.NOTIFY, message=message))

    async def message_update(
        self, *, message: AssistantMessage, assistant_message_event: AssistantMessageEvent
    ) -> None:
        """See the hookspec ``message_update``."""
        if self.has("message_update"):
            await dispatch.notify(
                self._call(
                    "message_update",
                    Rule.NOTIFY,
                    message=message,
                    assistant_message_event=assistant_message_event,
                )
            )

    async def message_end(self, *, message: AgentMessage) -> None:
        """See the hookspec ``message_end``."""
        if self.has("message_end"):
            await dispatch.notify(self._call("message_end", Rule.NOTIFY, message=message))

    async def tool_execution_start(
        self, *, tool_call_id: str, tool_name: str, args: dict[str, object]
    ) -> None:
        """See the hookspec ``tool_execution_start``."""
        if self.has("tool_execution_start"):
            await dispatch.notify(
                self._call(
                    "tool_execution_start",
                    Rule.NOTIFY,
                    tool_call_id=tool_call_id,
                    tool_name=tool_name,
                    args=args,
                )
            )

    async def tool_execution_update(
        self,
        *,
        tool_call_id: str,
        tool_name: str,
        args: dict[str, object],
        partial_result: ToolResult,
    ) -> None:
        """See the hookspec ``tool_execution_update``."""
        if self.has("tool_execution_update"):
            await dispatch.notify(
                self._call(
                    "tool_execution_update",
                    Rule.NOTIFY,
                    tool_call_id=tool_call_id,
                    tool_name=tool_name,
                    args=args,
                    partial_result=partial_result,
                )
            )

    async def tool_execution_end(
        self, *, tool_call_id: str, tool_name: str, result: ToolResult, is_error: bool
    ) -> None:
        """See the hookspec ``tool_execution_end``."""
        if self.has("tool_execution_end"):
            await dispatch.notify(
                self._call(
                    "tool_execution_end",
                    Rule.NOTIFY,
                    tool_call_id=tool_call_id,
                    tool_name=tool_name,
                    result=result,
                    is_error=is_error,
                )
            )

    # --- tools ------------------------------------------------------------------------------

    async def tool_call(
        self, *, tool_call_id: str, tool_name: str, input: dict[str, object]
    ) -> Block | None:
        """See the hookspec ``tool_call``; a handler's exception propagates (it blocks)."""
        if not self.has("tool_call"):
            return None
        call = self._call(
            "tool_call",
            Rule.FIRST_BLOCK,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            input=input,
        )
        return await dispatch.first_block(call, parse_block)

    async def tool_result(
        self,
        *,
        tool_call_id: str,
        tool_name: str,
        input: dict[str, object],
        content: list[ToolResultContent],
        details: object,
        is_error: bool,
    ) -> ToolResultPatch | None:
        """See the hookspec ``tool_result``: the combined patch, or None."""
        if not self.has("tool_result"):
            return None
        call = self._call(
            "tool_result",
            Rule.PATCH_CHAIN,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            input=input,
            content=content,
            details=details,
            is_error=is_error,
        )
        return await dispatch.patch_chain(call)

    # --- input and model --------------------------------------------------------------------

    async def input(
        self,
        *,
        text: str,
        images: list[ImageContent],
        source: Literal["interactive", "rpc", "extension"],
    ) -> InputOutcome:
        """See the hookspec ``input``."""
        if not self.has("input"):
            return InputOutcome(False, text, list(images))
        call = self._call("input", Rule.INPUT_CHAIN, text=text, images=images, source=source)
        return await dispatch.input_chain(call)

    async def user_bash(
        self, *, command: str, exclude_from_context: bool, cwd: Path
    ) -> BashAnswer | RunInBackend | None:
        """See the hookspec ``user_bash``."""
        if not self.has("user_bash"):
            return None
        call = self._call(
            "user_bash",
            Rule.FIRST_RESULT,
            command=command,
            exclude_from_context=exclude_from_context,
            cwd=cwd,
        )
        return await dispatch.first_result(call, parse_bash)

    async def model_select(
        self,
        *,
        model: Model,
        previous_model: Model | None,
        source: Literal["set", "cycle", "restore"],
    ) -> None:
        """See the hookspec ``model_select``."""
        if self.has("model_select"):
            await dispatch.notify(
                self._call(
                    "model_select",
                    Rule.NOTIFY,
                    model=model,
                    previous_model=previous_model,
                    source=source,
                )
            )

    async def thinking_level_select(
        self, *, level: ThinkingLevel, previous_level: ThinkingLevel | None
    ) -> None:
        """See the hookspec ``thinking_level_select``."""
        if self.has("thinking_level_select"):
            await dispatch.notify(
                self._call(
                    "thinking_level_select",
                    Rule.NOTIFY,
                    level=level,
                    previous_level=previous_level,
                )
            )
