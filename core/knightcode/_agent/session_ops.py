"""Session-level operations on an :class:`~knightcode._agent.session.AgentSession`.

Starting a new session, resuming another file, forking and cloning, a command the user runs
with ``!`` (a ``bashExecution`` message), and the read-only summaries clients ask for (fork
points, statistics, the last answer). RPC mode uses them; the interactive UI will too.

Replacing the conversation follows one order, the reference's: ask the ``session_before_*``
hook (a plugin may cancel), stop running work, fire ``session_shutdown`` while ``ctx.session``
is still the old session, swap the session and the messages the model sees, then fire
``session_start`` with the previous file.
"""

from __future__ import annotations

import asyncio
import codecs
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from knightcode._errors import KnightcodeError

if TYPE_CHECKING:
    from knightcode._agent.session import AgentSession
    from knightcode._session.manager import SessionManager


class SessionOperationError(KnightcodeError):
    """A session operation cannot be done as asked (unknown entry, missing file …)."""


@dataclass(frozen=True)
class ForkResult:
    """What :func:`fork` did: ``cancelled`` by a plugin, and the forked user message's text."""

    cancelled: bool
    text: str | None = None


# --- hooks and the swap ---------------------------------------------------------------------


async def _emit(agent: AgentSession, hook: str, **kwargs: Any) -> Any:
    if agent.host is None or not agent.host.has_handlers(hook):
        return None
    return await agent.host.emit(hook, **kwargs)


def _cancelled(verdict: Any) -> bool:
    return isinstance(verdict, Mapping) and bool(verdict.get("cancel"))


async def _stop(agent: AgentSession) -> None:
    """Abort the running prompt and wait for it, so its messages land in the old session."""
    if agent.is_streaming:
        agent.abort()
        await agent.wait_idle()


def _adopt(
    agent: AgentSession, manager: SessionManager, restore_conversation: bool = True
) -> None:
    if manager is not agent.session:
        agent.session.close()
        agent.session = manager
    if restore_conversation:
        # In place: the list object is shared with whoever holds it (a loop, a plugin).
        agent.messages[:] = manager.build_context().messages  # type: ignore[assignment]
    agent.queues.clear()
    if agent.host is not None and agent.host.context is not None:
        agent.host.context.extras["session"] = manager


def _record_current_model(agent: AgentSession) -> None:
    """Record the model and thinking level in use when the branch says otherwise (a new session
    records both, as a new ``AgentSession`` does).
    """
    session = agent.session
    context = session.build_context()
    fresh = not session.get_entries()
    recorded = context.model
    if recorded is None or (recorded.provider, recorded.model_id) != (
        agent.model.provider,
        agent.model.id,
    ):
        session.append_model_change(agent.model.provider, agent.model.id)
    if fresh or context.thinking_level != agent.thinking_level:
        session.append_thinking_level_change(agent.thinking_level)


async def _restore_model(agent: AgentSession) -> None:
    """Adopt the model and thinking level a resumed session recorded (when still known)."""
    context = agent.session.build_context()
    if context.model is not None:
        found = agent.models.find(context.model.provider, context.model.model_id)
        if found is not None and found != agent.model:
            previous, agent.model = agent.model, found
            await _emit(
                agent, "model_select", model=found, previous_model=previous, source="restore"
            )
    if agent.session.get_entries():
        agent.thinking_level = context.thinking_level


# --- new, resume, fork, clone ----------------------------------------------------------------


async def new_session(agent: AgentSession, parent_session: str | None = None) -> bool:
    """Continue in a fresh, empty session (in the same directory); returns whether a plugin
    cancelled it through ``session_before_switch``.
    """
    if _cancelled(
        await _emit(agent, "session_before_switch", reason="new", target_session_file=None)
    ):
        return True
    from knightcode._session.manager import SessionManager

    await _stop(agent)
    old = agent.session
    previous = old.session_file
    if old.is_persisted and old.session_dir is not None:
        manager = SessionManager.create(old.cwd, old.session_dir)
    else:
        manager = SessionManager.in_memory(old.cwd)
    if parent_session:
        manager.new_session(parent_session=parent_session)
    await _emit(agent, "session_shutdown", reason="new", target_session_file=manager.session_file)
    _adopt(agent, manager)
    _record_current_model(agent)
    await _emit(agent, "session_start", reason="new", previous_session_file=previous)
    return False


async def switch_session(agent: AgentSession, session_path: str | Path) -> bool:
    """Resume the session stored in ``session_path``; returns whether a plugin cancelled it.

    :raises SessionOperationError: the file does not exist
    """
    target = Path(session_path).expanduser().absolute()
    if not target.is_file():
        raise SessionOperationError(f"Session file not found: {session_path}")
    if _cancelled(
        await _emit(agent, "session_before_switch", reason="resume", target_session_file=target)
    ):
        return True
    from knightcode._session.manager import SessionManager

    await _stop(agent)
    previous = agent.session.session_file
    manager = SessionManager.open(target)
    await _emit(
        agent, "session_shutdown", reason="resume", target_session_file=manager.session_file
    )
    _adopt(agent, manager)
    await _restore_model(agent)
    await _emit(agent, "session_start", reason="resume", previous_session_file=previous)
    return False


def user_message_text(content: Any) -> str:
    """The text of a user message's content (string or blocks)."""
    if isinstance(content, str):
        return content
    return "".join(
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )


async def fork(agent: AgentSession, entry_id: str, position: str = "before") -> ForkResult:
    """Continue in a new session file holding the branch up to ``entry_id``.

    ``"before"`` forks from the parent of a user message (its text is returned so a UI can put
    it back into the editor); ``"at"`` forks including the entry (``clone``).

    :raises SessionOperationError: no such entry, or not a user message for ``"before"``
    """
    entry: Any = agent.session.get_entry(entry_id)
    text: str | None = None
    if entry is None:
        raise SessionOperationError("Invalid entry ID for forking")
    if position == "before":
        message = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(message, Mapping) or message.get("role") != "user":
            raise SessionOperationError("Invalid entry ID for forking")
        target: str | None = entry.get("parentId")
        text = user_message_text(message.get("content"))
    else:
        target = entry_id
    verdict = await _emit(agent, "session_before_fork", entry_id=entry_id, position=position)
    if _cancelled(verdict):
        return ForkResult(True)
    keep_conversation = isinstance(verdict, Mapping) and bool(
        verdict.get("skip_conversation_restore")
    )
    await _stop(agent)
    manager = agent.session
    previous = manager.session_file
    # The target file is only named once the fork exists, so plugins learn it from session_start.
    await _emit(agent, "session_shutdown", reason="fork", target_session_file=None)
    manager.sync()
    if target is None:
        manager.new_session(parent_session=str(previous) if previous is not None else None)
    else:
        manager.create_branched_session(target)
    _adopt(agent, manager, restore_conversation=not keep_conversation)
    _record_current_model(agent)
    await _emit(agent, "session_start", reason="fork", previous_session_file=previous)
    return ForkResult(False, text)


async def clone(agent: AgentSession) -> bool:
    """Copy the current branch into a new session file and continue there; returns whether a
    plugin cancelled it.

    :raises SessionOperationError: the session has no entries yet
    """
    leaf = agent.session.leaf_id
    if leaf is None:
        raise SessionOperationError("Cannot clone session: no current entry selected")
    return (await fork(agent, leaf, position="at")).cancelled


# --- summaries -------------------------------------------------------------------------------


def fork_messages(agent: AgentSession) -> list[dict[str, str]]:
    """The user messages a fork can start from: ``[{"entryId", "text"}]`` in file order."""
    found = []
    for entry in agent.session.get_entries():
        message: Any = entry.get("message") if entry["type"] == "message" else None
        if isinstance(message, Mapping) and message.get("role") == "user":
            text = user_message_text(message.get("content"))
            if text:
                found.append({"entryId": str(entry["id"]), "text": text})
    return found


def last_assistant_text(agent: AgentSession) -> str | None:
    """The text of the last assistant answer (an aborted empty one is skipped), or None."""
    for message in reversed(agent.messages):
        if message.get("role") != "assistant":
            continue
        content = message.get("content") or []
        if message.get("stopReason") == "aborted" and not content:
            continue
        text = "".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
        return text.strip() or None
    return None


def session_stats(agent: AgentSession) -> dict[str, Any]:
    """Message counts, token totals and cost of the conversation, and how full the context is."""
    from knightcode._session.tokens import estimate_context_tokens

    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    tool_calls, cost, total_messages = 0, 0.0, 0

    def add_usage(usage: Any) -> None:
        nonlocal cost
        if not isinstance(usage, dict):
            return
        for key in tokens:
            tokens[key] += int(usage.get(key) or 0)
        cost += float((usage.get("cost") or {}).get("total") or 0)

    # Totals cover the whole session file: messages a compaction summarised away still cost
    # tokens, and so did the summaries themselves (usage on compaction/branch_summary entries).
    for raw in agent.session.get_entries():
        entry = cast(dict[str, Any], raw)
        kind = entry.get("type")
        if kind in ("compaction", "branch_summary"):
            add_usage(entry.get("usage"))
            continue
        if kind != "message":
            continue
        message: dict[str, Any] = entry["message"]
        total_messages += 1
        role = message.get("role")
        if role in counts:
            counts[role] += 1
        if role == "assistant":
            tool_calls += sum(
                1
                for b in message.get("content") or []
                if isinstance(b, dict) and b.get("type") == "toolCall"
            )
            add_usage(message.get("usage"))
    window = agent.model.context_window
    used = estimate_context_tokens(agent.messages).tokens
    file = agent.session.session_file
    return {
        "sessionFile": str(file) if file is not None else None,
        "sessionId": agent.session.session_id,
        "userMessages": counts["user"],
        "assistantMessages": counts["assistant"],
        "toolCalls": tool_calls,
        "toolResults": counts["toolResult"],
        "totalMessages": total_messages,
        "tokens": {**tokens, "total": sum(tokens.values())},
        "cost": cost,
        "contextUsage": {
            "tokens": used,
            "contextWindow": window,
            "percent": (used / window * 100) if window > 0 else None,
        },
    }


# --- commands the user runs (!cmd) -----------------------------------------------------------


async def run_user_bash(
    agent: AgentSession,
    command: str,
    *,
    exclude_from_context: bool = False,
    signal: asyncio.Event | None = None,
    on_chunk: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run a command the user typed (``!cmd``; ``!!cmd`` with ``exclude_from_context``) and
    return its ``bashExecution`` message, not yet recorded (see :func:`record_bash_execution`).

    A ``user_bash`` plugin may answer it or supply another backend. Output streams to
    ``on_chunk`` as text; the message keeps the tail (the bash tool's limits) and names the
    spill file when the output was truncated. Setting ``signal`` kills the process group.

    :raises SessionOperationError: the shell could not be started
    """
    from knightcode._tools import LocalBackend
    from knightcode._tools.bash import shell_environment
    from knightcode._tools.output_buffer import OutputBuffer

    cwd = str(agent.cwd)
    verdict = await _emit(
        agent,
        "user_bash",
        command=command,
        exclude_from_context=exclude_from_context,
        cwd=Path(cwd),
    )
    message: dict[str, Any] = {"role": "bashExecution", "command": command}
    if isinstance(verdict, Mapping) and isinstance(verdict.get("result"), Mapping):
        answer = verdict["result"]
        message.update(
            output=str(answer.get("output", "")),
            exitCode=answer.get("exit_code"),
            cancelled=bool(answer.get("cancelled")),
            truncated=bool(answer.get("truncated")),
        )
        if answer.get("full_output_path"):
            message["fullOutputPath"] = str(answer["full_output_path"])
        return _finish_message(message, exclude_from_context)
    backend: Any = verdict.get("operations") if isinstance(verdict, Mapping) else None
    if backend is None:
        extras = (
            agent.host.context.extras
            if agent.host is not None and agent.host.context is not None
            else {}
        )
        backend = extras.get("backend") or LocalBackend(cwd)
    buffer = OutputBuffer(temp_file_prefix="knightcode-bash")
    decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def on_output(chunk: bytes) -> None:
        buffer.append(chunk)
        text = decoder.decode(chunk)
        if text and on_chunk is not None:
            on_chunk(text)

    try:
        try:
            result = await backend.exec(
                shell_command=command,
                cwd=cwd,
                signal=signal,
                on_output=on_output,
                env=shell_environment(backend.environment(), agent.options.agent_dir),
            )
        except OSError as error:
            raise SessionOperationError(f"Could not run the command: {error}") from error
        buffer.finish()
        rest = decoder.decode(b"", final=True)
        if rest and on_chunk is not None:
            on_chunk(rest)
        snapshot = buffer.snapshot(persist_if_truncated=True)
    finally:
        buffer.close()  # the spill file stays on disk; only our handle is released
    message.update(
        output=snapshot.content,
        exitCode=None if result.aborted else result.exit_code,
        cancelled=bool(result.aborted),
        truncated=snapshot.truncation.truncated,
    )
    if snapshot.full_output_path:
        message["fullOutputPath"] = snapshot.full_output_path
    return _finish_message(message, exclude_from_context)


def _finish_message(message: dict[str, Any], exclude_from_context: bool) -> dict[str, Any]:
    message["timestamp"] = int(time.time() * 1000)
    if exclude_from_context:
        message["excludeFromContext"] = True
    return message


async def record_bash_execution(agent: AgentSession, message: dict[str, Any]) -> None:
    """Add a ``bashExecution`` message to the conversation and the session file.

    While a prompt runs it waits until the agent is idle: slipped between an assistant's tool
    calls and their results it would break the conversation the provider accepts.
    """
    while agent.is_streaming:
        await agent.wait_idle()
    agent.messages.append(message)
    agent.session.append_message(message)  # type: ignore[arg-type]
