"""``@file`` command-line arguments: files attached to the first message.

Text files are inlined as ``<file name="…">…</file>`` blocks ahead of the message text; images
(recognised by their magic bytes) become image blocks, named by an empty ``<file name="…">``
block — which carries the original size when settings ``images.autoResize`` shrank the image, as
in the reference.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._errors import UsageError
from knightcode._tools.image_info import detect_image_mime

if TYPE_CHECKING:
    from knightcode._types.messages import ImageContent


@dataclass
class Prompts:
    """The messages of a command line, with the ``@file`` attachments of the first one."""

    messages: list[str] = field(default_factory=list)
    images: list[ImageContent] = field(default_factory=list)


def split_arguments(arguments: list[str], cwd: Path, *, auto_resize: bool = True) -> Prompts:
    """Separate ``@file`` arguments from messages and read the files.

    :param auto_resize: settings ``images.autoResize``: shrink images to the providers' limits

    :raises UsageError: a named file does not exist or cannot be read
    """
    texts: list[str] = []
    prompts = Prompts()
    for argument in arguments:
        if not argument.startswith("@") or len(argument) == 1:
            prompts.messages.append(argument)
            continue
        path = (cwd / Path(argument[1:]).expanduser()).resolve()
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise UsageError(f"{argument}: no such file") from None
        except OSError as error:
            raise UsageError(f"{argument}: cannot read it ({error.strerror})") from None
        mime = detect_image_mime(data[:16])
        if mime is not None:
            image, note = _image(data, mime, auto_resize)
            if image is None:
                texts.append(f'<file name="{path}">{_OMITTED}</file>\n')
            else:
                prompts.images.append(image)
                texts.append(f'<file name="{path}">{note or ""}</file>\n')
        else:
            texts.append(f'<file name="{path}">\n{data.decode("utf-8", "replace")}\n</file>\n')
    if texts:
        attached = "".join(texts)
        if prompts.messages:
            prompts.messages[0] = attached + prompts.messages[0]
        else:
            prompts.messages.append(attached)
    return prompts


_OMITTED = "[Image omitted: could not be resized below the inline image size limit.]"


def _image(data: bytes, mime: str, auto_resize: bool) -> tuple[ImageContent | None, str | None]:
    """The image block for ``data`` and the note about its original size; no block when it
    cannot be shrunk enough to send.
    """
    note = None
    if auto_resize:
        from knightcode._tools.image_resize import dimension_note, resize_image

        resized = resize_image(data, mime)
        if resized is None:
            return None, None
        data, mime, note = resized.data, resized.mime, dimension_note(resized)
    return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime}, note
