"""Shrinking images to what the providers accept (settings ``images.autoResize``).

Anthropic refuses an image over 5 MB and downsizes anything past about 2000 pixels a side, so the
reference fits every image the model sees — read by the ``read`` tool or attached by the user —
into 2000x2000 and 4.5 MB of base64, re-encoding as PNG or JPEG (whichever is smaller), lowering
the JPEG quality and then the size until it fits. The model is told the original size, so the
coordinates it gives about a shrunk screenshot can be mapped back.

Pillow is imported only when an image actually needs work: most sessions never read one.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL.Image import Image as PilImage

    from knightcode._types.messages import ImageContent

__all__ = [
    "MAX_BASE64_BYTES",
    "MAX_DIMENSION",
    "ResizedImage",
    "dimension_note",
    "resize_image",
    "resize_image_content",
]

MAX_DIMENSION = 2000
# Base64 payload ceiling, with headroom below Anthropic's 5 MB per-image limit.
MAX_BASE64_BYTES = int(4.5 * 1024 * 1024)
_FIRST_JPEG_QUALITY = 80
_JPEG_QUALITIES = (85, 70, 55, 40)
_SCALES = (0.75, 0.5, 0.35, 0.25)  # after the full size failed at every quality
_ENCODABLE = frozenset({"RGB", "RGBA", "L", "LA", "P"})
_MIN_SIDE = 100  # shrinking stops before a side would drop below this


@dataclass(frozen=True)
class ResizedImage:
    """An image ready to send; ``resized`` says whether it differs from the input."""

    data: bytes
    mime: str
    original_width: int
    original_height: int
    width: int
    height: int
    resized: bool


def _base64_size(size: int) -> int:
    return 4 * ((size + 2) // 3)


def _open(data: bytes) -> PilImage | None:
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        opened = Image.open(io.BytesIO(data))
        opened.load()
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        return None
    # A phone photo stored sideways with an EXIF rotation must reach the model upright.
    image: Image.Image = ImageOps.exif_transpose(opened)
    if image.mode not in _ENCODABLE:  # CMYK, 16-bit, float: neither PNG nor JPEG takes all
        alpha = "A" in image.mode or "transparency" in image.info
        image = image.convert("RGBA" if alpha else "RGB")
    return image


def _encode(image: PilImage, width: int, height: int, quality: int) -> tuple[bytes, str]:
    """``image`` at ``width``x``height`` as PNG and as JPEG: the smaller of the two."""
    from PIL import Image

    scaled = image.resize((width, height), Image.Resampling.LANCZOS)
    png = io.BytesIO()
    scaled.save(png, format="PNG", optimize=False)
    jpeg = io.BytesIO()
    # JPEG has no alpha or palette: flatten onto white, as a viewer would show it.
    if scaled.mode in ("RGBA", "LA", "P"):
        rgba = scaled.convert("RGBA")
        flat = Image.new("RGB", rgba.size, (255, 255, 255))
        flat.paste(rgba, mask=rgba.getchannel("A"))
        scaled = flat
    scaled.save(jpeg, format="JPEG", quality=quality)
    if png.tell() <= jpeg.tell():
        return png.getvalue(), "image/png"
    return jpeg.getvalue(), "image/jpeg"


def _fit(width: int, height: int, limit: int) -> tuple[int, int]:
    if width > limit:
        height, width = round(height * limit / width), limit
    if height > limit:
        width, height = round(width * limit / height), limit
    return max(width, 1), max(height, 1)


def resize_image(
    data: bytes,
    mime: str,
    *,
    max_dimension: int = MAX_DIMENSION,
    max_base64_bytes: int = MAX_BASE64_BYTES,
) -> ResizedImage | None:
    """``data`` fitted into ``max_dimension`` a side and ``max_base64_bytes`` of base64.

    An image already within both limits comes back unchanged (``resized`` false), as does one
    Pillow cannot decode (the provider judges it). None: no size down to 100 pixels a side fits
    the byte limit.
    """
    image = _open(data)
    if image is None:
        return ResizedImage(data, mime, 0, 0, 0, 0, resized=False)
    width, height = image.size
    if (
        width <= max_dimension
        and height <= max_dimension
        and _base64_size(len(data)) <= max_base64_bytes
    ):
        return ResizedImage(data, mime, width, height, width, height, resized=False)
    target_w, target_h = _fit(width, height, max_dimension)
    attempts = [(1.0, _FIRST_JPEG_QUALITY), *((1.0, q) for q in _JPEG_QUALITIES)]
    attempts += [(scale, q) for scale in _SCALES for q in _JPEG_QUALITIES]
    for scale, quality in attempts:
        w, h = round(target_w * scale), round(target_h * scale)
        if scale < 1.0 and (w < _MIN_SIDE or h < _MIN_SIDE):
            break
        encoded, out_mime = _encode(image, w, h, quality)
        if _base64_size(len(encoded)) <= max_base64_bytes:
            return ResizedImage(encoded, out_mime, width, height, w, h, resized=True)
    return None


def dimension_note(image: ResizedImage) -> str | None:
    """The reference's note for the model about a shrunk image (None when it was not)."""
    if not image.resized:
        return None
    scale = image.original_width / image.width
    return (
        f"[Image: original {image.original_width}x{image.original_height}, displayed at "
        f"{image.width}x{image.height}. Multiply coordinates by {scale:.2f} to map to original "
        "image.]"
    )


def resize_image_content(image: ImageContent) -> ImageContent:
    """A user's image block (RPC ``images``, a pasted screenshot) fitted into the limits; one
    that cannot be made to fit, or is not valid base64, is passed on for the provider to judge.
    """
    try:
        data = base64.b64decode(image["data"], validate=True)
    except ValueError:
        return image
    resized = resize_image(data, image["mimeType"])
    if resized is None or not resized.resized:
        return image
    return {
        "type": "image",
        "data": base64.b64encode(resized.data).decode("ascii"),
        "mimeType": resized.mime,
    }
