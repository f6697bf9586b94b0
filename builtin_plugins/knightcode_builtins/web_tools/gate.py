"""The classifier gate's two checks: tool calls before they run, tool results before the context.

* :func:`check_call` (the ``tool_call`` hook): a call whose tool and arguments match one of
  ``gate.patterns`` (else :data:`~.gate_config.DEFAULT_PATTERNS`) is judged by the classifier on
  its arguments; a block becomes ``Block(reason)``, which the model sees as the call's error.
* :func:`check_result` (the ``tool_result`` hook): the text of a result of ``gate.content.tools``
  (``web_fetch``, ``web_search``) is judged before it enters the context — at most
  ``gate.maxChars`` of it, in requests of ``gate.chunkChars``; text past ``maxChars`` is
  withheld. A block turns the result into an error carrying the reason, and the page's
  scratchpad file (``details["scratchpad"]``) is emptied and removed, so it cannot be read later.

The judgement itself — classify, decide, ask, record — is :mod:`.gate_verdict`. The plugin
imports this module only once the gate is enabled (see :mod:`.gate_state`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from .gate_config import CONTENT_QUESTION, GateConfig, question_for
from .gate_verdict import Question, Subject, judge, report
from .redact import excerpt

if TYPE_CHECKING:
    from knightcode import Block, HookContext, ToolResultContent, ToolResultPatch

__all__ = ["block_result", "blocked_call", "check_call", "check_result"]

_SUBJECT_KEYS = ("command", "url", "query", "path")


def blocked_call(reason: str) -> Block:
    """The ``Block`` the model sees for a call the gate stopped."""
    from knightcode import Block

    return Block(f"Blocked by the web-tools classifier gate: {reason}.")


async def check_call(
    gate: GateConfig,
    tool_call_id: str,
    tool_name: str,
    input: Mapping[str, object],
    ctx: HookContext,
) -> Block | None:
    """Judge a call matching the gate's patterns; None lets it run."""
    arguments = json.dumps(input, ensure_ascii=False, sort_keys=True)
    questions = _matching(gate, tool_name, arguments)
    if not questions:
        return None
    subject = Subject(
        "call",
        tool_name,
        tool_call_id,
        [{"tool": tool_name, "arguments": dict(input), "project": _agent_cwd(ctx)}],
        excerpt(_subject_text(input, arguments)),
    )
    refused = None
    if len(arguments) > gate.max_chars:  # fail closed rather than judge a part
        refused = (
            f"the arguments ({len(arguments):,} characters) are longer than gate.maxChars "
            f"({gate.max_chars:,}), so they cannot be checked"
        )
    judged = await judge(gate, subject, questions, ctx, refused=refused)
    report(ctx, gate, subject, questions, judged)
    return None if judged.allowed else blocked_call(judged.reason)


def _matching(gate: GateConfig, tool_name: str, arguments: str) -> list[Question]:
    questions: list[Question] = []
    for index, pattern in enumerate(gate.call_patterns):
        if pattern.tool != tool_name:
            continue
        if pattern.match is not None and re.search(pattern.match, arguments) is None:
            continue
        qid = pattern.id or f"{pattern.tool}-{index}"
        questions.append(Question(qid, question_for(pattern), pattern.match))
    return questions


def _subject_text(input: Mapping[str, object], arguments: str) -> str:
    """The argument a person recognises the call by (the command, the URL …), else all."""
    for key in _SUBJECT_KEYS:
        value = input.get(key)
        if isinstance(value, str):
            return value
    return arguments


async def check_result(
    gate: GateConfig,
    tool_call_id: str,
    tool_name: str,
    input: Mapping[str, object],
    content: Sequence[ToolResultContent],
    details: object,
    ctx: HookContext,
) -> ToolResultPatch | None:
    """Judge the text of a result of a content tool; None lets it through unchanged."""
    from knightcode import ToolResultPatch

    text = "\n".join(block["text"] for block in content if block["type"] == "text")
    if not text.strip():
        return None  # images only, or nothing: there is no text to judge
    checked, withheld = text[: gate.max_chars], text[gate.max_chars :]
    size = gate.chunk_chars
    parts = [checked[start : start + size] for start in range(0, len(checked), size)]
    subject = Subject(
        "content",
        tool_name,
        tool_call_id,
        parts,
        excerpt(_subject_text(input, json.dumps(input, ensure_ascii=False))),
    )
    questions = [Question("injection", gate.content.question or CONTENT_QUESTION)]
    judged = await judge(gate, subject, questions, ctx)
    sizes = {"chars": len(text), "withheldChars": len(withheld)}
    if not judged.allowed:
        removed = await _remove_scratchpad(ctx, details)
        report(ctx, gate, subject, questions, judged, {**sizes, "scratchpad": removed})
        return _blocked_result(tool_name, judged.reason, details, removed)
    report(ctx, gate, subject, questions, judged, sizes)
    if not withheld:
        return None
    note = (
        f"\n\n[The web-tools gate checked the first {len(checked):,} characters; the other "
        f"{len(withheld):,} were withheld (gate.maxChars).]"
    )
    images = [block for block in content if block["type"] != "text"]
    return ToolResultPatch(content=[{"type": "text", "text": checked + note}, *images])


async def block_result(
    tool_name: str, reason: str, details: object, ctx: HookContext
) -> ToolResultPatch:
    """Block a result without judging it (tools.json is unreadable): its scratchpad file goes
    too.
    """
    removed = await _remove_scratchpad(ctx, details)
    return _blocked_result(tool_name, reason, details, removed)


def _blocked_result(
    tool_name: str, reason: str, details: object, removed: str | None
) -> ToolResultPatch:
    """The error a blocked result becomes: the reason, and the old details without the
    scratchpad path (plus what happened to the file).
    """
    from knightcode import ToolResultPatch

    text = f"The {tool_name} result was withheld by the web-tools classifier gate: {reason}."
    kept: dict[str, object] = {}
    if isinstance(details, Mapping):
        kept = {str(key): value for key, value in details.items() if key != "scratchpad"}
    if removed is not None:
        text += f" {removed}"
        kept["gateScratchpad"] = removed
    return ToolResultPatch(content=[{"type": "text", "text": text}], details=kept, is_error=True)


# --- the scratchpad file of a blocked page ---------------------------------------------------


async def _remove_scratchpad(ctx: HookContext, details: object) -> str | None:
    """Empty and remove the result's scratchpad file through the backend (so a sandbox's file
    goes too); returns what happened, None when there is no file. A path outside the session's
    scratchpad directory is left alone: details are data, and a plugin could have put any path
    there.
    """
    path = details.get("scratchpad") if isinstance(details, Mapping) else None
    if not isinstance(path, str) or not path:
        return None
    backend = ctx.backend
    if backend is None:
        return f"Its scratchpad file {path} was left: no execution backend."
    if not _in_scratchpad(ctx, path):
        return f"Its scratchpad file {path} was left: it is not in the scratchpad directory."
    try:
        await backend.write_file(path, b"")  # unreadable at once, even if rm fails below
        await backend.exec(["rm", "-f", "--", path], timeout=10)
    except OSError as exc:
        return f"Its scratchpad file {path} was emptied but not removed: {exc.strerror or exc}."
    if await backend.exists(path):
        return f"Its scratchpad file {path} was emptied but not removed."
    return f"Its scratchpad file {path} was removed."


def _in_scratchpad(ctx: HookContext, path: str) -> bool:
    """Whether ``path`` is a file directly in a scratchpad directory of this session."""
    from knightcode import ToolContext

    from .config import load_tools_config
    from .scratchpad import default_scratchpad_dir

    backend = ctx.backend
    assert backend is not None
    tool_ctx = ToolContext(cwd=Path(_agent_cwd(ctx)), backend=backend, context=ctx)
    directories = {default_scratchpad_dir(tool_ctx)}
    try:
        configured = load_tools_config(ctx.agent_dir).scratchpad.directory
    except Exception:  # a broken tools.json: only the default directory counts
        configured = None
    if configured:
        directories.add(configured)
    parent = str(PurePosixPath(path).parent)
    return ".." not in PurePosixPath(path).parts and any(
        parent == str(PurePosixPath(directory)) for directory in directories
    )


def _agent_cwd(ctx: HookContext) -> str:
    """The working directory as the tools see it (``/workspace`` under a sandbox)."""
    from .scratchpad import _Mapped

    if isinstance(ctx.backend, _Mapped):
        return ctx.backend.agent_path(str(ctx.cwd))
    return str(ctx.cwd)
