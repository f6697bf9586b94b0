"""The ``edit`` tool: exact-text replacements, several per call, with a diff in the details."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import NotRequired, TypedDict

from knightcode._tools.context import ToolContext
from knightcode._tools.definition import BuiltinToolDefinition
from knightcode._tools.edit_diff import (
    Edit,
    apply_edits,
    detect_line_ending,
    generate_diff,
    normalize_to_lf,
    restore_line_endings,
    strip_bom,
)
from knightcode._tools.errors import ToolError
from knightcode._tools.file_locks import file_mutation_lock
from knightcode._tools.path_utils import resolve_to_cwd
from knightcode._tools.results import (
    OnUpdate,
    ToolResult,
    encode_utf8,
    errno_code,
    os_error_text,
    raise_if_aborted,
    text_result,
)
from knightcode._tools.workspace import guard_outside_workspace

__all__ = ["create_edit_tool", "prepare_edit_arguments"]

EDIT_PARAMETERS: dict[str, object] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "File to edit, relative to the working directory or absolute",
        },
        "edits": {
            "type": "array",
            "description": (
                "The replacements. Each oldText is looked up in the original file, not in the "
                "result of the other edits, so edits must not overlap or nest; merge changes to "
                "the same or neighbouring lines into one edit."
            ),
            "items": {
                "type": "object",
                "properties": {
                    "oldText": {
                        "type": "string",
                        "description": "Text to replace; it must occur exactly once in the file",
                    },
                    "newText": {"type": "string", "description": "Text to put in its place"},
                },
                "required": ["oldText", "newText"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["path", "edits"],
    "additionalProperties": False,
}


class EditDetails(TypedDict):
    """``details`` of an edit result: the unified diff and where the first change is."""

    diff: str
    firstChangedLine: NotRequired[int]


_INVALID = "Edit tool input is invalid. edits must contain at least one replacement."


def prepare_edit_arguments(args: dict[str, object]) -> dict[str, object]:
    """Repair the argument shapes models send besides the schema's (before validation).

    ``edits`` as a JSON string is parsed; the legacy single-edit form ``{path, oldText, newText}``
    becomes one more entry of ``edits``. Anything else is returned unchanged.
    """
    if not isinstance(args, dict):  # a model's arguments may be anything: validation says so
        return args
    prepared = dict(args)
    edits_text = prepared.get("edits")
    if isinstance(edits_text, str):
        try:
            parsed = json.loads(edits_text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            prepared["edits"] = parsed
    old_text, new_text = prepared.get("oldText"), prepared.get("newText")
    if isinstance(old_text, str) and isinstance(new_text, str):
        existing = prepared.get("edits")
        edits = list(existing) if isinstance(existing, list) else []
        edits.append({"oldText": old_text, "newText": new_text})
        prepared.pop("oldText")
        prepared.pop("newText")
        prepared["edits"] = edits
    return prepared


def _edits_of(args: Mapping[str, object]) -> list[Edit]:
    raw = args.get("edits")
    if not isinstance(raw, list) or not raw:
        raise ToolError(_INVALID)
    edits = []
    for i, item in enumerate(raw):
        old_text, new_text = (
            (item.get("oldText"), item.get("newText")) if isinstance(item, dict) else (None, None)
        )
        if not isinstance(old_text, str) or not isinstance(new_text, str):
            raise ToolError(
                f"Edit tool input is invalid. edits[{i}] needs string oldText and newText."
            )
        edits.append(Edit(old_text, new_text))
    return edits


async def execute_edit(
    tool_call_id: str, args: dict[str, object], ctx: ToolContext, on_update: OnUpdate = None
) -> ToolResult:
    """Run the edit tool (see :func:`create_edit_tool`)."""
    args = prepare_edit_arguments(args)
    path = str(args.get("path", ""))
    edits = _edits_of(args)
    backend = ctx.backend
    absolute = resolve_to_cwd(path, ctx.cwd, backend.home())
    await guard_outside_workspace(ctx, path, absolute, "edit")
    async with file_mutation_lock(absolute):
        raise_if_aborted(ctx)
        if await backend.stat(absolute) is None:
            raise ToolError(f"Could not edit file: {path}. Error code: ENOENT.")
        try:
            data = await backend.read_file(absolute)
        except OSError as error:
            raise ToolError(os_error_text(error, "open", absolute)) from error
        raise_if_aborted(ctx)
        bom, content = strip_bom(data.decode("utf-8", "replace"))
        ending = detect_line_ending(content)
        base, new = apply_edits(normalize_to_lf(content), edits, path)
        raise_if_aborted(ctx)
        try:
            await backend.write_file(absolute, encode_utf8(bom + restore_line_endings(new, ending)))
        except OSError as error:
            raise ToolError(
                f"Could not edit file: {path}. Error code: {errno_code(error)}."
            ) from error
        raise_if_aborted(ctx)
    diff, first_changed = generate_diff(base, new)
    details: EditDetails = {"diff": diff}
    if first_changed is not None:
        details["firstChangedLine"] = first_changed
    return text_result(f"Successfully replaced {len(edits)} block(s) in {path}.", details)


def create_edit_tool() -> BuiltinToolDefinition:
    """The ``edit`` tool definition (with :func:`prepare_edit_arguments` attached)."""
    return BuiltinToolDefinition(
        name="edit",
        label="edit",
        description=(
            "Edit one file by exact text replacement. Each edits[].oldText must match one unique "
            "region of the original file, and no two edits may overlap; combine changes to the "
            "same block or nearby lines into a single edit. Keep oldText short: just enough "
            "context to be unique, not long unchanged stretches between distant changes."
        ),
        parameters=EDIT_PARAMETERS,
        execute=execute_edit,
        prompt_snippet="Change files by exact text replacement, several separate places per call",
        prompt_guidelines=(
            "Use edit for targeted changes; edits[].oldText must match the file exactly.",
            (
                "To change several places in one file, send one edit call with several edits[] "
                "entries rather than several calls."
            ),
            (
                "Every edits[].oldText is matched against the original file, not the file after "
                "the other edits; never send overlapping or nested edits, merge neighbours."
            ),
            "Make each edits[].oldText as short as it can be while staying unique in the file.",
        ),
        prepare_arguments=prepare_edit_arguments,
    )
