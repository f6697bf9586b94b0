"""Settings ``images.blockImages``: no image reaches the model.

Applied to every request's messages, after the session's messages are converted for the
provider, so it holds for images from any source (an ``@file`` attachment, the ``read`` tool, a
plugin's custom message, a resumed session) and takes effect on the next request when the
setting changes. Each image becomes the reference's placeholder text, so the model knows an
image was there; consecutive placeholders are merged into one.
"""

from __future__ import annotations

from knightcode._types.messages import ImageContent, LlmMessage, TextContent

BLOCKED_IMAGE_TEXT = "Image reading is disabled."


def without_images(messages: list[LlmMessage]) -> list[LlmMessage]:
    """``messages`` with every image of a user or tool-result message replaced by
    :data:`BLOCKED_IMAGE_TEXT` (messages without images are passed on as they are).
    """
    result: list[LlmMessage] = []
    for message in messages:
        if message["role"] == "user" and not isinstance(message["content"], str):
            if _has_image(message["content"]):
                user = message.copy()
                user["content"] = _placeholders(message["content"])
                message = user
        elif message["role"] == "toolResult" and _has_image(message["content"]):
            tool_result = message.copy()
            tool_result["content"] = _placeholders(message["content"])
            message = tool_result
        result.append(message)
    return result


def _has_image(blocks: list[TextContent | ImageContent]) -> bool:
    return any(block["type"] == "image" for block in blocks)


def _placeholders(blocks: list[TextContent | ImageContent]) -> list[TextContent | ImageContent]:
    out: list[TextContent | ImageContent] = []
    for block in blocks:
        if block["type"] == "image":
            if out and out[-1]["type"] == "text" and out[-1]["text"] == BLOCKED_IMAGE_TEXT:
                continue
            out.append({"type": "text", "text": BLOCKED_IMAGE_TEXT})
        else:
            out.append(block)
    return out
