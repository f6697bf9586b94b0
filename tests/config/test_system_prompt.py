"""SYSTEM.md / APPEND_SYSTEM.md precedence and the assembled system prompt."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from knightcode._config.context_files import ContextFile
from knightcode._config.system_prompt import PromptFiles, build_system_prompt, load_prompt_files
from knightcode._errors import ConfigError

TODAY = datetime.date(2025, 3, 4)
TOOLS = [("read", "Read a file"), ("bash", "Run a shell command")]


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_no_files(agent_dir: Path, project_dir: Path) -> None:
    assert load_prompt_files(agent_dir, project_dir, project_trusted=True) == PromptFiles()


def test_trusted_project_file_wins_and_names_are_independent(
    agent_dir: Path, project_dir: Path
) -> None:
    put(agent_dir / "SYSTEM.md", "user system")
    user_append = put(agent_dir / "APPEND_SYSTEM.md", "user append")
    project_system = put(project_dir / ".knightcode" / "SYSTEM.md", "project system")
    files = load_prompt_files(agent_dir, project_dir, project_trusted=True)
    assert files == PromptFiles("project system", "user append", project_system, user_append)


def test_untrusted_project_files_are_ignored(agent_dir: Path, project_dir: Path) -> None:
    user_system = put(agent_dir / "SYSTEM.md", "user system")
    put(project_dir / ".knightcode" / "SYSTEM.md", "project system")
    put(project_dir / ".knightcode" / "APPEND_SYSTEM.md", "project append")
    files = load_prompt_files(agent_dir, project_dir, project_trusted=False)
    assert files == PromptFiles("user system", None, user_system, None)


def test_project_append_replaces_user_append(agent_dir: Path, project_dir: Path) -> None:
    put(agent_dir / "APPEND_SYSTEM.md", "user append")
    put(project_dir / ".knightcode" / "APPEND_SYSTEM.md", "project append")
    files = load_prompt_files(agent_dir, project_dir, project_trusted=True)
    assert files.append == "project append"


def test_unreadable_prompt_file_is_an_error(
    agent_dir: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = put(agent_dir / "SYSTEM.md", "x")
    real_read_bytes = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        # Permission bits do not stop root (which runs CI here), so refuse the read directly.
        if self == path:
            raise PermissionError(13, "Permission denied")
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with pytest.raises(ConfigError) as info:
        load_prompt_files(agent_dir, project_dir, project_trusted=False)
    assert str(info.value) == f"{path}: cannot read: Permission denied"


def test_default_prompt_structure(tmp_path: Path) -> None:
    context = [ContextFile(tmp_path / "AGENTS.md", "Use tabs.\n")]
    prompt = build_system_prompt(
        cwd=tmp_path, tools=TOOLS, context_files=context, append=["Be nice.", "  "], today=TODAY
    )
    assert prompt.startswith("You are knightcode, a coding agent")
    assert (
        "Available tools:\n- read: Read a file\n- bash: Run a shell command\n\nGuidelines:\n- "
        in prompt
    )
    parts = [
        "Available tools:",
        "Guidelines:",
        "Be nice.",
        "# Project Context",
        f"## {tmp_path / 'AGENTS.md'}\n\nUse tabs.",
        "Current date:",
    ]
    positions = [prompt.index(part) for part in parts]
    assert positions == sorted(positions)
    assert prompt.endswith(f"Current date: 2025-03-04\nCurrent working directory: {tmp_path}")


def test_guidelines_follow_the_tools(tmp_path: Path) -> None:
    with_tools = build_system_prompt(cwd=tmp_path, tools=TOOLS, context_files=[], today=TODAY)
    assert "Use bash for builds" in with_tools
    assert "Use edit for targeted changes" not in with_tools
    search = build_system_prompt(cwd=tmp_path, tools=[("find", "Find files")], context_files=[])
    assert "Search with grep, find and ls" in search


def test_no_tools_is_shown_as_none(tmp_path: Path) -> None:
    prompt = build_system_prompt(cwd=tmp_path, tools=[], context_files=[], today=TODAY)
    assert "Available tools:\n(none)\n" in prompt
    assert "# Project Context" not in prompt


def test_override_replaces_the_default_text_but_keeps_the_rest(tmp_path: Path) -> None:
    context = [ContextFile(tmp_path / "AGENTS.md", "ctx")]
    prompt = build_system_prompt(
        cwd=tmp_path,
        tools=TOOLS,
        context_files=context,
        system_override="You are a pirate.\n",
        append=["Arr."],
        today=TODAY,
    )
    assert prompt == (
        "You are a pirate.\n\nArr.\n\n# Project Context\n\n"
        "Project-specific instructions and guidelines:\n\n"
        f"## {tmp_path / 'AGENTS.md'}\n\nctx\n\n"
        f"Current date: 2025-03-04\nCurrent working directory: {tmp_path}"
    )


def test_date_defaults_to_today(tmp_path: Path) -> None:
    prompt = build_system_prompt(cwd=tmp_path, tools=[], context_files=[])
    assert f"Current date: {datetime.date.today().isoformat()}\n" in prompt
