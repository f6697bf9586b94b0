"""What a plugin may use of the running session: the agent handle and the read-only session view.

These are ``Protocol`` types: the kernel's ``AgentSession`` and ``SessionManager`` implement them,
and a plugin type-checked against them uses only what the contract promises. Everything not
listed here is the kernel's own business and may change without notice.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from knightcode._abort import AbortSignal
    from knightcode._agent.retry import RetrySettings
    from knightcode._agent.tool_set import ToolInfo
    from knightcode._llm.registry import ModelRegistry
    from knightcode._llm.types import Model
    from knightcode._plugins.definitions import ToolDefinition
    from knightcode._plugins.results import CompactionVerdict
    from knightcode._session.context import SessionContext
    from knightcode._types.entries import (
        CompactionEntry,
        ContextEdit,
        SessionEntry,
        SessionHeader,
    )
    from knightcode._types.events import SessionEvent
    from knightcode._types.messages import AgentMessage, ImageContent, ThinkingLevel, Usage

__all__ = ["AgentHandle", "ForkOutcome", "SessionView", "TreeOutcome"]


class SessionView(Protocol):
    """The session file, read-only: the entries, the current branch and what the model sees.

    Entries are the dicts read from (or written to) the file; do not change them.
    """

    @property
    def cwd(self) -> str:
        """The working directory recorded in the session header."""
        ...

    @property
    def session_file(self) -> Path | None:
        """The file, or None for a session kept only in memory (``--no-session``)."""
        ...

    @property
    def session_id(self) -> str:
        """The session's id (the header's ``id``)."""
        ...

    @property
    def session_name(self) -> str | None:
        """The name given with ``/name`` or ``set_session_name``, if any."""
        ...

    @property
    def leaf_id(self) -> str | None:
        """The current position in the tree (None before the first entry)."""
        ...

    @property
    def header(self) -> SessionHeader:
        """The file's first line."""
        ...

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        """The entry with this id, or None."""
        ...

    def get_entries(self) -> list[SessionEntry]:
        """Every entry, all branches, in file order."""
        ...

    def get_branch(self, from_id: str | None = None) -> list[SessionEntry]:
        """The entries from the root to ``from_id`` (default: the current leaf)."""
        ...

    def get_children(self, parent_id: str) -> list[SessionEntry]:
        """The entries whose parent is ``parent_id``."""
        ...

    def get_label(self, entry_id: str) -> str | None:
        """The label (bookmark) on an entry, if any."""
        ...

    def build_context(self) -> SessionContext:
        """What the model sees of the current branch (context edits applied)."""
        ...


class ForkOutcome(Protocol):
    """What :meth:`AgentHandle.fork` did."""

    @property
    def cancelled(self) -> bool:
        """A ``session_before_fork`` handler cancelled the fork."""
        ...

    @property
    def text(self) -> str | None:
        """The text of the user message forked from (``"before"``), for an editor."""
        ...


class TreeOutcome(Protocol):
    """What :meth:`AgentHandle.navigate_tree` did."""

    @property
    def cancelled(self) -> bool:
        """A handler cancelled the move, or the summary was aborted."""
        ...

    @property
    def aborted(self) -> bool:
        """The summary being generated was aborted."""
        ...

    @property
    def editor_text(self) -> str | None:
        """The text of a user or custom message that was the target (it goes back to the
        editor).
        """
        ...

    @property
    def summary_entry(self) -> SessionEntry | None:
        """The ``branch_summary`` entry written for the branch left, if one was."""
        ...


class AgentHandle(Protocol):
    """The running agent session, as plugins use it (``ctx.agent``)."""

    @property
    def cwd(self) -> Path:
        """The project directory."""
        ...

    @property
    def model(self) -> Model:
        """The model the next request goes to."""
        ...

    @property
    def thinking_level(self) -> ThinkingLevel:
        """The reasoning effort of the next request."""
        ...

    @property
    def messages(self) -> Sequence[AgentMessage]:
        """What the model sees now (read-only; it changes as the session runs)."""
        ...

    @property
    def session(self) -> SessionView:
        """The current session file (it changes on ``/new``, resume and fork)."""
        ...

    @property
    def model_registry(self) -> ModelRegistry:
        """Providers, models and keys; streams requests and answers classifiers."""
        ...

    @property
    def active_tools(self) -> list[str]:
        """The names of the tools the model is offered."""
        ...

    def available_tools(self) -> list[ToolInfo]:
        """Every tool this session could offer (built-in and plugin tools), with its origin and
        whether it is active.
        """
        ...

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Offer exactly ``names`` from the next model request on (the system prompt is rebuilt
        to list them; a run in progress keeps its tools). The choice survives ``/reload``.

        :raises ValueError: a name is not an available tool (nothing changes)
        """
        ...

    @property
    def system_prompt(self) -> str:
        """The system prompt the next run starts from (it lists the active tools;
        ``before_agent_start`` handlers may change it for one run).
        """
        ...

    def add_tools(
        self,
        definitions: Sequence[ToolDefinition],
        *,
        origin: str = "plugin",
        active: bool = True,
    ) -> list[str]:
        """Make tools available while the session runs (tools known only after start-up, such
        as an MCP server's list arriving late). They apply from the next run: a run in progress
        keeps the tools and system prompt it started with; the system prompt is rebuilt to list
        them. A name already available gets the new definition and keeps whether it is active.
        Added tools survive ``/reload``. Call it on the session's event loop (a hook, a command,
        a task from ``ctx.spawn``); from another thread, go through
        ``loop.call_soon_threadsafe``.

        :param origin: your plugin's name (``available_tools`` and ``/tools`` show it)
        :param active: offer the new tools to the model, not only make them available
        :returns: the names of the tools
        """
        ...

    def remove_tools(self, names: Sequence[str]) -> list[str]:
        """Make tools unavailable from the next run on (names that are not there are ignored).
        A removed tool stays removed after ``/reload`` until it is added again.

        :returns: the names removed
        """
        ...

    def set_tool_enabled(self, name: str, enabled: bool, *, save: bool = False) -> None:
        """Switch one tool on or off from the next request on.

        :param save: also make it the default of new sessions (user settings ``tools.enabled``)
        :raises ValueError: ``name`` is not an available tool
        """
        ...

    @property
    def retry(self) -> RetrySettings:
        """The retry settings in effect (``set_auto_retry`` changes ``enabled``)."""
        ...

    @property
    def signal(self) -> AbortSignal:
        """The abort signal of the current run: long work a plugin does for the run (a summary
        request) should wait inside ``signal.scope()`` or pass it to model calls. Between runs it
        is a fresh signal that nothing aborts.
        """
        ...

    @property
    def is_streaming(self) -> bool:
        """Whether a run (with its retries and queued work) is in progress."""
        ...

    @property
    def is_compacting(self) -> bool:
        """Whether a compaction is running right now."""
        ...

    @property
    def auto_compaction_enabled(self) -> bool:
        """Whether automatic compaction is on (settings, RPC ``set_auto_compaction``)."""
        ...

    def abort(self) -> None:
        """Stop the current run (the stream is cancelled, running tools are killed)."""
        ...

    async def wait_idle(self) -> None:
        """Wait until no run is in progress."""
        ...

    async def prompt(
        self,
        text: str,
        images: list[ImageContent] | None = None,
        *,
        source: Literal["interactive", "rpc", "extension"] = "extension",
        streaming_behavior: Literal["steer", "followUp"] | None = None,
    ) -> None:
        """Send a user prompt and run until the agent settles (queued while a run is in
        progress when ``streaming_behavior`` says how).
        """
        ...

    def steer(self, text: str, images: list[ImageContent] | None = None) -> None:
        """Queue a message delivered after the current tool batch."""
        ...

    def follow_up(self, text: str, images: list[ImageContent] | None = None) -> None:
        """Queue a message delivered when the agent would otherwise stop."""
        ...

    async def compact(self, custom_instructions: str | None = None) -> CompactionVerdict:
        """Compact now, as ``/compact`` does."""
        ...

    async def set_model(
        self, model: Model, source: Literal["set", "cycle", "restore"] = "set"
    ) -> None:
        """Switch the model for the next request (recorded in the session)."""
        ...

    async def set_thinking_level(self, level: ThinkingLevel) -> None:
        """Change the reasoning effort (recorded in the session)."""
        ...

    def append_entry(self, custom_type: str, data: object = None) -> str:
        """Store plugin state as a ``custom`` entry (never sent to the model); returns its id."""
        ...

    def set_session_name(self, name: str | None) -> None:
        """Name the session (None or blank clears the name)."""
        ...

    def publish(self, event: SessionEvent) -> None:
        """Send an event to the session's subscribers (the JSON/RPC stream, the UI)."""
        ...

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        *,
        details: object = None,
        from_hook: bool | None = None,
        usage: Usage | None = None,
    ) -> CompactionEntry:
        """Write a ``compaction`` entry and rebuild what the model sees from it; None as
        ``first_kept_entry_id`` keeps nothing (the entry records its own id).
        """
        ...

    def append_context_edit(self, edits: list[ContextEdit], reason: str | None = None) -> str:
        """Write a ``context_edit`` entry (hide or replace messages the model sees) and apply
        it to the messages of the running session; returns its id.
        """
        ...

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
    ) -> TreeOutcome:
        """Move to another point of the session tree (``/tree``)."""
        ...

    async def new_session(self, parent_session: str | None = None) -> bool:
        """Continue in a fresh session; True when a plugin cancelled."""
        ...

    async def switch_session(self, session_path: str | Path) -> bool:
        """Resume another session file; True when a plugin cancelled."""
        ...

    async def fork(
        self, entry_id: str, position: Literal["before", "at"] = "before"
    ) -> ForkOutcome:
        """Continue in a new session file holding the branch up to ``entry_id``."""
        ...

    async def clone(self) -> bool:
        """Copy the current branch into a new session file; True when a plugin cancelled."""
        ...
