"""Settings ``images.autoResize`` in the ``read`` tool: real PNG and JPEG files, shrunk to the
reference's limits (2000x2000, 4.5 MB of base64) with its note giving the original size.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import os
from pathlib import Path

from PIL import Image

from knightcode._tools import ToolContext
from knightcode._tools.image_resize import MAX_BASE64_BYTES, resize_image

from .helpers import run


def _picture(width: int, height: int, fmt: str, *, noise: bool = False) -> bytes:
    """A real image file; ``noise`` makes it incompressible (a photo-like worst case)."""
    if noise:
        image = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))
    else:
        image = Image.new("RGB", (width, height), (200, 40, 40))
    out = io.BytesIO()
    image.save(out, format=fmt)
    return out.getvalue()


def _decoded(block: dict[str, object]) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(str(block["data"]))))


async def test_a_large_png_is_shrunk_with_the_references_note(
    ctx: ToolContext, project_dir: Path
) -> None:
    (project_dir / "wide.png").write_bytes(_picture(4000, 1000, "PNG"))
    result = await run("read", {"path": "wide.png"}, ctx)
    note, image = result["content"]
    mime = image["mimeType"]
    assert note["text"] == (
        f"Read image file [{mime}]\n[Image: original 4000x1000, displayed at 2000x500. "
        "Multiply coordinates by 2.00 to map to original image.]"
    )
    assert _decoded(image).size == (2000, 500)


async def test_a_small_jpeg_is_sent_unchanged(ctx: ToolContext, project_dir: Path) -> None:
    data = _picture(300, 200, "JPEG")
    (project_dir / "small.jpg").write_bytes(data)
    result = await run("read", {"path": "small.jpg"}, ctx)
    note, image = result["content"]
    assert note["text"] == "Read image file [image/jpeg]"
    assert base64.b64decode(image["data"]) == data


async def test_a_photo_over_the_byte_limit_is_re_encoded_below_it(
    ctx: ToolContext, project_dir: Path
) -> None:
    # 1800x1200 of noise is a ~6.5 MB PNG: within the dimensions, over the byte cap.
    data = _picture(1800, 1200, "PNG", noise=True)
    assert len(data) > MAX_BASE64_BYTES
    (project_dir / "noise.png").write_bytes(data)
    result = await run("read", {"path": "noise.png"}, ctx)
    note, image = result["content"]
    assert image["mimeType"] == "image/jpeg"  # noise: JPEG is far smaller than PNG
    assert len(image["data"]) <= MAX_BASE64_BYTES
    assert note["text"].startswith("Read image file [image/jpeg]")
    assert _decoded(image).format == "JPEG"


async def test_auto_resize_off_sends_the_original(ctx: ToolContext, project_dir: Path) -> None:
    data = _picture(2400, 300, "PNG")
    (project_dir / "wide.png").write_bytes(data)
    ctx = dataclasses.replace(ctx, auto_resize_images=False)
    result = await run("read", {"path": "wide.png"}, ctx)
    note, image = result["content"]
    assert note["text"] == (
        "Read image file [image/png]\n"
        "[Image: original 2400x300, larger than 2000x2000; sent unresized.]"
    )
    assert base64.b64decode(image["data"]) == data


def test_exif_rotation_is_applied_and_transparency_survives_jpeg() -> None:
    image = Image.new("RGBA", (3000, 1000), (0, 0, 255, 0))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise when shown
    out = io.BytesIO()
    image.convert("RGB").save(out, format="JPEG", exif=exif)
    resized = resize_image(out.getvalue(), "image/jpeg")
    assert resized is not None and resized.resized
    assert (resized.original_width, resized.original_height) == (1000, 3000)
    assert (resized.width, resized.height) == (667, 2000)
    # A transparent PNG can be re-encoded as JPEG (flattened) without failing.
    png = io.BytesIO()
    image.save(png, format="PNG")
    assert resize_image(png.getvalue(), "image/png") is not None


def test_an_image_that_cannot_fit_is_none() -> None:
    data = _picture(400, 400, "PNG", noise=True)
    assert resize_image(data, "image/png", max_base64_bytes=1000) is None
