"""The extension contract: every hook a knightcode plugin can implement.

Each hook is a pluggy hookspec. Its docstring says when it fires, what every argument holds, what a
result means and how the results of several plugins combine (the rule is also recorded on the
function by :func:`~knightcode._plugins.combine.combine`, which the host's dispatcher reads).
``docs/plugin-hooks.md`` mirrors this file; ``tests/test_docs_hooks.py`` keeps the two in step.

A hook implementation may declare any subset of a hook's arguments, in any order (pluggy passes
arguments by name), and may be a plain function or ``async def``. Event handlers run in plugin load
order: built-ins, installed plugins, user extensions, project extensions, settings ``extensions``,
then ``-e`` paths. Every event hook takes ``ctx`` (the
:class:`~knightcode._plugins.context.ExtensionContext`) as its last argument.

This module is imported on every start, so it imports nothing beyond the markers and the rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from knightcode._markers import hookspec
from knightcode._plugins.combine import Rule, combine

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from knightcode._plugins.context import ExtensionContext

# --- registration hooks ---


@hookspec
@combine(Rule.REGISTER)
def register_tools(register: Callable[..., None]) -> None:
    """Called once per plugin, when it is loaded, to register tools the model can call.

    ``register`` takes a :class:`~knightcode._plugins.definitions.ToolDefinition` or its fields as
    keyword arguments (``name``, ``description``, ``parameters``, ``execute`` …). A plugin tool
    named like one of the seven built-in tools (``read``, ``write``, ``edit``, ``bash``, ``grep``,
    ``find``, ``ls``) replaces the built-in one.

    :param register: the callback that records one tool for the calling plugin
    :returns: Ignored.

    Combination: registration — every plugin is called once. Between plugins the first
    registration of a name wins and the later one is reported as a conflict naming both plugins
    (except that a plugin tool replaces a built-in tool of the same name). A raising handler is
    isolated: that plugin fails to load (reported, skipped) and the other plugins still load.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.REGISTER)
def register_commands(register: Callable[..., None]) -> None:
    """Called once per plugin, when it is loaded, to register slash commands such as ``/hello``.

    ``register`` takes a :class:`~knightcode._plugins.definitions.CommandDefinition` or its fields
    as keyword arguments (``name``, ``handler``, ``description``). The handler is called as
    ``handler(args, ctx)`` with the text after the command name.

    :param register: the callback that records one command for the calling plugin
    :returns: Ignored.

    Combination: registration — the first registration of a name wins; a later one is reported
    as a conflict naming both plugins. A raising handler is isolated: that plugin fails to load
    (reported, skipped) and the other plugins still load.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.REGISTER)
def register_providers(register: Callable[..., None]) -> None:
    """Called once per plugin, when it is loaded, to register model providers.

    ``register`` takes a :class:`~knightcode._plugins.definitions.ProviderDefinition` or its fields
    as keyword arguments (``name``, ``api``, ``base_url``, ``api_key``, ``models`` …). Its models
    become selectable as ``<provider>/<model id>``.

    :param register: the callback that records one provider for the calling plugin
    :returns: Ignored.

    Combination: registration — the first registration of a name wins; a later one is reported
    as a conflict naming both plugins. A raising handler is isolated: that plugin fails to load
    (reported, skipped) and the other plugins still load.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.REGISTER)
def register_flags(register: Callable[..., None]) -> None:
    """Called once per plugin, when it is loaded, to register command-line flags.

    ``register`` takes a :class:`~knightcode._plugins.definitions.FlagDefinition` or its fields as
    keyword arguments (``name``, ``type``, ``default``, ``description``). Handlers read a flag's
    value with ``ctx.host.flag_value(name)``.

    :param register: the callback that records one flag for the calling plugin
    :returns: Ignored.

    Combination: registration — the first registration of a name wins; a later one is reported
    as a conflict naming both plugins. A raising handler is isolated: that plugin fails to load
    (reported, skipped) and the other plugins still load.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.REGISTER)
def register_shortcuts(register: Callable[..., None]) -> None:
    """Called once per plugin, when it is loaded, to register key bindings of the interactive UI.

    ``register`` takes a :class:`~knightcode._plugins.definitions.ShortcutDefinition` or its
    fields as keyword arguments (``key``, ``handler``, ``description``). The handler is called as
    ``handler(ctx)``.

    :param register: the callback that records one shortcut for the calling plugin
    :returns: Ignored.

    Combination: registration — the first registration of a key wins; a later one is reported as
    a conflict naming both plugins. A raising handler is isolated: that plugin fails to load
    (reported, skipped) and the other plugins still load.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.LAST_RESULT)
def execution_backend(ctx: ExtensionContext) -> Any:
    """Called once at startup, after all plugins are loaded, to choose the execution backend.

    The backend is the object every tool, built-in and plugin tools alike, uses for file access
    and for running processes; a sandbox plugin returns one that works inside its sandbox.

    :param ctx: the extension context
    :returns: an ``ExecutionBackend`` object, or None for no opinion (the local backend is used
        when no plugin returns one).

    Combination: last non-None result wins, so a later-loaded plugin (a user extension) overrides
    an earlier one (a built-in sandbox). A raising handler is isolated: it is reported as an
    extension error and counts as no opinion; the others still run.

    .. versionadded:: 0.1
    """


# --- resource hooks ---


@hookspec
@combine(Rule.COLLECT)
def resources_discover(cwd: Path, reason: str, ctx: ExtensionContext) -> dict[str, Any] | None:
    """Fires when knightcode looks for skills, prompt templates and themes (startup, reload).

    :param cwd: the working directory of the session
    :param reason: ``"startup"`` or ``"reload"``
    :param ctx: the extension context
    :returns: None, or a dict with any of ``skill_paths``, ``prompt_paths`` and ``theme_paths``,
        each a list of files or directories to add (relative paths are resolved against ``cwd``).

    Combination: collected — every handler runs; the lists of all plugins are concatenated in
    load order, each path remembered with the plugin that supplied it. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


# --- session lifecycle hooks ---


@hookspec
@combine(Rule.NOTIFY)
def session_start(reason: str, previous_session_file: Path | None, ctx: ExtensionContext) -> None:
    """Fires when a session becomes the current one.

    That is at startup, after a reload, and after switching to a new, resumed or forked session.

    :param reason: ``"startup"``, ``"reload"``, ``"new"``, ``"resume"`` or ``"fork"``
    :param previous_session_file: the session file that was current before (for ``new``,
        ``resume`` and ``fork``), or None
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def session_shutdown(reason: str, target_session_file: Path | None, ctx: ExtensionContext) -> None:
    """Fires when the current session is left.

    That is on quit, before a reload, and before switching to a new, resumed or forked session.

    :param reason: ``"quit"``, ``"reload"``, ``"new"``, ``"resume"`` or ``"fork"``
    :param target_session_file: the session file that becomes current next, when known, or None
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.CANCEL_OR_LAST)
def session_before_switch(
    reason: str, target_session_file: Path | None, ctx: ExtensionContext
) -> dict[str, Any] | None:
    """Fires before knightcode switches to a new session (``/new``) or resumes another one.

    A plugin can stop the switch.

    :param reason: ``"new"`` or ``"resume"``
    :param target_session_file: the session file to resume, or None for a new session
    :param ctx: the extension context
    :returns: ``{"cancel": True}`` to stop the switch; None (or a result without ``cancel``) to
        let it happen.

    Combination: first cancel short-circuits — the first result with ``cancel`` true stops the
    walk and wins; otherwise the last non-empty result is kept. A raising handler is isolated: it
    is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.CANCEL_OR_LAST)
def session_before_fork(
    entry_id: str, position: str, ctx: ExtensionContext
) -> dict[str, Any] | None:
    """Fires before knightcode forks the session at an entry into a new session file.

    A plugin can stop the fork.

    :param entry_id: the id of the entry the fork is made from
    :param position: ``"before"`` to fork from the entry's parent (the entry itself, a user
        message, goes back into the editor) or ``"at"`` to fork including the entry
    :param ctx: the extension context
    :returns: None, or a dict with ``cancel`` (bool, true stops the fork) and
        ``skip_conversation_restore`` (bool, true keeps the agent's in-memory conversation instead
        of loading the forked branch into it, for plugins that manage it themselves).

    Combination: first cancel short-circuits — the first result with ``cancel`` true stops the
    walk and wins; otherwise the last non-empty result is kept. A raising handler is isolated: it
    is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.CANCEL_OR_LAST)
def session_before_compact(
    preparation: Any,
    branch_entries: list[Any],
    custom_instructions: str | None,
    reason: str,
    will_retry: bool,
    signal: Any,
    ctx: ExtensionContext,
) -> dict[str, Any] | None:
    """Fires before a compaction (automatic or ``/compact``) summarizes old messages.

    A plugin can cancel the compaction or supply the summary itself.

    ``preparation`` is what the default compaction would work from, with the attributes:

    - ``messages_to_summarize`` — the messages to summarize, from the previous kept boundary (or
      the session start) up to the cut point;
    - ``turn_prefix_messages`` — the early part of a split user-message span (empty unless
      ``is_split_turn``);
    - ``is_split_turn`` — whether the cut point lies inside a user-message span;
    - ``previous_summary`` — the summary of the previous compaction, or None;
    - ``file_ops`` — the file operations extracted from the messages (files read, written and
      edited), carried on from the previous knightcode-generated compaction;
    - ``tokens_before`` — the context tokens before compaction;
    - ``first_kept_entry_id`` — the id of the first entry kept verbatim;
    - ``settings`` — the effective compaction settings, after per-model overrides.

    :param preparation: the compaction preparation described above
    :param branch_entries: every session entry on the current branch, root first (for state a
        plugin keeps in custom entries)
    :param custom_instructions: the focus text given to ``/compact``, or None
    :param reason: ``"manual"`` (``/compact``), ``"threshold"`` or ``"overflow"``
    :param will_retry: whether the aborted turn is retried after compaction (overflow recovery)
    :param signal: the abort signal of the compaction (``signal.is_set()`` becomes true when the
        user aborts); pass it on to model calls
    :param ctx: the extension context
    :returns: ``{"cancel": True}`` to cancel the compaction; or ``{"compaction": {"summary": str,
        "first_kept_entry_id": str, "tokens_before": int, "usage": ... (optional), "details": ...
        (optional)}}`` to use that summary instead of generating one; None to let the default
        compaction run.

    Combination: first cancel short-circuits — the first result with ``cancel`` true stops the
    walk and wins; otherwise the last non-empty result is kept. A raising handler is isolated: it
    is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def session_compact(compaction_entry: Any, from_extension: bool, ctx: ExtensionContext) -> None:
    """Fires after a compaction succeeded and its entry was written to the session file.

    :param compaction_entry: the ``CompactionEntry`` that was appended (``summary``,
        ``first_kept_entry_id``, ``tokens_before``, ``usage``, ``details`` …)
    :param from_extension: whether a plugin supplied the summary through
        ``session_before_compact``
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def session_compact_failed(
    reason: str,
    error_message: str | None,
    aborted: bool,
    will_retry: bool,
    from_extension: bool,
    ctx: ExtensionContext,
) -> None:
    """Fires when a manual or automatic compaction fails or is aborted.

    Every ``session_before_compact`` attempt ends in either ``session_compact`` or this hook, so
    telemetry plugins can pair them.

    :param reason: ``"manual"`` (``/compact``), ``"threshold"`` or ``"overflow"``
    :param error_message: what went wrong, for failures that were not aborts; otherwise None
    :param aborted: true when the compaction was cancelled or aborted
    :param will_retry: whether the aborted turn would have been retried after compaction
    :param from_extension: whether a plugin-supplied compaction was being used
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.FIRST_RESULT)
def session_check_compaction(
    trigger: str,
    message: Any,
    will_retry: bool,
    custom_instructions: str | None,
    ctx: ExtensionContext,
) -> dict[str, Any] | None:
    """Fires at each point where the context may need compacting.

    The compaction plugin (``builtin:compaction``) decides and compacts. The kernel only knows
    *when* to ask: before a new prompt is sent, between the turns of a run (after a tool batch,
    before the next request), after a run ends, when a provider reported a context overflow or
    stopped early because of its output limit, and when the user asks (``/compact``, RPC
    ``compact``). Whether the threshold is crossed (``ctx.agent.auto_compaction_enabled`` says
    whether automatic compaction is on), and how to compact, is the handler's business. Without
    a handler (compaction disabled) nothing is compacted, overflow errors stay errors, and a
    manual compaction is refused.

    :param trigger: ``"before_prompt"``, ``"between_turns"``, ``"after_run"``, ``"overflow"``,
        ``"length"`` or ``"manual"``
    :param message: the assistant message behind the check (the failed attempt for
        ``"overflow"``/``"length"``, with its ``stopReason`` and ``errorMessage``; the last
        assistant message for the others), or None before the first reply
    :param will_retry: for ``"overflow"``/``"length"``: whether the agent will retry the prompt
        after a successful compaction
    :param custom_instructions: for ``"manual"``: what the user asked the summary to focus on
        (``/compact <instructions>``), else None
    :param ctx: the extension context
    :returns: None when nothing was done, else ``{"compacted": bool, "retry": bool, "result":
        {...}}``; ``retry`` true asks the agent to run the prompt again (overflow recovery);
        ``result`` is the compaction result reported to the user (summary, firstKeptEntryId,
        tokensBefore …)

    Combination: the first non-None result wins and stops the walk. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.CANCEL_OR_LAST)
def session_before_tree(
    preparation: Any, signal: Any, ctx: ExtensionContext
) -> dict[str, Any] | None:
    """Fires before ``/tree`` moves to another point of the session tree.

    It fires whether or not the user asked for a summary of the branch being left. A plugin can
    cancel the navigation or supply the summary.

    ``preparation`` has the attributes:

    - ``target_id`` — the entry being navigated to;
    - ``old_leaf_id`` — the current position, being left (None in an empty session);
    - ``common_ancestor_id`` — the deepest entry shared by both positions, or None;
    - ``entries_to_summarize`` — the entries from the old leaf back to the common ancestor;
    - ``user_wants_summary`` — whether the user chose to summarize the branch being left;
    - ``custom_instructions`` — the user's instructions for the summary, or None;
    - ``replace_instructions`` — whether they replace the default summary prompt;
    - ``label`` — the label the user wants on the summary entry (or the target), or None;
    - ``summarizer`` — the default summarizer offered by ``builtin:compaction`` (None when it is
      disabled); knightcode calls it only when no handler cancelled or supplied a summary.

    :param preparation: the tree-navigation preparation described above
    :param signal: the abort signal of the navigation (``signal.is_set()`` becomes true when the
        user aborts); pass it on to model calls
    :param ctx: the extension context
    :returns: None, or a dict with any of: ``cancel`` (true stops the navigation); ``summary``
        (``{"summary": str, "details": ..., "usage": ...}``, used instead of a generated one, and
        only when the user asked for a summary); ``custom_instructions`` (str, for the generated
        summary); ``replace_instructions`` (bool, the custom instructions replace the default
        prompt instead of being appended); ``label`` (str, attached to the summary entry or the
        target).

    Combination: first cancel short-circuits — the first result with ``cancel`` true stops the
    walk and wins; otherwise the last non-empty result is kept. A raising handler is isolated: it
    is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def session_tree(
    new_leaf_id: str | None,
    old_leaf_id: str | None,
    summary_entry: Any | None,
    from_extension: bool,
    ctx: ExtensionContext,
) -> None:
    """Fires after ``/tree`` moved to another point of the session tree.

    :param new_leaf_id: the current position now, or None at the root
    :param old_leaf_id: the position that was left, or None
    :param summary_entry: the ``BranchSummaryEntry`` written for the branch left, or None when no
        summary was made
    :param from_extension: whether a plugin supplied that summary through
        ``session_before_tree`` (false when there is none)
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


# --- agent and turn hooks ---


@hookspec
@combine(Rule.COLLECT_AND_CHAIN, chained="system_prompt")
def before_agent_start(
    prompt: str, images: list[Any], system_prompt: str, ctx: ExtensionContext
) -> dict[str, Any] | None:
    """Fires after the user submitted a prompt, before the agent run for it starts.

    :param prompt: the prompt text (after skill and template expansion)
    :param images: the image content blocks attached to the prompt (possibly empty)
    :param system_prompt: the system prompt for this run, as changed by earlier handlers
    :param ctx: the extension context
    :returns: None, or a dict with ``message`` (a custom message ``{"custom_type": str,
        "content": str or content blocks, "display": bool, "details": ...}`` added to the
        conversation after the prompt) and/or ``system_prompt`` (str, replaces the system prompt
        for this run).

    Combination: collected and chained — the ``message`` of every handler is collected in load
    order; ``system_prompt`` is chained, each handler sees the value the previous one returned. A
    raising handler is isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def agent_start(ctx: ExtensionContext) -> None:
    """Fires when a low-level agent run starts (a prompt, a retry or a queued follow-up).

    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def agent_end(messages: list[Any], will_retry: bool, ctx: ExtensionContext) -> None:
    """Fires when a low-level agent run ends.

    Automatic work (a retry, overflow recovery, queued messages) may still follow.

    :param messages: the messages the run produced
    :param will_retry: whether knightcode retries the run (e.g. after compacting on overflow)
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def agent_before_settle(aborted: bool, ctx: ExtensionContext) -> None:
    """Fires after recovery processing, before knightcode reports it has no more automatic work.

    That report is the ``agent_settled`` event. Handlers see the repaired projection: context
    edits and a recovery compaction are already applied.

    :param aborted: whether the run ended because it was aborted
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def turn_start(turn_index: int, timestamp: int, ctx: ExtensionContext) -> None:
    """Fires when a turn (one assistant response plus the tool calls it makes) starts.

    :param turn_index: the index of the turn within the agent run, from 0
    :param timestamp: when the turn started, in milliseconds since the Unix epoch
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def turn_end(turn_index: int, message: Any, tool_results: list[Any], ctx: ExtensionContext) -> None:
    """Fires when a turn finished: the assistant response is complete and its tools have run.

    :param turn_index: the index of the turn within the agent run, from 0
    :param message: the assistant message of the turn
    :param tool_results: the tool result messages of the turn, in call order
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.TRANSFORM_CHAIN, chained="messages")
def context(messages: list[Any], ctx: ExtensionContext) -> list[Any] | None:
    """Fires before every model call, with the messages about to be sent.

    A plugin can change them.

    The messages are a deep copy: changing them affects only this request, never the session.

    :param messages: the conversation messages for this request, as changed by earlier handlers
    :param ctx: the extension context
    :returns: a new list of messages to send instead, or None to leave them unchanged.

    Combination: chained — each non-None result replaces ``messages`` for the next handler and
    the final list is sent. A raising handler is isolated: it is reported as an extension error
    and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.TRANSFORM_CHAIN, chained="payload")
def before_provider_request(
    payload: dict[str, Any], ctx: ExtensionContext
) -> dict[str, Any] | None:
    """Fires just before a request is sent to the model provider, with the request body.

    :param payload: the provider request body (in the provider API's own shape, e.g. OpenAI chat
        completions or Anthropic messages), as changed by earlier handlers
    :param ctx: the extension context
    :returns: a replacement body, or None to send it unchanged.

    Combination: chained — each non-None result replaces ``payload`` for the next handler and the
    final body is sent. A raising handler is isolated: it is reported as an extension error and
    the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def after_provider_response(status: int, headers: dict[str, str], ctx: ExtensionContext) -> None:
    """Fires when the model provider's response headers arrive, before its body is streamed.

    :param status: the HTTP status code
    :param headers: the response headers
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


# --- message and tool execution hooks ---


@hookspec
@combine(Rule.NOTIFY)
def message_start(message: Any, ctx: ExtensionContext) -> None:
    """Fires when a message starts: a user, assistant, tool result or custom message.

    :param message: the message (for an assistant message, still empty)
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def message_update(
    message: Any, assistant_message_event: dict[str, Any], ctx: ExtensionContext
) -> None:
    """Fires for every streamed update of an assistant message (text, thinking, tool call deltas).

    :param message: the assistant message as streamed so far
    :param assistant_message_event: the stream event (``type`` such as ``"text_delta"``,
        ``contentIndex``, ``delta`` …)
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def message_end(message: Any, ctx: ExtensionContext) -> None:
    """Fires when a message is complete; this is the authoritative final message.

    :param message: the final message
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def tool_execution_start(
    tool_call_id: str, tool_name: str, args: dict[str, Any], ctx: ExtensionContext
) -> None:
    """Fires when a tool call starts executing.

    :param tool_call_id: the id of the tool call, shared by its start, update and end
    :param tool_name: the name of the tool
    :param args: the arguments of the call
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def tool_execution_update(
    tool_call_id: str,
    tool_name: str,
    args: dict[str, Any],
    partial_result: Any,
    ctx: ExtensionContext,
) -> None:
    """Fires when a running tool reports a partial result (e.g. output of a running command).

    :param tool_call_id: the id of the tool call
    :param tool_name: the name of the tool
    :param args: the arguments of the call
    :param partial_result: the latest partial result (``content`` and ``details``) of the tool
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def tool_execution_end(
    tool_call_id: str, tool_name: str, result: Any, is_error: bool, ctx: ExtensionContext
) -> None:
    """Fires when a tool call finished executing.

    :param tool_call_id: the id of the tool call
    :param tool_name: the name of the tool
    :param result: the final result (``content`` and ``details``)
    :param is_error: whether the call failed
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


# --- tool hooks ---


@hookspec
@combine(Rule.FIRST_BLOCK)
def tool_call(
    tool_call_id: str, tool_name: str, input: dict[str, Any], ctx: ExtensionContext
) -> dict[str, Any] | None:
    """Fires before a tool call executes, after its arguments were validated.

    A plugin can block the call.

    :param tool_call_id: the id of the tool call
    :param tool_name: the name of the tool
    :param input: the arguments of the call
    :param ctx: the extension context
    :returns: ``{"block": True, "reason": "..."}`` to stop the call (the reason becomes the error
        tool result the model sees); None to let it run.

    Combination: first block wins — the first result with ``block`` true stops the walk. A raising
    handler is NOT isolated: the exception propagates, blocks the call, and its message becomes
    the error tool result; later handlers do not run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.PATCH_CHAIN)
def tool_result(
    tool_call_id: str,
    tool_name: str,
    input: dict[str, Any],
    content: list[dict[str, Any]],
    details: Any,
    is_error: bool,
    ctx: ExtensionContext,
) -> dict[str, Any] | None:
    """Fires when a tool call produced its result, before the result is handed to the model.

    A plugin can patch the result.

    Also fires for a tool that raised (``is_error`` true, the error text as ``content``), but then
    patches are ignored: the call stays failed with its error.

    :param tool_call_id: the id of the tool call
    :param tool_name: the name of the tool
    :param input: the arguments of the call
    :param content: the result content blocks (``{"type": "text", "text": ...}`` or images), as
        patched by earlier handlers
    :param details: the tool-specific details of the result, as patched by earlier handlers
    :param is_error: whether the result is an error, as patched by earlier handlers
    :param ctx: the extension context
    :returns: None, or a partial patch with any of ``content``, ``details`` and ``is_error``.

    Combination: chained patches — patches apply field by field, and each handler sees the values
    patched by the ones before it; fields a patch leaves out keep their value. A raising handler
    is isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


# --- input and model hooks ---


@hookspec
@combine(Rule.INPUT_CHAIN)
def input(
    text: str, images: list[Any], source: str, ctx: ExtensionContext
) -> dict[str, Any] | None:
    """Fires when user input arrives, before it is expanded or sent to the agent.

    A plugin can rewrite the input or handle it itself.

    :param text: the input text, as transformed by earlier handlers
    :param images: the attached image content blocks, as transformed by earlier handlers
    :param source: ``"interactive"``, ``"rpc"`` or ``"extension"`` (sent by a plugin)
    :param ctx: the extension context
    :returns: None or ``{"action": "continue"}`` to pass the input on unchanged;
        ``{"action": "transform", "text": str, "images": [...] (optional)}`` to replace it;
        ``{"action": "handled"}`` when the plugin dealt with it and nothing else should happen.

    Combination: chained — ``transform`` results are chained (text and images), the first
    ``handled`` short-circuits. A raising handler is isolated: it is reported as an extension
    error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.FIRST_RESULT)
def user_bash(
    command: str, exclude_from_context: bool, cwd: Path, ctx: ExtensionContext
) -> dict[str, Any] | None:
    """Fires when the user runs a shell command with ``!`` (or ``!!``), before it runs.

    A plugin can run the command elsewhere or answer it itself.

    :param command: the command line
    :param exclude_from_context: true for ``!!``: the output is not added to the model's context
    :param cwd: the directory the command runs in
    :param ctx: the extension context
    :returns: None to run it as usual; ``{"operations": backend}`` to run it through that
        ``ExecutionBackend``; or ``{"result": {"output": str, "exit_code": int | None,
        "cancelled": bool, "truncated": bool, "full_output_path": str (optional)}}`` to answer
        it without running it.

    Combination: first result wins — the first non-None result stops the walk. A raising handler
    is isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def model_select(
    model: Any, previous_model: Any | None, source: str, ctx: ExtensionContext
) -> None:
    """Fires when the current model changes.

    :param model: the newly selected model (``provider``, ``id``, ``context_window`` …)
    :param previous_model: the model selected before, or None
    :param source: ``"set"`` (chosen by the user or a plugin), ``"cycle"`` (model cycling) or
        ``"restore"`` (restored from a resumed session)
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

    .. versionadded:: 0.1
    """


@hookspec
@combine(Rule.NOTIFY)
def thinking_level_select(level: str, previous_level: str | None, ctx: ExtensionContext) -> None:
    """Fires when the thinking level changes.

    :param level: the new level: ``"off"``, ``"minimal"``, ``"low"``, ``"medium"``, ``"high"`` or
        ``"xhigh"``
    :param previous_level: the level before, or None
    :param ctx: the extension context
    :returns: Ignored.

    Combination: every handler runs in load order; results are ignored. A raising handler is
    isolated: it is reported as an extension error and the others still run.

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
