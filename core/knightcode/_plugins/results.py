"""What a hook handler may return, as small typed values — and the check of what it did return.

A handler answers with one of these objects (or ``None`` for "no opinion"). The dict forms of the
reference (``{"cancel": True}``, ``{"block": True, "reason": …}`` …) are accepted as well and
turned into the same objects. Anything else is a mistake in the plugin: :func:`WrongResult` is
raised by the ``parse_*`` functions, and the dispatcher reports it as an extension error naming
the plugin and the hook.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

if TYPE_CHECKING:
    from knightcode._tools.backend import ExecutionBackend
    from knightcode._types.events import CompactionResult
    from knightcode._types.messages import ImageContent, ToolResultContent, Usage, UserContent

__all__ = [
    "UNCHANGED",
    "AgentStartChanges",
    "BashAnswer",
    "Block",
    "BranchSummary",
    "Cancel",
    "CompactionOverride",
    "CompactionVerdict",
    "ForkOptions",
    "Handled",
    "PluginMessage",
    "Resources",
    "RunInBackend",
    "ToolResultPatch",
    "Transform",
    "TreeNavigationOptions",
]

_T = TypeVar("_T")


class _Unchanged:
    """The type of :data:`UNCHANGED`."""

    _instance: _Unchanged | None = None

    def __new__(cls) -> _Unchanged:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNCHANGED"

    def __bool__(self) -> bool:
        return False


UNCHANGED: Final = _Unchanged()
"""A :class:`ToolResultPatch` field left as it is (``None`` is a value ``details`` may take)."""


# --- the results ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Cancel:
    """Stop the operation: the switch, fork, compaction or tree navigation does not happen."""


@dataclass(frozen=True)
class Block:
    """Do not run the tool call; ``reason`` becomes the error result the model sees.

    :param reason: why (shown to the model, which may try something else)
    """

    reason: str = "Tool execution was blocked"


@dataclass(frozen=True)
class ForkOptions:
    """How a fork goes ahead.

    :param skip_conversation_restore: keep the agent's in-memory conversation instead of
        loading the forked branch into it (for plugins that manage it themselves)
    """

    skip_conversation_restore: bool = False


@dataclass(frozen=True)
class CompactionOverride:
    """Use this summary instead of generating one (``session_before_compact``).

    :param summary: the summary that replaces the older messages
    :param first_kept_entry_id: the first entry kept verbatim (on the current branch)
    :param tokens_before: the context size before compaction (usually
        ``preparation.tokens_before``)
    :param details: anything to keep on the ``compaction`` entry (JSON)
    :param usage: the usage of the request that wrote the summary, so session totals include it
    """

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: object = None
    usage: Usage | None = None


@dataclass(frozen=True)
class BranchSummary:
    """A summary of the branch being left (``session_before_tree``).

    :param summary: the summary text
    :param details: anything to keep on the ``branch_summary`` entry (JSON)
    :param usage: the usage of the request that wrote it
    """

    summary: str
    details: object = None
    usage: Usage | None = None


@dataclass(frozen=True)
class TreeNavigationOptions:
    """Changes to a ``/tree`` move (``session_before_tree``); a field left None changes nothing.

    :param summary: use this summary (only when the user asked for one)
    :param custom_instructions: instructions for the generated summary
    :param replace_instructions: whether they replace the default prompt instead of adding to it
    :param label: the label for the summary entry (or the target)
    """

    summary: BranchSummary | None = None
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


@dataclass(frozen=True)
class PluginMessage:
    """A message a plugin adds to the conversation (as a ``custom`` message, sent to the model
    as user text).

    :param custom_type: your plugin's name for this kind of message
    :param content: text or content blocks
    :param display: whether a UI shows it
    :param details: anything to keep with it (JSON; not sent to the model)
    """

    custom_type: str
    content: str | list[UserContent]
    display: bool = True
    details: object = None


@dataclass(frozen=True)
class AgentStartChanges:
    """``before_agent_start``: a message to add after the prompt and/or a new system prompt.

    :param message: added to the conversation after the prompt
    :param system_prompt: replaces the system prompt for this run
    """

    message: PluginMessage | None = None
    system_prompt: str | None = None


@dataclass(frozen=True)
class Transform:
    """``input``: replace the user's input.

    :param text: the new text
    :param images: the new images (None keeps the current ones)
    """

    text: str
    images: list[ImageContent] | None = None


@dataclass(frozen=True)
class Handled:
    """``input``: the plugin dealt with the input; nothing else happens."""


@dataclass(frozen=True)
class BashAnswer:
    """``user_bash``: the command's result, without running it.

    :param output: what it printed
    :param exit_code: its exit status (None: it did not exit normally)
    """

    output: str
    exit_code: int | None = 0
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None


@dataclass(frozen=True)
class RunInBackend:
    """``user_bash``: run the command through this execution backend instead."""

    backend: ExecutionBackend


@dataclass(frozen=True)
class ToolResultPatch:
    """``tool_result``: change fields of a tool's result; :data:`UNCHANGED` fields keep theirs.

    :param content: the content blocks the model sees
    :param details: the tool-specific details
    :param is_error: whether the result is an error
    """

    content: list[ToolResultContent] | _Unchanged = UNCHANGED
    details: object = UNCHANGED
    is_error: bool | _Unchanged = UNCHANGED


@dataclass(frozen=True)
class CompactionVerdict:
    """``session_check_compaction``: what the compacting plugin did at this check.

    :param compacted: a compaction entry was written
    :param retry: run the failed prompt again (overflow recovery)
    :param result: the compaction, as reported to the user
    :param error_message: why it failed
    :param aborted: it was cancelled or aborted
    """

    compacted: bool
    retry: bool = False
    result: CompactionResult | None = None
    error_message: str | None = None
    aborted: bool = False


@dataclass(frozen=True)
class Resources:
    """``resources_discover``: files or directories to add (relative ones against ``cwd``)."""

    skill_paths: tuple[str | Path, ...] = ()
    prompt_paths: tuple[str | Path, ...] = ()
    theme_paths: tuple[str | Path, ...] = ()
