"""``/`` command, ``@`` file and Tab path completion, driven through the editor's keys."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from textual.pilot import Pilot

from knightcode._modes.interactive.completion import CommandInfo, CompletionItem
from knightcode._modes.interactive.file_index import FileIndex
from tests.interactive.editor.harness import EditorApp, put


def _models(prefix: str) -> Sequence[CompletionItem]:
    names = ["gpt-small", "gpt-large", "qwen"]
    return [CompletionItem(n, n) for n in names if n.startswith(prefix)]


COMMANDS = [
    CommandInfo("model", "Select a model", "builtin", _models),
    CommandInfo("compact", "Compact the context", "builtin"),
    CommandInfo("copy", "Copy the last answer", "builtin"),
    CommandInfo("llama", "Manage llama.cpp models", "builtin:llama.cpp"),
]


async def test_slash_lists_commands_with_descriptions_and_filters_by_prefix() -> None:
    app = EditorApp(commands=COMMANDS)
    async with app.run_test() as pilot:
        await pilot.press("slash")
        assert [i.label for i in app.editor.completion_items] == [
            "model",
            "compact",
            "copy",
            "llama",
        ]
        assert app.menu.display and app.menu.items[0].description == "Select a model"
        await pilot.press("c", "o")
        assert [i.value for i in app.editor.completion_items] == ["compact", "copy"]
        await pilot.press("down", "tab")
        assert app.editor.text == "/copy "
        assert app.editor.completion_items == () and not app.menu.display


async def test_enter_on_a_command_completes_and_submits_it() -> None:
    app = EditorApp(commands=COMMANDS)
    async with app.run_test() as pilot:
        await pilot.press("slash", "l", "enter")
        assert app.submitted == ["/llama"]


async def test_command_argument_completion_and_escape_closes_the_menu() -> None:
    app = EditorApp(commands=COMMANDS)
    async with app.run_test() as pilot:
        put(app.editor, "/model ")
        await pilot.press("g")
        assert [i.value for i in app.editor.completion_items] == ["gpt-small", "gpt-large"]
        await pilot.press("up")  # wraps to the last item
        assert app.editor.completion_selected == 1
        await pilot.press("enter")  # accepting an argument does not submit
        assert app.editor.text == "/model gpt-large" and app.submitted == []
        await pilot.press("space", "backspace", "backspace", "e")
        assert app.editor.completion_items
        await pilot.press("escape")  # closes the menu; does not reach the app
        assert app.editor.completion_items == () and app.bubbled == []
        await pilot.press("escape")  # now app.interrupt
        assert app.bubbled == ["escape"]


async def test_slash_after_the_first_line_is_plain_text() -> None:
    app = EditorApp(commands=COMMANDS)
    async with app.run_test() as pilot:
        await pilot.press("a", "shift+enter", "slash")
        assert app.editor.completion_items == ()


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with a .gitignore'd file and a directory with spaces."""
    root = tmp_path / "repo"
    (root / "src" / "render").mkdir(parents=True)
    (root / "docs dir").mkdir()
    (root / "src" / "render" / "editor_view.py").write_text("x")
    (root / "src" / "editor.py").write_text("x")
    (root / "src" / "render" / "table.py").write_text("x")
    (root / "docs dir" / "guide.md").write_text("x")
    (root / "secret_editor.log").write_text("x")
    (root / ".gitignore").write_text("*.log\n")
    _git(root, "init", "-q")
    return root


async def _wait_for_items(pilot: Pilot[None], app: EditorApp) -> None:
    for _ in range(200):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if app.editor.completion_items:
            return
    raise AssertionError("no completion items appeared")


async def _at_completion(repo: Path, index: FileIndex) -> None:
    app = EditorApp(cwd=repo, file_index=index)
    async with app.run_test() as pilot:
        await pilot.press(*"see @edi")
        await _wait_for_items(pilot, app)
        values = [i.value for i in app.editor.completion_items]
        assert values[0] == "src/editor.py"
        assert "src/render/editor_view.py" in values
        assert not any("secret" in v for v in values)
        await pilot.press("enter")
        assert app.editor.text == "see @src/editor.py " and app.submitted == []
        await pilot.press(*"@guide")
        assert app.editor.completion_items[0].value == "docs dir/guide.md"
        await pilot.press("tab")
        assert app.editor.text == 'see @src/editor.py @"docs dir/guide.md" '


async def test_at_completion_with_ripgrep_skips_ignored_files(repo: Path) -> None:
    await _at_completion(repo, FileIndex(repo))


async def test_at_completion_with_git_when_ripgrep_is_missing(repo: Path) -> None:
    await _at_completion(repo, FileIndex(repo, rg=""))


async def test_tab_completes_paths_of_a_real_directory(tmp_path: Path) -> None:
    root = tmp_path / "work"
    (root / "alpha_dir").mkdir(parents=True)
    (root / "alpha_dir" / "inner.txt").write_text("x")
    (root / "alpine.txt").write_text("x")
    (root / "alpaca.md").write_text("x")
    (root / "beta.txt").write_text("x")
    (root / ".hidden").write_text("x")
    app = EditorApp(cwd=root)
    async with app.run_test() as pilot:
        await pilot.press(*"cat b", "tab")  # one match: completed at once
        assert app.editor.text == "cat beta.txt" and app.editor.completion_items == ()
        put(app.editor, "cat al")
        await pilot.press("tab")  # several: the common prefix, then the menu
        assert app.editor.text == "cat alp"
        labels = [i.label for i in app.editor.completion_items]
        assert labels == ["alpha_dir/", "alpaca.md", "alpine.txt"]
        await pilot.press("tab")  # a directory: completion goes on inside it
        assert app.editor.text == "cat alpha_dir/"
        assert [i.label for i in app.editor.completion_items] == ["inner.txt"]
        await pilot.press("tab")
        assert app.editor.text == "cat alpha_dir/inner.txt"
        put(app.editor, "x=.h")
        await pilot.press("tab")
        assert app.editor.text == "x=.hidden"


async def test_tab_keeps_tilde_as_typed(tmp_path: Path) -> None:
    home = Path.home()  # the test's private HOME
    (home / "notes_folder").mkdir()
    app = EditorApp(cwd=tmp_path)
    async with app.run_test() as pilot:
        await pilot.press(*"ls ~/notes", "tab")
        assert app.editor.text == "ls ~/notes_folder/"
