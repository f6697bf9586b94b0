"""Every action of the dialog contexts, pressed with each of its default keys.

The cases are generated from the action table (``knightcode._keys.actions``): an action added to
one of these contexts without a check here fails ``test_every_action_has_a_check``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.pilot import Pilot

from knightcode._keys.actions import ACTIONS
from knightcode._keys.registry import KeyRegistry
from knightcode._keys.textual_keys import to_textual
from knightcode._modes.interactive.dialogs.model_selector import (
    ModelChoice,
    ModelItem,
    ModelSelector,
)
from knightcode._modes.interactive.dialogs.scoped_models import ScopedModels, ScopedModelsSelector
from knightcode._modes.interactive.dialogs.select import SelectDialog
from knightcode._modes.interactive.dialogs.session_picker import SessionItem, SessionPicker
from knightcode._modes.interactive.dialogs.thinking_selector import ThinkingChoice, ThinkingSelector
from knightcode._modes.interactive.dialogs.tree_navigator import TreeNavigator
from tests.interactive.dialogs.host import Host

CONTEXTS = ("select", "modelSelector", "scopedModels", "sessionPicker", "thinkingSelector", "tree")
KEYS = KeyRegistry(None, platform="posix")

Check = Callable[[str], Awaitable[None]]
CHECKS: dict[tuple[str, str], Check] = {}


def check(context: str, action: str) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        CHECKS[(context, action)] = fn
        return fn

    return register


async def opened(host: Host[object], pilot: Pilot[None]) -> None:
    await pilot.pause()
    assert host.dialog.is_mounted


# --- select ---------------------------------------------------------------------------------


def many() -> SelectDialog:
    return SelectDialog("Pick", [f"item{i:02}" for i in range(25)], keys=KEYS)


async def moved(key: str, start: int, expected: int) -> None:
    dialog = many()
    host = Host(dialog)
    async with host.run_test() as pilot:
        await opened(host, pilot)
        dialog.selected = start
        await pilot.press(key)
        await pilot.pause()
        assert dialog.selected == expected
        assert not dialog.done


@check("select", "tui.select.up")
async def _up(key: str) -> None:
    await moved(key, 0, 24)  # wraps to the bottom


@check("select", "tui.select.down")
async def _down(key: str) -> None:
    await moved(key, 24, 0)  # wraps to the top


@check("select", "tui.select.pageUp")
async def _page_up(key: str) -> None:
    await moved(key, 15, 5)


@check("select", "tui.select.pageDown")
async def _page_down(key: str) -> None:
    await moved(key, 0, 10)


@check("select", "tui.select.left")
async def _left(key: str) -> None:
    await moved(key, 17, 7)


@check("select", "tui.select.right")
async def _right(key: str) -> None:
    await moved(key, 3, 13)


@check("select", "tui.select.confirm")
async def _confirm(key: str) -> None:
    dialog = many()
    host = Host(dialog)
    async with host.run_test() as pilot:
        await opened(host, pilot)
        await pilot.press("down", key)
        assert await host.finished() == "item01"


@check("select", "tui.select.cancel")
async def _cancel(key: str) -> None:
    dialog = many()
    host = Host(dialog)
    async with host.run_test() as pilot:
        await opened(host, pilot)
        await pilot.press(key)
        assert await host.finished() is None
        assert not dialog.is_attached  # ask() removed it


# --- modelSelector --------------------------------------------------------------------------

MODELS = [
    ModelItem("openai", "gpt-4o", "GPT-4o", 128_000),
    ModelItem("anthropic", "claude", "Claude", 200_000, current=True),
    ModelItem("local", "llama", "Llama", available=False, reason="server not running"),
]


@check("modelSelector", "app.models.save")
async def _model_save(key: str) -> None:
    dialog = ModelSelector(MODELS, keys=KEYS)
    host = Host(dialog)
    async with host.run_test() as pilot:
        await opened(host, pilot)
        await pilot.press("down", key)  # the current model is listed first
        assert await host.finished() == ModelChoice(MODELS[0], save=True)


# --- scopedModels ---------------------------------------------------------------------------

SCOPED = [ModelItem("a", "1"), ModelItem("a", "2"), ModelItem("b", "1")]


async def scoped(
    key: str, enabled: list[str] | None, select: int, expected: list[str] | None
) -> None:
    changes: list[list[str] | None] = []
    dialog = ScopedModelsSelector(SCOPED, enabled, on_change=changes.append, keys=KEYS)
    host = Host(dialog)
    async with host.run_test() as pilot:
        await opened(host, pilot)
        dialog.selected = select
        await pilot.press(key)
        await pilot.pause()
        assert dialog.enabled == expected
        assert changes == [expected]
        assert dialog.dirty


@check("scopedModels", "app.models.enableAll")
async def _enable_all(key: str) -> None:
    await scoped(key, [], 0, None)


@check("scopedModels", "app.models.clearAll")
async def _clear_all(key: str) -> None:
    await scoped(key, None, 0, [])


@check("scopedModels", "app.models.toggleProvider")
async def _toggle_provider(key: str) -> None:
    await scoped(key, None, 0, ["b/1"])


@check("scopedModels", "app.models.reorderUp")
async def _reorder_up(key: str) -> None:
    await scoped(key, ["a/1", "a/2"], 1, ["a/2", "a/1"])


@check("scopedModels", "app.models.reorderDown")
async def _reorder_down(key: str) -> None:
    await scoped(key, ["a/1", "a/2"], 0, ["a/2", "a/1"])


@check("scopedModels", "app.models.save")
async def _scoped_save(key: str) -> None:
    dialog = ScopedModelsSelector(SCOPED, {"b/1", "a/1"}, keys=KEYS)
    host = Host(dialog)
    async with host.run_test() as pilot:
        await opened(host, pilot)
        await pilot.press(key)
        assert await host.finished() == ScopedModels(["a/1", "b/1"])


# --- sessionPicker --------------------------------------------------------------------------

NOW = datetime.now(UTC)


def sessions(tmp: Path) -> list[SessionItem]:
    return [
        SessionItem(tmp / "a.jsonl", "a", None, "fix the parser", NOW, 4, "/p"),
        SessionItem(tmp / "b.jsonl", "b", "release", "cut 1.0", NOW - timedelta(hours=2), 9, "/p"),
        SessionItem(
            tmp / "c.jsonl",
            "c",
            None,
            "fork of b",
            NOW - timedelta(days=1),
            2,
            "/p",
            parent_path=str(tmp / "b.jsonl"),
        ),
    ]


class Store:
    """Sessions in memory with the callbacks the app would pass."""

    def __init__(self, tmp: Path) -> None:
        self.items = sessions(tmp)
        self.renamed: list[tuple[Path, str]] = []
        self.deleted: list[Path] = []

    async def load(self) -> list[SessionItem]:
        return list(self.items)

    async def rename(self, path: Path, name: str) -> None:
        self.renamed.append((path, name))

    async def delete(self, path: Path) -> None:
        self.deleted.append(path)
        self.items = [i for i in self.items if i.path != path]


async def picker_case(
    key: str, then: Callable[[SessionPicker, Store, Pilot[None]], Awaitable[None]]
) -> None:
    store = Store(Path("/tmp/sessions"))
    dialog = SessionPicker(store.load, rename=store.rename, delete=store.delete, keys=KEYS)
    host = Host(dialog)
    async with host.run_test() as pilot:
        await opened(host, pilot)
        await dialog.loaded.wait()
        await pilot.pause()
        assert len(dialog.shown) == 3
        await pilot.press(key)
        await pilot.pause()
        await then(dialog, store, pilot)


@check("sessionPicker", "app.session.togglePath")
async def _toggle_path(key: str) -> None:
    async def then(dialog: SessionPicker, store: Store, pilot: Pilot[None]) -> None:
        assert dialog.show_path
        assert "a.jsonl" in dialog.render_body().plain

    await picker_case(key, then)


@check("sessionPicker", "app.session.toggleSort")
async def _toggle_sort(key: str) -> None:
    async def then(dialog: SessionPicker, store: Store, pilot: Pilot[None]) -> None:
        assert dialog.sort == "recent"
        assert [i.id for i in dialog.shown] == ["a", "b", "c"]

    await picker_case(key, then)


@check("sessionPicker", "app.session.toggleNamedFilter")
async def _named(key: str) -> None:
    async def then(dialog: SessionPicker, store: Store, pilot: Pilot[None]) -> None:
        assert dialog.named_only
        assert [i.id for i in dialog.shown] == ["b"]

    await picker_case(key, then)


@check("sessionPicker", "app.session.rename")
async def _rename(key: str) -> None:
    async def then(dialog: SessionPicker, store: Store, pilot: Pilot[None]) -> None:
        assert dialog.renaming is not None
        await pilot.press("x", "y", "enter")
        await pilot.pause()
        assert store.renamed == [(store.items[0].path, "xy")]
        assert dialog.renaming is None and not dialog.done

    await picker_case(key, then)


async def deleted(dialog: SessionPicker, store: Store, pilot: Pilot[None]) -> None:
    assert dialog.confirming_delete is not None
    await pilot.press("q")  # ignored while confirming
    assert dialog.query_text == ""
    await pilot.press("enter")
    await pilot.pause()
    await dialog.loaded.wait()
    assert [p.name for p in store.deleted] == ["a.jsonl"]
    assert [i.id for i in dialog.shown] == ["b", "c"]
    assert not dialog.done


@check("sessionPicker", "app.session.delete")
async def _delete(key: str) -> None:
    await picker_case(key, deleted)


@check("sessionPicker", "app.session.deleteNoninvasive")
async def _delete_noninvasive(key: str) -> None:
    await picker_case(key, deleted)


# --- thinkingSelector -----------------------------------------------------------------------


@check("thinkingSelector", "app.thinking.save")
async def _thinking_save(key: str) -> None:
    dialog = ThinkingSelector(["off", "low", "medium", "high"], "medium", keys=KEYS)
    host = Host(dialog)
    async with host.run_test() as pilot:
        await opened(host, pilot)
        await pilot.press("down", key)
        assert await host.finished() == ThinkingChoice("high", save=True)


# --- tree -----------------------------------------------------------------------------------


def entry(id: str, parent: str | None, role: str, text: str, minute: int) -> dict[str, object]:
    content: object = [{"type": "text", "text": text}]
    message: dict[str, object] = {"role": role, "content": content, "timestamp": 0}
    if role == "toolResult":
        message.update(toolCallId="t", toolName="read", isError=False)
    return {
        "type": "message",
        "id": id,
        "parentId": parent,
        "timestamp": f"2026-01-01T00:{minute:02}:00.000Z",
        "message": message,
    }


TREE_ENTRIES = [
    entry("u1", None, "user", "hello", 0),
    entry("a1", "u1", "assistant", "hi there", 1),
    entry("u2", "a1", "user", "first branch", 2),
    entry("r2", "u2", "toolResult", "file text", 3),
    entry("a2", "r2", "assistant", "done", 4),
    entry("u3", "a1", "user", "second branch", 5),
    entry("a3", "u3", "assistant", "other", 6),
    {
        "type": "model_change",
        "id": "m1",
        "parentId": "a3",
        "timestamp": "2026-01-01T00:07:00.000Z",
        "provider": "p",
        "modelId": "x",
    },
]


class Labels:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None]] = []

    async def __call__(self, entry_id: str, label: str | None) -> None:
        self.calls.append((entry_id, label))


async def tree_case(
    key: str,
    then: Callable[[TreeNavigator, Labels, Pilot[None], Host[str]], Awaitable[None]],
    *,
    select: str | None = None,
    mode: str = "default",
) -> None:
    labels = Labels()
    dialog = TreeNavigator(
        TREE_ENTRIES,
        "a2",
        {"u1": "start"},
        on_label=labels,
        filter_mode=mode,
        keys=KEYS,  # type: ignore[arg-type]
    )
    host = Host(dialog)
    async with host.run_test() as pilot:
        await opened(host, pilot)
        if select is not None:
            dialog.selected = [r.id for r in dialog.shown].index(select)
        await pilot.press(key)
        await pilot.pause()
        await then(dialog, labels, pilot, host)


def shown(dialog: TreeNavigator) -> list[str]:
    return [r.id for r in dialog.shown]


@check("tree", "app.tree.foldOrUp")
async def _fold(key: str) -> None:
    async def then(
        dialog: TreeNavigator, labels: Labels, pilot: Pilot[None], host: Host[str]
    ) -> None:
        assert dialog.folded == {"u2"}
        assert shown(dialog) == ["u1", "a1", "u2", "u3", "a3"]  # u2's branch hidden
        await pilot.press(key)  # folded already: jump to the previous segment start (u1)
        assert dialog.current is not None and dialog.current.id == "u1"

    await tree_case(key, then, select="u2")


@check("tree", "app.tree.unfoldOrDown")
async def _unfold(key: str) -> None:
    async def then(
        dialog: TreeNavigator, labels: Labels, pilot: Pilot[None], host: Host[str]
    ) -> None:
        # Not folded: jumps to the next segment start.
        assert dialog.current is not None and dialog.current.id == "u2"
        dialog.folded.add("u2")
        dialog._reflatten()
        await pilot.press(key)
        assert dialog.folded == set()
        assert "a2" in shown(dialog)

    await tree_case(key, then, select="u1")


@check("tree", "app.tree.editLabel")
async def _edit_label(key: str) -> None:
    async def then(
        dialog: TreeNavigator, labels: Labels, pilot: Pilot[None], host: Host[str]
    ) -> None:
        assert dialog.editing is not None
        await pilot.press("k", "e", "y", "enter")
        await pilot.pause()
        assert labels.calls == [("a2", "key")]
        assert dialog.editing is None and not dialog.done
        assert "[key]" in dialog.render_body().plain

    await tree_case(key, then)


@check("tree", "app.tree.toggleLabelTimestamp")
async def _timestamps(key: str) -> None:
    async def then(
        dialog: TreeNavigator, labels: Labels, pilot: Pilot[None], host: Host[str]
    ) -> None:
        assert dialog.show_timestamps

    await tree_case(key, then)


def filter_check(action: str, before: str, after: str) -> None:
    async def run(key: str) -> None:
        async def then(
            dialog: TreeNavigator, labels: Labels, pilot: Pilot[None], host: Host[str]
        ) -> None:
            assert dialog.filter_mode == after

        await tree_case(key, then, mode=before)

    check("tree", action)(run)


filter_check("app.tree.filter.default", "user-only", "default")
filter_check("app.tree.filter.noTools", "default", "no-tools")
filter_check("app.tree.filter.userOnly", "default", "user-only")
filter_check("app.tree.filter.labeledOnly", "default", "labeled-only")
filter_check("app.tree.filter.all", "default", "all")
filter_check("app.tree.filter.cycleForward", "default", "no-tools")
filter_check("app.tree.filter.cycleBackward", "default", "all")


@check("tree", "app.message.copy")
async def _copy(key: str) -> None:
    async def then(
        dialog: TreeNavigator, labels: Labels, pilot: Pilot[None], host: Host[str]
    ) -> None:
        assert host.clipboard == "assistant: done"

    await tree_case(key, then)


# --- the generated cases --------------------------------------------------------------------

CASES = [
    (context, action.id, key)
    for context in CONTEXTS
    for action in ACTIONS
    if context in action.contexts
    for key in action.defaults("posix")
]


def test_every_action_has_a_check() -> None:
    wanted = {(context, action) for context, action, _ in CASES}
    assert wanted - set(CHECKS) == set()
    assert set(CHECKS) - wanted == set()


@pytest.mark.parametrize(("context", "action", "key"), CASES, ids=lambda v: str(v))
async def test_action(context: str, action: str, key: str) -> None:
    await CHECKS[(context, action)](to_textual(key))
