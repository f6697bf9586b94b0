"""A user message as a wire format's list of blocks, shared by the clients that build them alike.

Every API drops blank text and, for text-only models, images; only the block shapes differ, so a
client passes its two block makers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from knightcode._types.messages import ImageContent, UserMessage

__all__ = ["user_blocks"]

B = TypeVar("B")


def user_blocks(
    message: UserMessage,
    images: bool,
    text: Callable[[str], B],
    image: Callable[[ImageContent], B],
) -> list[B]:
    """The blocks of ``message`` (empty when nothing is left to send).

    :param images: whether the model accepts images (else they are left out)
    """
    content = message["content"]
    if isinstance(content, str):
        return [text(content)] if content.strip() else []
    blocks: list[B] = []
    for block in content:
        if block["type"] == "text":
            if block["text"].strip():
                blocks.append(text(block["text"]))
        elif block["type"] == "image" and images:
            blocks.append(image(block))
    return blocks
