"""``/llama`` through the extension UI, against the real router, with a scripted user."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from knightcode_builtins.llama_cpp.command import DOWNLOAD, KEEP_OTHERS, RETRY, UNLOAD_OTHERS

from .conftest import KEY, Harness, statuses
from .net import CuttableProxy
from .scripted_ui import WAIT, Dialog, ScriptedUI, confirm, select
from .servers import LlamaServer, free_port


def done(ui: ScriptedUI) -> None:
    assert not ui.answers, f"unused answers: {list(ui.answers)}"


async def test_menu_shows_the_router_state_and_unloads(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    ui = ScriptedUI(select("tiny-chat"))
    harness = make_harness(router.url, KEY, ui)
    await harness.llama()
    menu = ui.dialogs[0]
    assert menu.title == f"llama.cpp router at {router.url} · 1 loaded · autoload off"
    assert "tiny-chat — loaded · 2048 ctx" in menu.options
    assert "tiny-tools — unloaded" in menu.options
    assert "tiny-small-ctx — unloaded" in menu.options
    assert menu.options[-1] == DOWNLOAD
    assert statuses(router)["tiny-chat"] == "unloaded"
    assert "Unloaded tiny-chat" in ui.notes("info")
    done(ui)


async def test_load_shows_progress_and_refreshes_models(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure(set())
    ui = ScriptedUI(select("tiny-chat"), select(WAIT))
    harness = make_harness(router.url, KEY, ui)
    await harness.llama()
    assert statuses(router)["tiny-chat"] == "loaded"
    progress = ui.dialogs[1]
    assert (progress.title, progress.options) == ("Loading tiny-chat…", ["Cancel"])
    assert any(text and text.startswith("Loading tiny-chat…") for text in ui.statuses)
    assert ui.statuses[-1] is None  # the status line is cleared
    assert "Loaded tiny-chat · context window 2048 tokens" in ui.notes("info")
    assert harness.registry.find_known("llama.cpp", "tiny-chat") is not None  # registry refreshed
    done(ui)


async def test_keep_other_models_loaded(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    ui = ScriptedUI(select("tiny-tools"), select(KEEP_OTHERS), select(WAIT))
    await make_harness(router.url, KEY, ui).llama()
    assert ui.dialogs[1].title == "Loading tiny-tools: other models are loaded (tiny-chat)"
    assert {k: v for k, v in statuses(router).items() if v == "loaded"} == {
        "tiny-chat": "loaded",
        "tiny-tools": "loaded",
    }
    done(ui)


async def test_unload_other_models_first(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    ui = ScriptedUI(select("tiny-tools"), select(UNLOAD_OTHERS), select(WAIT))
    await make_harness(router.url, KEY, ui).llama()
    state = statuses(router)
    assert (state["tiny-chat"], state["tiny-tools"]) == ("unloaded", "loaded")
    assert "Unloaded tiny-chat" in ui.notes("info")
    done(ui)


async def test_backing_out_of_the_question_changes_nothing(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    router.ensure({"tiny-chat"})
    ui = ScriptedUI(select("tiny-tools"), select(None))
    await make_harness(router.url, KEY, ui).llama()
    state = statuses(router)
    assert (state["tiny-chat"], state["tiny-tools"]) == ("loaded", "unloaded")
    done(ui)


async def test_cancel_asks_first_then_stops_the_load(
    router: LlamaServer, proxy: CuttableProxy, make_harness: Callable[..., Harness]
) -> None:
    router.ensure(set())

    # A tiny model loads in ~20 ms, faster than the dialogs below on a busy machine: the proxy
    # holds the router's answers back, so the load is still in progress for knightcode until
    # the user has confirmed.
    def hold_then_cancel(dialog: Dialog) -> str:
        proxy.hold()
        return "Cancel"

    def release_then_yes(dialog: Dialog) -> bool:
        proxy.release()
        return True

    # Cancel, say no (the load goes on), Cancel again (Escape), say yes.
    ui = ScriptedUI(
        select("tiny-chat"),
        select(hold_then_cancel),
        confirm(False),
        select(None),
        confirm(release_then_yes),
    )
    await make_harness(proxy.url, KEY, ui).llama()
    assert ui.dialogs[2].kind == "confirm" and "Stop loading tiny-chat?" in ui.dialogs[2].message
    assert statuses(router)["tiny-chat"] == "unloaded"
    assert "Loading tiny-chat: cancelled" in ui.notes("info")
    assert "failed" not in ui.notes()  # a cancelled load is not reported as a failure
    done(ui)


async def test_corrupt_model(router: LlamaServer, make_harness: Callable[..., Harness]) -> None:
    router.ensure(set())
    ui = ScriptedUI(select("broken"), select(WAIT))
    await make_harness(router.url, KEY, ui).llama()
    error = ui.notes("error")
    assert "llama.cpp model 'broken' is corrupt:" in error
    assert "broken.gguf is not a GGUF file" in error and "Download it again" in error


async def test_load_failed(router: LlamaServer, make_harness: Callable[..., Harness]) -> None:
    router.ensure(set())
    ui = ScriptedUI(select("tiny-bad-lora"), select(WAIT))
    await make_harness(router.url, KEY, ui).llama()
    error = ui.notes("error")
    assert (
        "llama.cpp model 'tiny-bad-lora' failed to load (llama-server exited with code 1)" in error
    )
    assert "corrupt" not in error  # the file itself is fine
    # the menu shows the failure the next time
    ui.add(select(None))
    await make_harness(router.url, KEY, ui).llama()
    assert "tiny-bad-lora — unloaded (last load failed, exit code 1)" in ui.dialogs[-1].options


async def test_wrong_key_is_reported(
    router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    ui = ScriptedUI()
    await make_harness(router.url, "wrong", ui).llama()
    assert "rejected the API key (401)" in ui.notes("error")


async def test_not_router_mode_is_reported(
    single_server: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    ui = ScriptedUI()
    await make_harness(single_server.url, None, ui).llama()
    assert "is not in router mode" in ui.notes("error")


async def test_unreachable_router_offers_retry_and_close(
    make_harness: Callable[..., Harness],
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    ui = ScriptedUI(select(RETRY), select("Close"))
    await make_harness(url, None, ui).llama()
    assert [d.options for d in ui.dialogs] == [[RETRY, "Close"], [RETRY, "Close"]]
    assert f"llama.cpp router not reachable at {url}" in ui.dialogs[0].title
    done(ui)


@pytest.fixture
def proxy(router: LlamaServer) -> Iterator[CuttableProxy]:
    line = CuttableProxy(router.port)
    yield line
    line.close()


async def test_disconnect_then_retry_does_not_replay(
    router: LlamaServer, proxy: CuttableProxy, make_harness: Callable[..., Harness]
) -> None:
    router.ensure(set())

    def cut_then_pick(dialog: Dialog) -> str:
        proxy.cut()  # the router goes away while the user looks at the menu
        return "tiny-chat"

    def restore_then_retry(dialog: Dialog) -> str:
        assert "not reachable" in dialog.title and "the connection dropped" in dialog.title
        proxy.restore()
        return RETRY

    ui = ScriptedUI(select(cut_then_pick), select(restore_then_retry), select(None))
    await make_harness(proxy.url, KEY, ui).llama()
    menus = [d for d in ui.dialogs if d.title.startswith("llama.cpp router at")]
    assert len(menus) == 2  # Retry showed the fresh state …
    # (The router may note an earlier child's exit after it: "unloaded (last load failed …)".)
    assert any(option.startswith("tiny-chat — unloaded") for option in menus[1].options)
    assert statuses(router)["tiny-chat"] == "unloaded"  # … and did not replay the load
    done(ui)


async def test_disconnect_during_a_load(
    router: LlamaServer, proxy: CuttableProxy, make_harness: Callable[..., Harness]
) -> None:
    router.ensure(set())

    def cut_while_loading(dialog: Dialog) -> object:
        proxy.cut()
        return WAIT

    def retry(dialog: Dialog) -> str:
        proxy.restore()
        router.wait_for("tiny-chat", "loaded")  # the router finished the load on its own
        return RETRY

    ui = ScriptedUI(select("tiny-chat"), select(cut_while_loading), select(retry), select(None))
    await make_harness(proxy.url, KEY, ui).llama()
    assert "tiny-chat — loaded · 2048 ctx" in ui.dialogs[-1].options
    done(ui)


async def test_sleeping_model_in_the_menu(
    autoload_router: LlamaServer, make_harness: Callable[..., Harness]
) -> None:
    autoload_router.ensure({"tiny-tools"})
    autoload_router.wait_for("tiny-tools", "sleeping", timeout=10)
    ui = ScriptedUI(select("tiny-tools"))
    await make_harness(autoload_router.url, None, ui).llama()
    assert "tiny-tools — sleeping · 2048 ctx" in ui.dialogs[0].options
    assert ui.dialogs[0].title.endswith("· 1 loaded · autoload on")
    assert statuses(autoload_router)["tiny-tools"] == "unloaded"
    done(ui)
