"""The dialogs' behaviour beyond single actions: search, disabled items, timeouts, rebinding."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from knightcode._config.loading import Settings
from knightcode._keys.registry import KeyRegistry
from knightcode._modes.interactive.dialogs.base import Dialog
from knightcode._modes.interactive.dialogs.fuzzy import fuzzy_filter
from knightcode._modes.interactive.dialogs.login import LoginDialog, ProviderItem
from knightcode._modes.interactive.dialogs.model_selector import (
    ModelChoice,
    ModelItem,
    ModelSelector,
)
from knightcode._modes.interactive.dialogs.select import (
    ConfirmDialog,
    EditorDialog,
    InputDialog,
    SelectDialog,
    SelectItem,
)
from knightcode._modes.interactive.dialogs.session_picker import (
    SessionItem,
    SessionPicker,
    directory_loader,
    search_sessions,
)
from knightcode._modes.interactive.dialogs.settings_dialog import SettingsDialog, setting_rows
from knightcode._modes.interactive.dialogs.tree_navigator import (
    Summarize,
    SummarizeChoice,
)
from tests.interactive.dialogs.host import Host

KEYS = KeyRegistry(None, platform="posix")


async def run(dialog: Dialog[object], *keys: str) -> object:
    host = Host(dialog)
    async with host.run_test() as pilot:
        await pilot.pause()
        await pilot.press(*keys)
        return await host.finished()


async def test_typing_filters_and_enter_takes_the_best_match() -> None:
    dialog = SelectDialog("Pick", ["alpha", "beta", "gamma", "betamax"], keys=KEYS)
    host = Host(dialog)
    async with host.run_test() as pilot:
        await pilot.pause()
        await pilot.press("b", "e", "t")
        await pilot.pause()
        assert [i.label for i in dialog.shown] == ["beta", "betamax"]
        await pilot.press("backspace", "backspace", "backspace", "g")
        await pilot.pause()
        assert [i.label for i in dialog.shown] == ["gamma"]
        await pilot.press("enter")
        assert await host.finished() == "gamma"


async def test_a_long_list_scrolls_and_shows_the_position() -> None:
    dialog = SelectDialog("Pick", [f"o{i}" for i in range(42)], keys=KEYS)
    host = Host(dialog)
    async with host.run_test() as pilot:
        await pilot.pause()
        await pilot.press("down", "down")
        text = dialog.render_body().plain  # type: ignore[union-attr]
        assert "(3/42)" in text
        assert len(text.splitlines()) == 11  # ten rows and the position


async def test_disabled_option_cannot_be_chosen() -> None:
    items = [SelectItem("locked", disabled_reason="needs a key"), SelectItem("Open", value="o")]
    dialog = SelectDialog("Pick", items, keys=KEYS)
    host = Host(dialog)
    async with host.run_test() as pilot:
        await pilot.pause()
        assert "needs a key" in dialog.render_body().plain  # type: ignore[union-attr]
        await pilot.press("enter")
        await pilot.pause()
        assert not dialog.done
        await pilot.press("down", "enter")
        assert await host.finished() == "o"


async def test_unavailable_model_is_listed_with_its_reason_but_not_selectable() -> None:
    models = [ModelItem("local", "llama", available=False, reason="server not running")]
    dialog = ModelSelector(models, keys=KEYS)
    host = Host(dialog)
    async with host.run_test() as pilot:
        await pilot.pause()
        assert "server not running" in dialog.render_body().plain  # type: ignore[union-attr]
        await pilot.press("enter", "ctrl+s")
        await pilot.pause()
        assert not dialog.done
        await pilot.press("escape")
        assert await host.finished() is None


async def test_model_search_is_fuzzy_over_provider_id_and_name() -> None:
    models = [
        ModelItem("openai", "gpt-4o-mini", "GPT-4o mini"),
        ModelItem("anthropic", "claude-sonnet", "Claude Sonnet", 200_000),
        ModelItem("openai", "gpt-4o", "GPT-4o", current=True),
    ]
    dialog = ModelSelector(models, keys=KEYS)
    host = Host(dialog)
    async with host.run_test() as pilot:
        await pilot.pause()
        assert dialog.shown[0].current  # the current model first
        await pilot.press("a", "n", "t", "h")
        await pilot.pause()
        assert [m.id for m in dialog.shown] == ["claude-sonnet"]
        await pilot.press("enter")
        assert await host.finished() == ModelChoice(models[1])


def test_fuzzy_ranks_exact_before_longer() -> None:
    assert fuzzy_filter(["gpt-4o-mini", "gpt-4o", "o4"], "gpt4o", str) == ["gpt-4o", "gpt-4o-mini"]
    assert fuzzy_filter(["a", "b"], "  ", str) == ["a", "b"]


async def test_select_timeout_resolves_none_with_a_countdown() -> None:
    dialog = SelectDialog("Pick", ["a"], keys=KEYS, timeout=1.5)
    host = Host(dialog)
    async with host.run_test() as pilot:
        await pilot.pause()
        assert "(2s)" in str(dialog._title.render())
        assert await host.finished() is None


async def test_confirm_timeout_resolves_false_and_keys_answer() -> None:
    assert await run(ConfirmDialog("Sure?", "x", keys=KEYS, timeout=0.3)) is False
    assert await run(ConfirmDialog("Sure?", "x", keys=KEYS), "y") is True
    assert await run(ConfirmDialog("Sure?", "x", keys=KEYS), "n") is False
    assert await run(ConfirmDialog("Sure?", "x", keys=KEYS), "down", "enter") is False
    assert await run(ConfirmDialog("Sure?", "x", keys=KEYS), "escape") is None


async def test_input_dialog_edits_with_arrows_and_hides_a_password() -> None:
    dialog = InputDialog("Name", "placeholder", keys=KEYS, password=True)
    assert await run(dialog, "a", "c", "left", "b", "enter") == "abc"
    assert dialog.field.password
    assert await run(InputDialog("Name", keys=KEYS, timeout=0.3)) is None


async def test_editor_dialog_submits_with_the_submit_key_only() -> None:
    dialog = EditorDialog("Edit", "line", keys=KEYS)
    assert await run(dialog, "end", "ctrl+j", "n", "e", "x", "t", "enter") == "line\nnext"


async def test_rebinding_in_keybindings_json_changes_the_key(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (agent_dir / "keybindings.json").write_text(
        json.dumps({"tui.select.down": "ctrl+n", "tui.input.submit": "ctrl+s"})
    )
    keys = KeyRegistry(agent_dir, platform="posix")
    assert keys.warnings == ()
    dialog = SelectDialog("Pick", ["a", "b", "c"], keys=keys)
    host = Host(dialog)
    async with host.run_test() as pilot:
        await pilot.pause()
        await pilot.press("down")  # no longer bound: the search field ignores it
        await pilot.pause()
        assert dialog.selected == 0
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert dialog.selected == 1
    editor = EditorDialog("Edit", keys=keys)
    assert await run(editor, "a", "enter", "b", "ctrl+s") == "a\nb"  # enter is a newline now


def session(path: Path, sid: str, text: str, name: str | None = None) -> None:
    lines = [
        {
            "type": "session",
            "version": 3,
            "id": sid,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/work",
        },
        {
            "type": "message",
            "id": f"{sid}1",
            "parentId": None,
            "timestamp": "2026-01-01T00:01:00.000Z",
            "message": {"role": "user", "content": text, "timestamp": 1767225660000},
        },
    ]
    if name:
        lines.append(
            {
                "type": "session_info",
                "id": f"{sid}2",
                "parentId": f"{sid}1",
                "timestamp": "2026-01-01T00:02:00.000Z",
                "name": name,
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


async def test_picker_lists_real_session_files_and_searches(tmp_path: Path) -> None:
    session(tmp_path / "one.jsonl", "s1", "refactor the lexer")
    session(tmp_path / "two.jsonl", "s2", "write the release notes", name="release")
    dialog = SessionPicker(directory_loader(tmp_path), keys=KEYS)
    host = Host(dialog)
    async with host.run_test() as pilot:
        await pilot.pause()
        await dialog.loaded.wait()
        await pilot.pause()
        assert {i.id for i in dialog.shown} == {"s1", "s2"}
        await pilot.press(*"lexer")
        await pilot.pause()
        assert [i.id for i in dialog.shown] == ["s1"]
        await pilot.press("enter")
        assert await host.finished() == tmp_path / "one.jsonl"


def test_session_search_phrase_and_regex() -> None:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    items = [
        SessionItem(Path("a"), "a", None, "x", when, 1, "/", text="node cve audit"),
        SessionItem(Path("b"), "b", None, "x", when, 1, "/", text="cve of node"),
    ]
    assert [i.id for i in search_sessions(items, '"node cve"', "relevance")] == ["a"]
    assert [i.id for i in search_sessions(items, "re:of\\s+node", "recent")] == ["b"]
    assert search_sessions(items, "re:(", "recent") == []


async def test_current_session_cannot_be_deleted(tmp_path: Path) -> None:
    session(tmp_path / "one.jsonl", "s1", "hello")
    deleted: list[Path] = []

    async def delete(path: Path) -> None:
        deleted.append(path)

    dialog = SessionPicker(
        directory_loader(tmp_path), delete=delete, current=tmp_path / "one.jsonl", keys=KEYS
    )
    host = Host(dialog)
    async with host.run_test() as pilot:
        await dialog.loaded.wait()
        await pilot.pause()
        await pilot.press("ctrl+d", "enter")
        assert await host.finished() == tmp_path / "one.jsonl"  # enter resumed, nothing deleted
    assert deleted == []


async def test_settings_dialog_cycles_and_returns_changes(tmp_path: Path) -> None:
    settings = Settings(tmp_path / "s.json", tmp_path / "p.json", {"steeringMode": "all"})
    rows = setting_rows(settings)
    assert rows[0].key == "compaction.enabled" and rows[0].value is True
    steering = next(r for r in rows if r.key == "steeringMode")
    assert steering.value == "all"
    seen: list[tuple[str, object]] = []
    dialog = SettingsDialog(rows, on_change=lambda k, v: seen.append((k, v)), keys=KEYS)
    assert await run(dialog, "enter", "down", "right", "left", "left", "escape") == {
        "compaction.enabled": False,
        "terminal.showImages": False,
    }
    assert seen[0] == ("compaction.enabled", False)


async def test_login_chooses_a_provider_then_asks_the_key() -> None:
    providers = [
        ProviderItem("anthropic", has_key=True),
        ProviderItem("github-copilot", kind="oauth"),
        ProviderItem("openai"),
    ]
    dialog = LoginDialog(providers, keys=KEYS)
    assert await run(dialog, "down", "enter", "down", "enter", "s", "k", "enter") == (
        "openai",
        "sk",
    )
    back = LoginDialog(providers, keys=KEYS)
    assert await run(back, "enter", "escape", "escape") is None  # key step, back, cancel


async def test_summarize_choice() -> None:
    assert await run(SummarizeChoice(keys=KEYS), "down", "enter") is Summarize.YES
    assert await run(SummarizeChoice(keys=KEYS), "escape") is None


async def test_a_long_row_is_cut_to_one_screen_line_not_wrapped() -> None:
    from textual.widgets import Static

    dialog = SelectDialog("Pick", ["word " * 40, "short"])
    host = Host(dialog)
    async with host.run_test(size=(40, 20)) as pilot:
        await pilot.pause()
        body = dialog.query_one("#dialog-body", Static)
        # Search line, two rows: a wrapped row would make the body taller.
        assert body.size.height == len(str(body.render()).splitlines())
        assert body.size.height <= 3


def test_select_labels_keep_their_column_spaces_but_not_line_breaks() -> None:
    dialog = SelectDialog("Tools", ["read        on   core", "two\nlines\there"], keys=KEYS)
    first, second = dialog.items
    assert dialog.render_item(first, False).plain == "read        on   core"
    assert dialog.render_item(second, False).plain == "two lines here"
