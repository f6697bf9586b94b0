"""The RPC commands as pydantic models, one per command, and the parsing of one input line.

Validation is strict — ``"enabled": "yes"`` is a mistake, not a truthy string — and unknown
fields are ignored so that newer clients can talk to older servers. A failure names the field
(``Invalid 'set_model' command: field 'modelId': Field required``), so a client author can fix
the request without reading this file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from knightcode._modes.rpc.framing import OversizedLine
from knightcode._types.messages import ImageContent as ImageBlock

__all__ = ["COMMANDS", "CommandError", "RpcCommand", "UiAnswer", "parse_line"]

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
QueueMode = Literal["all", "one-at-a-time"]
MAX_ECHO = 256
"""How much of a client-supplied name an error response repeats (a hostile 5 MB ``type``
must not come back twice)."""


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class ImageContent(_Strict):
    """An image attached to a message: ``{"type": "image", "data": base64, "mimeType": ...}``."""

    type: Literal["image"]
    data: str
    mimeType: str


class RpcCommand(_Strict):
    """Fields every command has: ``type`` and the optional correlation ``id``."""

    type: str
    id: str | None = None


class _Message(RpcCommand):
    message: str
    images: list[ImageContent] | None = None

    def image_dicts(self) -> list[ImageBlock] | None:
        """The images as the agent's content blocks."""
        if not self.images:
            return None
        return [
            {"type": "image", "data": image.data, "mimeType": image.mimeType}
            for image in self.images
        ]


class Prompt(_Message):
    streamingBehavior: Literal["steer", "followUp"] | None = None


class Steer(_Message):
    pass


class FollowUp(_Message):
    pass


class NewSession(RpcCommand):
    parentSession: str | None = None


class SetModel(RpcCommand):
    provider: str
    modelId: str


class SetThinkingLevel(RpcCommand):
    level: ThinkingLevel


class SetQueueMode(RpcCommand):
    mode: QueueMode


class Compact(RpcCommand):
    customInstructions: str | None = None


class SetEnabled(RpcCommand):
    enabled: bool


class Bash(RpcCommand):
    command: str
    excludeFromContext: bool = False


class ExportHtml(RpcCommand):
    outputPath: str | None = None


class SwitchSession(RpcCommand):
    sessionPath: str


class Fork(RpcCommand):
    entryId: str


class SetSessionName(RpcCommand):
    name: str


class UiAnswer(_Strict):
    """``extension_ui_response``: the client's answer to an ``extension_ui_request``."""

    type: Literal["extension_ui_response"]
    id: str
    value: str | None = None
    confirmed: bool | None = None
    cancelled: bool | None = None


COMMANDS: dict[str, type[RpcCommand]] = {
    "prompt": Prompt,
    "steer": Steer,
    "follow_up": FollowUp,
    "abort": RpcCommand,
    "new_session": NewSession,
    "get_state": RpcCommand,
    "get_messages": RpcCommand,
    "set_model": SetModel,
    "cycle_model": RpcCommand,
    "get_available_models": RpcCommand,
    "set_thinking_level": SetThinkingLevel,
    "cycle_thinking_level": RpcCommand,
    "set_steering_mode": SetQueueMode,
    "set_follow_up_mode": SetQueueMode,
    "compact": Compact,
    "set_auto_compaction": SetEnabled,
    "set_auto_retry": SetEnabled,
    "abort_retry": RpcCommand,
    "bash": Bash,
    "abort_bash": RpcCommand,
    "get_session_stats": RpcCommand,
    "export_html": ExportHtml,
    "switch_session": SwitchSession,
    "fork": Fork,
    "get_fork_messages": RpcCommand,
    "clone": RpcCommand,
    "get_last_assistant_text": RpcCommand,
    "set_session_name": SetSessionName,
    "get_commands": RpcCommand,
}
"""Every command type and the model that validates it."""


@dataclass(frozen=True)
class CommandError:
    """A line that is not a valid command: answer it with this error response."""

    command: str
    error: str
    id: str | None = None


def _clip(text: str) -> str:
    return text if len(text) <= MAX_ECHO else text[:MAX_ECHO] + "…"


def _describe(kind: str, error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    location = "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"]
    ).lstrip(".")
    where = f"field '{location}'" if location else "command"
    return f"Invalid '{kind}' command: {where}: {first['msg']}"


def parse_line(line: bytes) -> RpcCommand | UiAnswer | CommandError:
    """Decode and validate one input line."""
    if isinstance(line, OversizedLine):
        return CommandError(
            "parse", f"Failed to parse command: line of {line.size} bytes exceeds the size limit"
        )
    try:
        text = line.decode("utf-8")
        payload = json.loads(text)
    except UnicodeDecodeError as error:
        return CommandError(
            "parse", f"Failed to parse command: invalid UTF-8 at byte {error.start}"
        )
    except ValueError as error:
        return CommandError("parse", f"Failed to parse command: {error}")
    except RecursionError:
        # json's C scanner raises this for very deep nesting; it is a bad line, not a crash.
        return CommandError("parse", "Failed to parse command: JSON nested too deeply")
    if not isinstance(payload, dict):
        return CommandError(
            "parse",
            f"Failed to parse command: expected a JSON object, got {type(payload).__name__}",
        )
    kind = payload.get("type")
    raw_id = payload.get("id")
    request_id = _clip(raw_id) if isinstance(raw_id, str) else None
    if not isinstance(kind, str):
        return CommandError(
            "parse",
            "Failed to parse command: field 'type' must be a string naming the command",
            request_id,
        )
    model: type[RpcCommand | UiAnswer] | None
    model = UiAnswer if kind == "extension_ui_response" else COMMANDS.get(kind)
    if model is None:
        return CommandError(_clip(kind), f"Unknown command: {_clip(kind)}", request_id)
    try:
        return model.model_validate(payload)
    except ValidationError as error:
        return CommandError(kind, _describe(kind, error), request_id)
    except RecursionError:
        return CommandError(kind, f"Invalid '{kind}' command: nested too deeply", request_id)
