"""Checking what a hook handler returned, and turning the reference's dict forms into the
typed results of :mod:`knightcode._plugins.results`.

Anything a hook does not accept raises :class:`WrongResult` (the message says what the hook
takes); the dispatcher reports it as an extension error naming the plugin and the hook. The
result classes are imported only when a handler returns something: most handlers return None,
and building those dataclasses costs start-up time (~5 ms) every run would otherwise pay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from knightcode._plugins.results import (
        AgentStartChanges,
        BashAnswer,
        Block,
        Cancel,
        CompactionOverride,
        CompactionVerdict,
        ForkOptions,
        Handled,
        PluginMessage,
        Resources,
        RunInBackend,
        ToolResultPatch,
        Transform,
        TreeNavigationOptions,
    )
    from knightcode._tools.backend import ExecutionBackend
    from knightcode._types.messages import Usage

_T = TypeVar("_T")


class WrongResult(TypeError):
    """A handler returned something its hook does not accept; the message says what it takes."""


Expected = str
"""How the error message names what a hook accepts."""


def _mapping(value: object, expected: Expected, keys: Sequence[str]) -> Mapping[str, object]:
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise WrongResult(f"expected {expected}")
    unknown = sorted(set(value) - set(keys))
    if unknown:
        raise WrongResult(f"unknown key {unknown[0]!r}; expected {expected}")
    return value


def _typed(value: object, kind: type[_T], field: str, expected: Expected) -> _T:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise WrongResult(
            f"{field} must be {kind.__name__}, not {type(value).__name__}; expected {expected}"
        )
    return value


def _optional(value: object, kind: type[_T], field: str, expected: Expected) -> _T | None:
    return None if value is None else _typed(value, kind, field, expected)


def _is_cancel(value: Mapping[str, object]) -> bool:
    return bool(value.get("cancel"))


CANCEL_ONLY = "Cancel() or None"


def parse_cancel(value: object) -> Cancel | None:
    """``session_before_switch``."""
    if value is None:
        return None
    from knightcode._plugins.results import Cancel

    if value is None or isinstance(value, Cancel):
        return value
    data = _mapping(value, CANCEL_ONLY, ("cancel",))
    return Cancel() if _is_cancel(data) else None


FORK = "Cancel(), ForkOptions(...) or None"


def parse_fork(value: object) -> Cancel | ForkOptions | None:
    """``session_before_fork``."""
    if value is None:
        return None
    from knightcode._plugins.results import Cancel, ForkOptions

    if value is None or isinstance(value, (Cancel, ForkOptions)):
        return value
    data = _mapping(value, FORK, ("cancel", "skip_conversation_restore"))
    if _is_cancel(data):
        return Cancel()
    skip = data.get("skip_conversation_restore", False)
    return ForkOptions(
        skip_conversation_restore=_typed(skip, bool, "skip_conversation_restore", FORK)
    )


COMPACTION = "Cancel(), CompactionOverride(...) or None"


def parse_compaction(value: object) -> Cancel | CompactionOverride | None:
    """``session_before_compact``."""
    if value is None:
        return None
    from knightcode._plugins.results import Cancel, CompactionOverride

    if isinstance(value, Cancel):
        return value
    if isinstance(value, CompactionOverride):
        _typed(value.summary, str, "summary", COMPACTION)
        _typed(value.first_kept_entry_id, str, "first_kept_entry_id", COMPACTION)
        _typed(value.tokens_before, int, "tokens_before", COMPACTION)
        return value
    data = _mapping(value, COMPACTION, ("cancel", "compaction"))
    if _is_cancel(data):
        return Cancel()
    supplied = data.get("compaction")
    if supplied is None:
        return None
    fields = _mapping(
        supplied,
        COMPACTION,
        (
            "summary",
            "first_kept_entry_id",
            "firstKeptEntryId",
            "tokens_before",
            "tokensBefore",
            "details",
            "usage",
        ),
    )
    first = fields.get("first_kept_entry_id", fields.get("firstKeptEntryId"))
    tokens = fields.get("tokens_before", fields.get("tokensBefore", 0))
    return CompactionOverride(
        summary=_typed(fields.get("summary"), str, "summary", COMPACTION),
        first_kept_entry_id=_typed(first, str, "first_kept_entry_id", COMPACTION),
        tokens_before=_typed(tokens, int, "tokens_before", COMPACTION),
        details=fields.get("details"),
        usage=_usage(fields.get("usage"), COMPACTION),
    )


def _usage(value: object, expected: Expected) -> Usage | None:
    """A request's usage as a plugin passed it (token counts, optionally costs)."""
    if value is None:
        return None
    data = _mapping(
        value, expected, ("input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost")
    )
    counts = {
        key: _typed(data.get(key, 0), int, f"usage.{key}", expected)
        for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
    }
    usage: Usage = {
        "input": counts["input"],
        "output": counts["output"],
        "cacheRead": counts["cacheRead"],
        "cacheWrite": counts["cacheWrite"],
        "totalTokens": counts["totalTokens"],
    }
    cost = data.get("cost")
    if cost is not None:
        prices = _mapping(cost, expected, ("input", "output", "cacheRead", "cacheWrite", "total"))
        amounts = {
            key: _number(prices.get(key, 0), f"usage.cost.{key}", expected) for key in prices
        }
        usage["cost"] = {
            "input": amounts.get("input", 0.0),
            "output": amounts.get("output", 0.0),
            "cacheRead": amounts.get("cacheRead", 0.0),
            "cacheWrite": amounts.get("cacheWrite", 0.0),
            "total": amounts.get("total", 0.0),
        }
    return usage


def _number(value: object, field: str, expected: Expected) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise WrongResult(f"{field} must be a number; expected {expected}")
    return float(value)


TREE = "Cancel(), TreeNavigationOptions(...) or None"


def parse_tree(value: object) -> Cancel | TreeNavigationOptions | None:
    """``session_before_tree``."""
    if value is None:
        return None
    from knightcode._plugins.results import BranchSummary, Cancel, TreeNavigationOptions

    if isinstance(value, Cancel):
        return value
    if isinstance(value, TreeNavigationOptions):
        if value.summary is not None:
            _typed(value.summary, BranchSummary, "summary", TREE)
            _typed(value.summary.summary, str, "summary.summary", TREE)
        _optional(value.custom_instructions, str, "custom_instructions", TREE)
        _optional(value.replace_instructions, bool, "replace_instructions", TREE)
        _optional(value.label, str, "label", TREE)
        return value
    data = _mapping(
        value, TREE, ("cancel", "summary", "custom_instructions", "replace_instructions", "label")
    )
    if _is_cancel(data):
        return Cancel()
    summary: BranchSummary | None = None
    raw = data.get("summary")
    if isinstance(raw, BranchSummary):
        summary = raw
    elif raw is not None:
        fields = _mapping(raw, TREE, ("summary", "details", "usage"))
        summary = BranchSummary(
            _typed(fields.get("summary"), str, "summary.summary", TREE),
            fields.get("details"),
            _usage(fields.get("usage"), TREE),
        )
    return TreeNavigationOptions(
        summary=summary,
        custom_instructions=_optional(
            data.get("custom_instructions"), str, "custom_instructions", TREE
        ),
        replace_instructions=_optional(
            data.get("replace_instructions"), bool, "replace_instructions", TREE
        ),
        label=_optional(data.get("label"), str, "label", TREE),
    )


BLOCK = "Block(reason) or None"


def parse_block(value: object) -> Block | None:
    """``tool_call``."""
    if value is None:
        return None
    from knightcode._plugins.results import Block

    if isinstance(value, Block):
        _typed(value.reason, str, "reason", BLOCK)
        return value
    data = _mapping(value, BLOCK, ("block", "reason"))
    if not data.get("block"):
        return None
    reason = data.get("reason")
    return Block(_typed(reason, str, "reason", BLOCK)) if reason else Block()


PATCH = "ToolResultPatch(...) or None"


def parse_patch(value: object) -> ToolResultPatch | None:
    """``tool_result``."""
    if value is None:
        return None
    from knightcode._plugins.results import UNCHANGED, ToolResultPatch

    if isinstance(value, ToolResultPatch):
        content: object = value.content
        details: object = value.details
        is_error: object = value.is_error
    else:
        data = _mapping(value, PATCH, ("content", "details", "is_error"))
        content = data.get("content", UNCHANGED)
        details = data.get("details", UNCHANGED)
        is_error = data.get("is_error", UNCHANGED)
    if content is not UNCHANGED:
        _content_blocks(content, PATCH)
    if is_error is not UNCHANGED:
        _typed(is_error, bool, "is_error", PATCH)
    if isinstance(value, ToolResultPatch):
        return value
    return ToolResultPatch(content, details, is_error)  # type: ignore[arg-type]  # checked above


_BLOCK_FIELDS: dict[str, tuple[tuple[str, type], ...]] = {
    "text": (("text", str),),
    "image": (("data", str), ("mimeType", str)),
    "thinking": (("thinking", str),),
    "toolCall": (("id", str), ("name", str), ("arguments", dict)),
}
USER_BLOCKS = ("text", "image")
ASSISTANT_BLOCKS = ("text", "thinking", "toolCall")


def _block_problem(block: object, kinds: Sequence[str]) -> str | None:
    """What is wrong with one content block (None: nothing)."""
    if not isinstance(block, Mapping):
        return f"is {type(block).__name__}, not a block"
    kind = block.get("type")
    if kind not in kinds:
        return f"has type {kind!r}; expected one of {', '.join(kinds)}"
    for name, required in _BLOCK_FIELDS[str(kind)]:
        if not isinstance(block.get(name), required):
            return f"({kind}) needs {name!r} as {required.__name__}"
    return None


def _blocks(value: object, field: str, kinds: Sequence[str], expected: Expected) -> list[object]:
    """A list of content blocks of the given kinds, each with its fields of the right types."""
    if not isinstance(value, list):
        raise WrongResult(
            f"{field} must be a list of {' or '.join(kinds)} blocks, not "
            f"{type(value).__name__}; expected {expected}"
        )
    for index, block in enumerate(value):
        problem = _block_problem(block, kinds)
        if problem is not None:
            raise WrongResult(f"{field}[{index}] {problem}; expected {expected}")
    return value


def _content_blocks(value: object, expected: Expected) -> None:
    _blocks(value, "content", USER_BLOCKS, expected)


def _text_or_blocks(value: object, field: str, expected: Expected) -> None:
    if not isinstance(value, str):
        _blocks(value, field, USER_BLOCKS, expected)


_MESSAGE_FIELDS: dict[str, tuple[tuple[str, type | tuple[type, ...]], ...]] = {
    "toolResult": (("toolCallId", str), ("toolName", str), ("isError", bool)),
    "bashExecution": (("command", str), ("output", str), ("timestamp", (int, float))),
    "custom": (("customType", str), ("timestamp", (int, float))),
    "branchSummary": (("summary", str), ("timestamp", (int, float))),
    "compactionSummary": (("summary", str), ("timestamp", (int, float))),
}


def _message(value: object, where: str) -> None:
    """Check one message of a ``context`` result: what sending it needs, by role."""
    if not isinstance(value, Mapping) or not isinstance(value.get("role"), str):
        raise WrongResult(f"{where} must be a message (a dict with a 'role'); expected {MESSAGES}")
    role = value["role"]
    for name, required in _MESSAGE_FIELDS.get(role, ()):
        field = value.get(name)
        if not isinstance(field, required) or isinstance(field, bool) is not (required is bool):
            raise WrongResult(f"{where} ({role}) needs {name!r}; expected {MESSAGES}")
    content = value.get("content")
    if role in ("user", "custom"):
        _text_or_blocks(content, f"{where}.content", MESSAGES)
    elif role == "assistant":
        _blocks(content, f"{where}.content", ASSISTANT_BLOCKS, MESSAGES)
    elif role == "toolResult":
        _blocks(content, f"{where}.content", USER_BLOCKS, MESSAGES)


MESSAGES = "a list of messages or None"


def parse_messages(value: object) -> list[object] | None:
    """``context``: a replacement message list; each message has what sending it needs (its
    role, content blocks of the right shapes, the fields the role requires).
    """
    if value is None:
        return None
    if not isinstance(value, list):
        raise WrongResult(f"expected {MESSAGES}, not {type(value).__name__}")
    for index, message in enumerate(value):
        _message(message, f"messages[{index}]")
    return value


PAYLOAD = "a dict (the request body) or None"


def parse_payload(value: object) -> dict[str, object] | None:
    """``before_provider_request``: a replacement request body."""
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        raise WrongResult(f"expected {PAYLOAD}")
    return value


START = "AgentStartChanges(message=..., system_prompt=...) or None"


def parse_agent_start(value: object) -> AgentStartChanges | None:
    """``before_agent_start``."""
    if value is None:
        return None
    from knightcode._plugins.results import AgentStartChanges, PluginMessage

    if isinstance(value, AgentStartChanges):
        if value.message is not None:
            _plugin_message(value.message)
        _optional(value.system_prompt, str, "system_prompt", START)
        return value
    data = _mapping(value, START, ("message", "system_prompt"))
    raw = data.get("message")
    message: PluginMessage | None = None
    if isinstance(raw, PluginMessage):
        message = _plugin_message(raw)
    elif raw is not None:
        fields = _mapping(
            raw, START, ("custom_type", "customType", "content", "display", "details")
        )
        kind = fields.get("custom_type", fields.get("customType", "plugin"))
        content = fields.get("content", "")
        _text_or_blocks(content, "message.content", START)
        message = PluginMessage(
            _typed(kind, str, "message.custom_type", START),
            content,  # type: ignore[arg-type]
            _typed(fields.get("display", True), bool, "message.display", START),
            fields.get("details"),
        )
    system_prompt = _optional(data.get("system_prompt"), str, "system_prompt", START)
    return AgentStartChanges(message, system_prompt)


def _plugin_message(message: PluginMessage) -> PluginMessage:
    _typed(message.custom_type, str, "message.custom_type", START)
    _text_or_blocks(message.content, "message.content", START)
    _typed(message.display, bool, "message.display", START)
    return message


INPUT = "Transform(text), Handled() or None"


def parse_input(value: object) -> Transform | Handled | None:
    """``input``."""
    if value is None:
        return None
    from knightcode._plugins.results import Handled, Transform

    if isinstance(value, Handled):
        return value
    if isinstance(value, Transform):
        _typed(value.text, str, "text", INPUT)
        if value.images is not None:
            _blocks(value.images, "images", ("image",), INPUT)
        return value
    data = _mapping(value, INPUT, ("action", "text", "images"))
    action = data.get("action", "continue")
    if action == "continue":
        return None
    if action == "handled":
        return Handled()
    if action != "transform":
        raise WrongResult(f"action {action!r} is not one of continue, transform, handled")
    images = data.get("images")
    if images is not None:
        _blocks(images, "images", ("image",), INPUT)
    return Transform(_typed(data.get("text"), str, "text", INPUT), images)  # type: ignore[arg-type]


BASH = "BashAnswer(...), RunInBackend(backend) or None"


def parse_bash(value: object) -> BashAnswer | RunInBackend | None:
    """``user_bash``."""
    if value is None:
        return None
    from knightcode._plugins.results import BashAnswer, RunInBackend

    if isinstance(value, RunInBackend):
        parse_backend(value.backend)
        return value
    if isinstance(value, BashAnswer):
        _typed(value.output, str, "output", BASH)
        _optional(value.exit_code, int, "exit_code", BASH)
        _optional(value.full_output_path, str, "full_output_path", BASH)
        return value
    data = _mapping(value, BASH, ("operations", "result"))
    operations = data.get("operations")
    if operations is not None:
        backend = parse_backend(operations)
        assert backend is not None
        return RunInBackend(backend)
    raw = data.get("result")
    if raw is None:
        return None
    fields = _mapping(
        raw, BASH, ("output", "exit_code", "cancelled", "truncated", "full_output_path")
    )
    return BashAnswer(
        str(fields.get("output", "")),
        _optional(fields.get("exit_code"), int, "exit_code", BASH),
        bool(fields.get("cancelled")),
        bool(fields.get("truncated")),
        _optional(fields.get("full_output_path"), str, "full_output_path", BASH),
    )


VERDICT = "CompactionVerdict(...) or None"


def parse_verdict(value: object) -> CompactionVerdict | None:
    """``session_check_compaction``."""
    if value is None:
        return None
    from knightcode._plugins.results import CompactionVerdict

    if isinstance(value, CompactionVerdict):
        _typed(value.compacted, bool, "compacted", VERDICT)
        _optional(value.error_message, str, "error_message", VERDICT)
        return value
    data = _mapping(value, VERDICT, ("compacted", "retry", "result", "errorMessage", "aborted"))
    result = data.get("result")
    return CompactionVerdict(
        _typed(data.get("compacted", False), bool, "compacted", VERDICT),
        bool(data.get("retry")),
        result if isinstance(result, dict) else None,  # type: ignore[arg-type]
        _optional(data.get("errorMessage"), str, "errorMessage", VERDICT),
        bool(data.get("aborted")),
    )


RESOURCES = "Resources(...) or None"


def parse_resources(value: object) -> Resources | None:
    """``resources_discover``."""
    if value is None:
        return None
    from knightcode._plugins.results import Resources

    data: Mapping[str, object]
    if isinstance(value, Resources):
        data = {key: getattr(value, key) for key in ("skill_paths", "prompt_paths", "theme_paths")}
    else:
        data = _mapping(value, RESOURCES, ("skill_paths", "prompt_paths", "theme_paths"))
    lists: dict[str, tuple[str | Path, ...]] = {}
    for key in ("skill_paths", "prompt_paths", "theme_paths"):
        items = data.get(key) or []
        if not isinstance(items, (list, tuple)) or not all(
            isinstance(i, (str, Path)) for i in items
        ):
            raise WrongResult(f"{key} must be a list of paths; expected {RESOURCES}")
        lists[key] = tuple(items)
    return Resources(**lists)


def parse_backend(value: object) -> ExecutionBackend | None:
    """``execution_backend``: an object with the backend's methods."""
    from knightcode._tools.backend import ExecutionBackend

    if value is None or isinstance(value, ExecutionBackend):
        return value
    raise WrongResult("expected an ExecutionBackend (read_file, write_file, exec …) or None")


def parse_nothing(value: object) -> None:
    """Hooks whose result is ignored: anything but None is reported (the plugin expected an
    effect it does not get).
    """
    if value is not None:
        raise WrongResult("expected None: this hook's result is ignored")
