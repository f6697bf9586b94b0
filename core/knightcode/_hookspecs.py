"""The extension contract: every hook a knightcode plugin can implement.

Each hook is a pluggy hookspec whose signature says what a handler receives and what it may
return, and whose docstring says when it fires and what each argument and result means. How the
results of several plugins combine is the rule recorded by
:func:`~knightcode._plugins.combine.combine`.
This file is the single source of ``docs/plugin-hooks.md`` (``python -m scripts.hook_docs``
writes it; ``tests/test_docs_hooks.py`` fails when the page is stale), and the kernel fires each
hook through the typed method of the same name on :class:`~knightcode._plugins.hooks.Hooks`.

A hook implementation may declare any subset of a hook's arguments, in any order (pluggy passes
arguments by name), and may be a plain function or ``async def``. Every event hook takes ``ctx``
(the :class:`~knightcode._plugins.context.HookContext`) as its last argument.

This module is imported on every start: the types below are imported for the type checker only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from knightcode._markers import hookspec
from knightcode._plugins.combine import Rule, combine

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from knightcode._abort import AbortSignal
    from knightcode._llm.types import Model
    from knightcode._plugins.context import HookContext
    from knightcode._plugins.preparations import CompactionPreparation, TreePreparation
    from knightcode._plugins.results import (
        AgentStartChanges,
        BashAnswer,
        Block,
        Cancel,
        CompactionOverride,
        CompactionVerdict,
        ForkOptions,
        Handled,
        Resources,
        RunInBackend,
        ToolResultPatch,
        Transform,
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

# --- Registration hooks ---
# Called once per plugin, when it is loaded. Each receives a ``register`` callback that takes a
# definition object (``ToolDefinition``, ``CommandDefinition`` …) or the same fields as keyword
# arguments. knightcode remembers which plugin registered each name, so ``knightcode config list``
# and conflict warnings can name it.


@hookspec
@combine(Rule.REGISTER)
def register_tools(register: Callable[..., None]) -> None:
    """Register tools the model can call.

    ``register`` takes a ``ToolDefinition`` or its fields as keyword arguments: ``name``,
    ``description`` (for the model), ``parameters`` (JSON schema of the arguments), ``execute``
    (``execute(tool_call_id, args, ctx, on_update)``, plain or ``async``, returning a
    ``ToolResult`` ``{"content": [...], "details": ...}``; ``ctx`` is a ``ToolContext``), and
    optionally ``label``, ``execution_mode`` (``"parallel"`` or ``"sequential"``),
    ``prompt_snippet``, ``prompt_guidelines``, ``prepare_arguments`` and ``host_access``. A plugin
    tool named like one of the seven built-in tools (``read``, ``write``, ``edit``, ``bash``,
    ``grep``, ``find``, ``ls``) replaces the built-in one.

    **Staying inside the sandbox.** When a sandbox is on (settings ``sandbox.backend``), a tool's
    ``ctx.backend`` is the sandbox and ``ctx.cwd`` is ``/workspace``. A tool that does all its
    file and process work through ``ctx`` — ``await ctx.run("make test")``,
    ``await ctx.read_text(path)``, ``await ctx.write_text(path, text)``, ``ctx.resolve(path)``, or
    ``ctx.backend`` directly — runs inside it like the built-in tools, and an environment it
    passes loses the host values the sandbox keeps out. A tool that calls ``open``,
    ``subprocess`` or ``os`` itself runs on the host, whatever the sandbox: don't. A tool that
    must reach the host (a clipboard, a browser) sets ``host_access=True``: it then gets the local
    backend and the host folder, and ``knightcode config list`` shows its plugin with host access.

    :param register: records one tool for the calling plugin: a ``ToolDefinition``, or its
        fields as keyword arguments
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.REGISTER)
def register_commands(register: Callable[..., None]) -> None:
    """Register slash commands such as ``/hello``.

    ``register`` takes a ``CommandDefinition`` or its fields as keyword arguments: ``name``
    (without the slash), ``handler`` (``handler(args, ctx)``, plain or ``async``; ``args`` is the
    text after the command) and ``description``. Commands work in every mode: typed in the
    interactive UI, given as the message of ``-p``, or sent as an RPC ``prompt``.

    :param register: records one slash command for the calling plugin: a
        ``CommandDefinition``, or its fields as keyword arguments
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.REGISTER)
def register_providers(register: Callable[..., None]) -> None:
    """Register model providers.

    ``register`` takes a ``ProviderDefinition`` or its fields as keyword arguments: ``name``,
    ``api``, ``base_url``, ``api_key``, ``env_keys``, ``headers``, ``models``, and for providers
    knightcode has no client for, ``stream``; for providers whose models are found at run time,
    ``discover``; ``classify`` for classifier models; ``login`` for ``/login <name>``. The models
    become selectable as ``<provider>/<model id>``.

    :param register: records one model provider for the calling plugin: a
        ``ProviderDefinition``, or its fields as keyword arguments
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.REGISTER)
def register_flags(register: Callable[..., None]) -> None:
    """Register command-line flags.

    ``register`` takes a ``FlagDefinition`` or its fields as keyword arguments: ``name`` (without
    dashes), ``type`` (``"boolean"`` or ``"string"``), ``default`` and ``description``. The flag
    appears in ``knightcode --help`` with your plugin's name; handlers read its value as
    ``ctx.flags["name"]``.

    :param register: records one command-line flag for the calling plugin: a
        ``FlagDefinition``, or its fields as keyword arguments
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.REGISTER)
def register_shortcuts(register: Callable[..., None]) -> None:
    """Register key bindings of the interactive UI.

    ``register`` takes a ``ShortcutDefinition`` or its fields as keyword arguments: ``key`` (e.g.
    ``ctrl+shift+h``), ``handler`` (``handler(ctx)``, plain or ``async``) and ``description``.

    :param register: records one key binding for the calling plugin: a
        ``ShortcutDefinition``, or its fields as keyword arguments
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.LAST_RESULT)
def execution_backend(ctx: HookContext) -> ExecutionBackend | None:
    """Choose the execution backend, once at start-up after all plugins are loaded.

    The backend is the object every tool — built-in and plugin tools alike — uses to read and
    write files and to run processes. A sandbox plugin returns one that works inside its
    sandbox. When no plugin returns one, the local backend (your machine, directly) is used.

    :param ctx: the hook context
    :returns: an ``ExecutionBackend``, or None for no opinion.

    .. versionadded:: 0.1
    """


# --- Resource hooks ---
# Skills, prompt templates and themes are files; plugins add theirs when knightcode looks for them.


@hookspec
@combine(Rule.COLLECT)
def resources_discover(
    cwd: Path, reason: Literal["startup", "reload"], ctx: HookContext
) -> Resources | None:
    """Add skills, prompt templates and themes, when knightcode looks for them.

    That is at start-up and on reload. Relative paths are resolved against ``cwd``; each path is
    remembered with the plugin that supplied it.

    :param cwd: the working directory of the session
    :param reason: ``"startup"`` or ``"reload"``
    :param ctx: the hook context
    :returns: ``Resources(skill_paths=..., prompt_paths=..., theme_paths=...)`` (files or
        directories), or None.

    .. versionadded:: 0.1
    """


# --- Session lifecycle hooks ---
# A session is one file of entries, a tree. The ``session_before_*`` hooks fire before an operation
# on it and may cancel or change it; ``session_start``, ``session_compact``, ``session_tree`` and
# the others report what happened.


@hookspec
@combine(Rule.NOTIFY)
def session_start(
    reason: Literal["startup", "reload", "new", "resume", "fork"],
    previous_session_file: Path | None,
    ctx: HookContext,
) -> None:
    """A session became the current one.

    That is at start-up, after a reload, and after switching to a new, resumed or forked
    session.

    :param reason: ``"startup"``, ``"reload"``, ``"new"``, ``"resume"`` or ``"fork"``
    :param previous_session_file: the session file that was current before (for ``new``,
        ``resume`` and ``fork``), or None
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def session_delete(session_file: Path, header: SessionHeader | None, ctx: HookContext) -> None:
    """A session file was deleted (from the ``/resume`` picker); it is not the current session.

    Remove what your plugin kept for that session (files named after its id, a cache). The
    header comes from the deleted file, which anyone could have written: check values such as
    ``header["id"]`` and ``header["cwd"]`` before building paths from them.

    :param session_file: the path the file had
    :param header: its first line, read before it was deleted (None when unreadable)
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def session_shutdown(
    reason: Literal["quit", "reload", "new", "resume", "fork"],
    target_session_file: Path | None,
    ctx: HookContext,
) -> None:
    """The current session is being left.

    That is on quit, before a reload, and before switching to a new, resumed or forked session.
    Flush whatever your plugin keeps in memory here; ``ctx.session`` is still the session being
    left.

    :param reason: ``"quit"``, ``"reload"``, ``"new"``, ``"resume"`` or ``"fork"``
    :param target_session_file: the session file that becomes current next, when known, or None
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.CANCEL_OR_LAST)
def session_before_switch(
    reason: Literal["new", "resume"], target_session_file: Path | None, ctx: HookContext
) -> Cancel | None:
    """The current session is about to be left for a new one (``/new``) or a resumed one.

    Your plugin can stop the switch; ``session_shutdown`` fires only when none does.

    :param reason: ``"new"`` or ``"resume"``
    :param target_session_file: the session file to resume, or None for a new session
    :param ctx: the hook context
    :returns: ``Cancel()`` to stop the switch, or None to let it happen.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.CANCEL_OR_LAST)
def session_before_fork(
    entry_id: str, position: Literal["before", "at"], ctx: HookContext
) -> Cancel | ForkOptions | None:
    """The session is about to be forked at an entry into a new session file.

    Your plugin can stop the fork, or keep the agent's conversation as it is.

    :param entry_id: the id of the entry the fork is made from
    :param position: ``"before"`` to fork from the entry's parent (the entry itself, a user
        message, goes back into the editor) or ``"at"`` to fork including the entry (clone)
    :param ctx: the hook context
    :returns: ``Cancel()`` to stop the fork; ``ForkOptions(skip_conversation_restore=True)`` to
        keep the agent's in-memory conversation instead of loading the forked branch into it
        (for plugins that manage it themselves); or None.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.CANCEL_OR_LAST)
def session_before_compact(
    preparation: CompactionPreparation,
    branch_entries: list[SessionEntry],
    custom_instructions: str | None,
    reason: CompactionReason,
    will_retry: bool,
    signal: AbortSignal,
    ctx: HookContext,
) -> Cancel | CompactionOverride | None:
    """A compaction (automatic or ``/compact``) is about to summarize old messages.

    Your plugin can cancel it, or supply the summary itself — for example from a different
    model. If the compaction then fails or is aborted, ``session_compact_failed`` fires.

    :param preparation: what the default compaction would work from: the messages to summarize,
        the first entry kept, the previous summary, the files touched, the settings
    :param branch_entries: every session entry on the current branch, root first (for state
        your plugin keeps in custom entries)
    :param custom_instructions: the focus text given to ``/compact``, or None
    :param reason: ``"manual"`` (``/compact``), ``"threshold"`` or ``"overflow"``
    :param will_retry: whether the aborted turn is retried after compaction (overflow recovery)
    :param signal: the compaction's abort signal (``signal.aborted`` once the user aborts): wait
        inside ``signal.scope()`` or pass it on to model calls
    :param ctx: the hook context
    :returns: ``Cancel()`` to cancel the compaction; ``CompactionOverride(summary,
        first_kept_entry_id, tokens_before, details=..., usage=...)`` to use your summary
        instead of generating one; None to let the default compaction run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def session_compact(
    compaction_entry: CompactionEntry, from_extension: bool, ctx: HookContext
) -> None:
    """A compaction succeeded and its entry was written to the session file.

    :param compaction_entry: the ``compaction`` entry that was appended, as written to the file
        (camelCase keys: ``summary``, ``firstKeptEntryId``, ``tokensBefore``, ``usage`` …)
    :param from_extension: whether a plugin supplied the summary through
        ``session_before_compact``
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def session_compact_failed(
    reason: CompactionReason,
    error_message: str | None,
    aborted: bool,
    will_retry: bool,
    from_extension: bool,
    ctx: HookContext,
) -> None:
    """A manual or automatic compaction failed or was aborted.

    Every ``session_before_compact`` ends in either ``session_compact`` or this hook, so
    telemetry plugins can pair them.

    :param reason: ``"manual"`` (``/compact``), ``"threshold"`` or ``"overflow"``
    :param error_message: what went wrong, for failures that were not aborts; otherwise None
    :param aborted: true when the compaction was cancelled or aborted
    :param will_retry: whether the aborted turn would have been retried after compaction
    :param from_extension: whether a plugin-supplied compaction was being used
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.FIRST_RESULT)
def session_check_compaction(
    trigger: Literal["before_prompt", "between_turns", "after_run", "overflow", "length", "manual"],
    message: AssistantMessage | None,
    will_retry: bool,
    custom_instructions: str | None,
    ctx: HookContext,
) -> CompactionVerdict | None:
    """The context may need compacting here.

    The kernel only knows *when* to ask: before a new prompt is sent, between the turns of a run
    (after a tool batch, before the next request), after a run ends, when a provider reported a
    context overflow or stopped early because of its output limit, and when the user asks
    (``/compact``, RPC ``compact``). Whether to compact (``ctx.agent.auto_compaction_enabled``
    says whether automatic compaction is on) and how is the handler's business — the compaction
    plugin (``builtin:compaction``) answers it. Without a handler nothing is compacted, an
    overflow stays an error, and a manual compaction is refused.

    :param trigger: ``"before_prompt"``, ``"between_turns"``, ``"after_run"``, ``"overflow"``,
        ``"length"`` or ``"manual"``
    :param message: the assistant message behind the check — the failed attempt for
        ``"overflow"``/``"length"`` (with its ``stopReason`` and ``errorMessage``), the last
        assistant message otherwise — or None before the first reply
    :param will_retry: for ``"overflow"``/``"length"``: whether the agent will retry the prompt
        after a successful compaction
    :param custom_instructions: for ``"manual"``: what the summary should focus on, else None
    :param ctx: the hook context
    :returns: None when nothing was done, else ``CompactionVerdict(compacted, retry=...,
        result=...)``; ``retry`` runs the prompt again (overflow recovery), ``result`` is the
        compaction reported to the user.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.CANCEL_OR_LAST)
def session_before_tree(
    preparation: TreePreparation, signal: AbortSignal, ctx: HookContext
) -> Cancel | TreeNavigationOptions | None:
    """``/tree`` is about to move to another point of the session tree.

    It fires whether or not the user asked for a summary of the branch being left. Your plugin
    can cancel the move, supply the summary, or change the instructions and the label. The
    default summarizer (``preparation.summarizer``, offered by ``builtin:compaction``) is called
    only after every handler had its say, and only if none supplied a summary.

    :param preparation: the move: target, old leaf, common ancestor, the entries to summarize,
        whether the user wants a summary, their instructions and label
    :param signal: the navigation's abort signal (``signal.aborted`` once the user aborts): wait
        inside ``signal.scope()`` or pass it on to model calls
    :param ctx: the hook context
    :returns: ``Cancel()``; or ``TreeNavigationOptions(summary=BranchSummary(...),
        custom_instructions=..., replace_instructions=..., label=...)`` (any of them; the
        summary is used only when the user asked for one); or None.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def session_tree(
    new_leaf_id: str | None,
    old_leaf_id: str | None,
    summary_entry: BranchSummaryEntry | None,
    from_extension: bool,
    ctx: HookContext,
) -> None:
    """``/tree`` moved to another point of the session tree.

    :param new_leaf_id: the current position now, or None at the root
    :param old_leaf_id: the position that was left, or None
    :param summary_entry: the ``branch_summary`` entry written for the branch left (``fromId``,
        ``summary`` …), or None
    :param from_extension: whether a plugin supplied that summary (false when there is none)
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


# --- Agent and turn hooks ---
# An *agent run* is one pass of the agent loop (a prompt, a retry or a queued follow-up); a
# *turn* is one assistant response plus the tool calls it makes.


@hookspec
@combine(Rule.COLLECT_AND_CHAIN, chained="system_prompt")
def before_agent_start(
    prompt: str, images: list[ImageContent], system_prompt: str, ctx: HookContext
) -> AgentStartChanges | None:
    """The user submitted a prompt; the agent run for it has not started yet.

    :param prompt: the prompt text (after skill and template expansion)
    :param images: the images attached to the prompt (possibly none)
    :param system_prompt: the system prompt for this run, as changed by earlier handlers
    :param ctx: the hook context
    :returns: None, or ``AgentStartChanges(message=PluginMessage(custom_type, content, ...),
        system_prompt=...)``: a message added to the conversation after the prompt (sent to the
        model as user text) and/or the system prompt for this run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def agent_start(ctx: HookContext) -> None:
    """A low-level agent run started (a prompt, a retry or a queued follow-up).

    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def agent_end(messages: list[AgentMessage], will_retry: bool, ctx: HookContext) -> None:
    """A low-level agent run ended.

    Automatic work (a retry, overflow recovery, queued messages) may still follow.

    :param messages: the messages the run produced, in order
    :param will_retry: whether knightcode retries the run (e.g. after compacting on overflow)
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def agent_before_settle(aborted: bool, ctx: HookContext) -> None:
    """Recovery is done; knightcode is about to report that no automatic work remains.

    That report is the ``agent_settled`` event. Handlers see the repaired session: context edits
    and a recovery compaction are already applied.

    :param aborted: whether the run ended because it was aborted
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def turn_start(turn_index: int, timestamp: int, ctx: HookContext) -> None:
    """A turn (one assistant response plus the tool calls it makes) started.

    :param turn_index: the index of the turn within the agent run, from 0
    :param timestamp: when the turn started, in milliseconds since the Unix epoch
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def turn_end(
    turn_index: int,
    message: AssistantMessage,
    tool_results: list[ToolResultMessage],
    ctx: HookContext,
) -> None:
    """A turn finished: the assistant response is complete and its tools have run.

    :param turn_index: the index of the turn within the agent run, from 0
    :param message: the assistant message of the turn
    :param tool_results: the tool results of the turn, in call order
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.TRANSFORM_CHAIN, chained="messages")
def context(messages: list[AgentMessage], ctx: HookContext) -> list[AgentMessage] | None:
    """A model request is about to be sent; your plugin can change its messages.

    The messages are a deep copy: changing them affects only this request, never the session.

    :param messages: a deep copy of the conversation for this request, as changed by earlier
        handlers
    :param ctx: the hook context
    :returns: the messages to send instead, or None to leave them unchanged.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.TRANSFORM_CHAIN, chained="payload")
def before_provider_request(
    payload: dict[str, object], ctx: HookContext
) -> dict[str, object] | None:
    """A request body is about to be sent to the model provider.

    :param payload: the provider request body, in the provider API's own shape (OpenAI chat
        completions, Anthropic messages …), as changed by earlier handlers
    :param ctx: the hook context
    :returns: the body to send instead, or None to send it unchanged.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def after_provider_response(status: int, headers: dict[str, str], ctx: HookContext) -> None:
    """The model provider's response headers arrived, before its body is streamed.

    :param status: the HTTP status code
    :param headers: the response headers (names in lower case)
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


# --- Message and tool execution hooks ---
# These report progress; they cannot change anything. The same events feed the JSON and RPC
# streams (``docs/json.md``).


@hookspec
@combine(Rule.NOTIFY)
def message_start(message: AgentMessage, ctx: HookContext) -> None:
    """A message started: a user, assistant, tool result or custom message.

    :param message: the message; its ``role`` says which kind (an assistant message is still
        empty)
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def message_update(
    message: AssistantMessage, assistant_message_event: AssistantMessageEvent, ctx: HookContext
) -> None:
    """An assistant message streamed an update (text, thinking or tool-call deltas).

    It fires for every delta: keep the handler quick.

    :param message: the assistant message as streamed so far
    :param assistant_message_event: the stream event (``type`` such as ``"text_delta"``,
        ``contentIndex``, ``delta`` …)
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def message_end(message: AgentMessage, ctx: HookContext) -> None:
    """A message is complete; this is the authoritative final message.

    :param message: the final message; its ``role`` says which kind (an assistant message has
        its ``stopReason``)
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def tool_execution_start(
    tool_call_id: str, tool_name: str, args: dict[str, object], ctx: HookContext
) -> None:
    """A tool call starts executing.

    :param tool_call_id: the id of the tool call, shared by its start, updates and end
    :param tool_name: the name of the tool
    :param args: the arguments of the call
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def tool_execution_update(
    tool_call_id: str,
    tool_name: str,
    args: dict[str, object],
    partial_result: ToolResult,
    ctx: HookContext,
) -> None:
    """A running tool reported a partial result (e.g. output of a running command).

    :param tool_call_id: the id of the tool call
    :param tool_name: the name of the tool
    :param args: the arguments of the call
    :param partial_result: the latest partial result of the tool (``content`` and ``details``)
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def tool_execution_end(
    tool_call_id: str, tool_name: str, result: ToolResult, is_error: bool, ctx: HookContext
) -> None:
    """A tool call finished executing.

    :param tool_call_id: the id of the tool call
    :param tool_name: the name of the tool
    :param result: the final result (``content`` and ``details``)
    :param is_error: whether the call failed
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


# --- Tool hooks ---
# A plugin's guard and filter on every tool call, built-in and plugin tools alike.


@hookspec
@combine(Rule.FIRST_BLOCK)
def tool_call(
    tool_call_id: str, tool_name: str, input: dict[str, object], ctx: HookContext
) -> Block | None:
    """A tool call is about to execute (its arguments are valid); your plugin can block it.

    Unlike other hooks, a handler that raises is not isolated: the exception blocks the call
    (its message is the error the model sees) and later handlers do not run — a failing guard
    must not wave a dangerous call through.

    :param tool_call_id: the id of the tool call
    :param tool_name: the name of the tool
    :param input: the arguments of the call
    :param ctx: the hook context
    :returns: ``Block(reason)`` to stop the call (the reason becomes the error result the model
        sees), or None to let it run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.PATCH_CHAIN)
def tool_result(
    tool_call_id: str,
    tool_name: str,
    input: dict[str, object],
    content: list[ToolResultContent],
    details: object,
    is_error: bool,
    ctx: HookContext,
) -> ToolResultPatch | None:
    """A tool call produced its result, which has not been handed to the model yet.

    Your plugin can patch it. It also fires for a tool that raised (``is_error`` true, the error
    text as ``content``), but then patches are ignored: the call stays failed with its error.

    :param tool_call_id: the id of the tool call
    :param tool_name: the name of the tool
    :param input: the arguments of the call
    :param content: the result's content blocks (text and images), as patched by earlier
        handlers
    :param details: the tool-specific details, as patched by earlier handlers
    :param is_error: whether the result is an error, as patched by earlier handlers
    :param ctx: the hook context
    :returns: None, or ``ToolResultPatch(content=..., details=..., is_error=...)`` with the
        fields to change.

    .. versionadded:: 0.1
    """


# --- Input and model hooks ---
# What the user types and runs, and the model and thinking level they choose.


@hookspec
@combine(Rule.INPUT_CHAIN)
def input(
    text: str,
    images: list[ImageContent],
    source: Literal["interactive", "rpc", "extension"],
    ctx: HookContext,
) -> Transform | Handled | None:
    """User input arrived, before it is expanded (skills, templates) or sent to the agent.

    Your plugin can rewrite the input or handle it itself.

    :param text: the input text, as transformed by earlier handlers
    :param images: the attached images, as transformed by earlier handlers
    :param source: ``"interactive"``, ``"rpc"`` (RPC, print and JSON modes) or ``"extension"``
        (sent by a plugin)
    :param ctx: the hook context
    :returns: None to pass the input on; ``Transform(text, images=...)`` to replace it;
        ``Handled()`` when your plugin dealt with it and nothing else should happen.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.FIRST_RESULT)
def user_bash(
    command: str, exclude_from_context: bool, cwd: Path, ctx: HookContext
) -> BashAnswer | RunInBackend | None:
    """The user runs a shell command with ``!`` (or ``!!``); it has not run yet.

    Your plugin can run the command elsewhere or answer it itself.

    :param command: the command line
    :param exclude_from_context: true for ``!!``: the output is not added to the model's context
    :param cwd: the directory the command runs in
    :param ctx: the hook context
    :returns: None to run it as usual; ``RunInBackend(backend)`` to run it through that
        execution backend; ``BashAnswer(output, exit_code, ...)`` to answer without running it.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def model_select(
    model: Model,
    previous_model: Model | None,
    source: Literal["set", "cycle", "restore"],
    ctx: HookContext,
) -> None:
    """The current model changed.

    :param model: the newly selected model
    :param previous_model: the model selected before, or None
    :param source: ``"set"`` (chosen by the user or a plugin), ``"cycle"`` (model cycling) or
        ``"restore"`` (restored from a resumed session)
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def thinking_level_select(
    level: ThinkingLevel, previous_level: ThinkingLevel | None, ctx: HookContext
) -> None:
    """The thinking level changed.

    :param level: the new level: ``"off"``, ``"minimal"``, ``"low"``, ``"medium"``, ``"high"``,
        ``"xhigh"`` or (where the provider has it) ``"max"``
    :param previous_level: the level before, or None
    :param ctx: the hook context
    :returns: Ignored.

    .. versionadded:: 0.1
    """


def all_hook_names() -> list[str]:
    """The names of all hookspecs in this module, in the order they are defined."""
    # Module globals keep definition order; the hookspec marker leaves ``knightcode_spec`` on
    # each spec function, and nothing imported here carries it.
    return [
        name
        for name, value in globals().items()
        if callable(value) and getattr(value, "knightcode_spec", None) is not None
    ]
