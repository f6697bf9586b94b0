"""``/login llama.cpp`` (the provider's ``login``) and the model-file check behind "corrupt"."""

from __future__ import annotations

import inspect
import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from knightcode_builtins.llama_cpp.gguf_check import diagnose_gguf

from .conftest import KEY, Harness
from .scripted_ui import ScriptedUI, text
from .servers import LlamaServer, free_port


async def login(flow: Callable[..., Any], harness: Harness) -> None:
    """Run a provider's ``login`` as ``/login`` would (it may be plain or async)."""
    result = flow(harness.ctx)
    if inspect.isawaitable(result):
        await result


async def test_login_checks_and_stores_the_router(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    ui = ScriptedUI(text(router.url + "/v1"), text(KEY))
    harness = make_harness(None, None, ui)
    provider = harness.host.registrations.providers.get("llama.cpp")
    assert provider is not None and provider.login is not None
    assert ui.dialogs == [] and harness.registry.discovery_errors == {}
    await login(provider.login, harness)
    assert ui.dialogs[0].message == "http://127.0.0.1:8080"  # the default is offered
    assert f"llama.cpp router at {router.url}: " in ui.notes("info") and "1 loaded" in ui.notes(
        "info"
    )
    auth = harness.agent_dir / "auth.json"
    assert json.loads(auth.read_text())["llama.cpp"] == {
        "type": "api_key",
        "key": KEY,
        "baseUrl": router.url,
    }
    assert stat.S_IMODE(auth.stat().st_mode) == 0o600
    assert harness.registry.find_known("llama.cpp", "tiny-chat") is not None  # models refreshed


async def test_login_without_key_to_a_router_not_running_yet(
    make_harness: Callable[..., Harness],
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    ui = ScriptedUI(text(url), text(""))
    harness = make_harness(None, None, ui)
    provider = harness.host.registrations.providers.get("llama.cpp")
    assert provider is not None and provider.login is not None
    await login(provider.login, harness)
    assert "Saved anyway: llama.cpp router not reachable" in ui.notes("warning")
    stored = json.loads((harness.agent_dir / "auth.json").read_text())["llama.cpp"]
    assert stored == {"type": "llama.cpp", "baseUrl": url}
    assert harness.registry.get_api_key("llama.cpp") is None  # no key: none is sent


def test_gguf_check(models_dir: Path, tmp_path: Path) -> None:
    good = models_dir / "tiny-chat.gguf"
    assert diagnose_gguf(good) is None
    assert (
        diagnose_gguf(models_dir / "broken.gguf")
        == "is not a GGUF file (it starts with b'this', not b'GGUF')"
    )
    data = good.read_bytes()
    (tmp_path / "short.gguf").write_bytes(data[:400_000])
    assert (
        diagnose_gguf(tmp_path / "short.gguf")
        == f"is truncated: its tensors need {len(data)} bytes, the file has 400000"
    )
    (tmp_path / "header.gguf").write_bytes(data[:2000])
    assert diagnose_gguf(tmp_path / "header.gguf") == "is truncated inside its header"
    assert diagnose_gguf(tmp_path / "missing.gguf") is None  # not readable here: no verdict
