"""Settings ``images.autoResize`` for images the user attaches (``@file``), checked on the request
the scripted server received from the real executable.
"""

from __future__ import annotations

import base64
import io
import json

from PIL import Image

from knightcode.testing import text_reply

from .conftest import Scripted, write_models_json


def _wide_png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (3000, 1500), (10, 120, 200)).save(out, format="PNG")
    return out.getvalue()


def _sent(scripted: Scripted, *settings_json: str) -> list[dict[str, object]]:
    (scripted.project / "shot.png").write_bytes(_wide_png())
    write_models_json(scripted.agent_dir, scripted.server.base_url, input=["text", "image"])
    for text in settings_json:
        (scripted.agent_dir / "settings.json").write_text(text)
    scripted.server.add(text_reply("a blue screenshot"))
    result = scripted.run("--no-session", "-p", "@shot.png", "what is this?")
    assert result.returncode == 0, result.stderr
    content = scripted.server.requests[0].body["messages"][-1]["content"]
    assert isinstance(content, list)
    return content


def _image_size(part: dict[str, object]) -> tuple[int, int]:
    url = part["image_url"]
    assert isinstance(url, dict)
    data = str(url["url"]).split(",", 1)[1]
    return Image.open(io.BytesIO(base64.b64decode(data))).size


def test_an_attached_image_is_shrunk_and_the_model_told_its_size(scripted: Scripted) -> None:
    content = _sent(scripted)
    text = "".join(str(part.get("text", "")) for part in content)
    path = scripted.project / "shot.png"
    assert (
        f'<file name="{path.resolve()}">[Image: original 3000x1500, displayed at 2000x1000. '
        "Multiply coordinates by 1.50 to map to original image.]</file>"
    ) in text
    (image,) = [part for part in content if part["type"] == "image_url"]
    assert _image_size(image) == (2000, 1000)


def test_auto_resize_off_sends_the_original(scripted: Scripted) -> None:
    content = _sent(scripted, json.dumps({"images": {"autoResize": False}}))
    text = "".join(str(part.get("text", "")) for part in content)
    assert f'<file name="{(scripted.project / "shot.png").resolve()}"></file>' in text
    (image,) = [part for part in content if part["type"] == "image_url"]
    assert _image_size(image) == (3000, 1500)
