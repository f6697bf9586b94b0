"""The system prompt: knightcode's default text, SYSTEM.md / APPEND_SYSTEM.md, context files.

``SYSTEM.md`` replaces the default prompt and ``APPEND_SYSTEM.md`` adds to it. Each is taken from
the trusted project's ``.knightcode/`` if present there, else from the agent directory; files of
the same name are never combined, so a project can fully replace the user's version.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from knightcode._config.context_files import ContextFile
from knightcode._config.paths import project_config_dir
from knightcode._errors import ConfigError

SYSTEM_NAME = "SYSTEM.md"
APPEND_NAME = "APPEND_SYSTEM.md"

_INTRO = (
    "You are knightcode, a coding agent working in the user's terminal. You help with software "
    "engineering tasks by reading code, editing files and running commands in the user's "
    "project with the tools below."
)

# Advice that only makes sense when the tool it mentions is available, in the order shown.
_TOOL_GUIDELINES: tuple[tuple[str, str], ...] = (
    ("read", "Read a file before you change it, and read enough of it to know its conventions."),
    ("edit", "Use edit for targeted changes; the old text must match the file exactly."),
    ("write", "Use write for new files or complete rewrites, not for small changes."),
    ("grep", "Search with grep, find and ls rather than guessing where code lives."),
    ("bash", "Use bash for builds, tests, git and other commands; avoid interactive programs."),
)
_SEARCH_TOOLS = frozenset({"grep", "find", "ls"})

_GUIDELINES = (
    "Make the smallest change that solves the problem; leave unrelated code as it is.",
    (
        "Check your work: run the tests or the code you changed when you can, and say plainly "
        "what you could not verify."
    ),
    (
        "Never invent file contents, APIs or command output. If something is unclear, look it "
        "up or ask."
    ),
    "Do not delete data, rewrite history or run other irreversible commands unless asked to.",
    "Keep replies short and concrete. When you finish, say what changed and what is left.",
)


@dataclass
class PromptFiles:
    """The SYSTEM.md and APPEND_SYSTEM.md in force, with where each came from.

    :param system: text replacing the default prompt, or None
    :param append: text appended to the prompt, or None
    :param system_path: the file ``system`` was read from
    :param append_path: the file ``append`` was read from
    """

    system: str | None = None
    append: str | None = None
    system_path: Path | None = None
    append_path: Path | None = None


def _read_first(name: str, directories: Sequence[Path]) -> tuple[str, Path] | tuple[None, None]:
    """The text of the first ``directory/name`` that exists, and its path."""
    for directory in directories:
        path = directory / name
        if not path.is_file():
            continue
        try:
            return path.read_bytes().decode("utf-8", errors="replace"), path
        except OSError as exc:
            # The user put this file here on purpose; silently using the default prompt
            # instead would be worse than stopping.
            raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    return None, None


def load_prompt_files(agent_dir: Path, cwd: Path, *, project_trusted: bool) -> PromptFiles:
    """Find SYSTEM.md and APPEND_SYSTEM.md: the trusted project's first, else the agent dir's.

    :raises ConfigError: a file exists but cannot be read
    """
    directories = [project_config_dir(cwd), agent_dir] if project_trusted else [agent_dir]
    system, system_path = _read_first(SYSTEM_NAME, directories)
    append, append_path = _read_first(APPEND_NAME, directories)
    return PromptFiles(system, append, system_path, append_path)


def _default_body(tool_names: set[str], tools: Sequence[tuple[str, str]]) -> str:
    """Intro, the tool list and the guidelines that fit the available tools."""
    listed = "\n".join(f"- {name}: {description}" for name, description in tools) or "(none)"
    guidelines = [
        text
        for tool, text in _TOOL_GUIDELINES
        if tool in tool_names or (tool == "grep" and tool_names & _SEARCH_TOOLS)
    ]
    guidelines.extend(_GUIDELINES)
    bullets = "\n".join(f"- {text}" for text in guidelines)
    return f"{_INTRO}\n\nAvailable tools:\n{listed}\n\nGuidelines:\n{bullets}"


def build_system_prompt(
    *,
    cwd: Path,
    tools: Sequence[tuple[str, str]],
    context_files: Sequence[ContextFile],
    system_override: str | None = None,
    append: Sequence[str] = (),
    skills: str = "",
    today: datetime.date | None = None,
) -> str:
    """Assemble the system prompt.

    :param cwd: the working directory, named at the end of the prompt
    :param tools: ``(name, one-line description)`` of each active tool
    :param context_files: from :func:`~knightcode._config.context_files.discover_context_files`
    :param system_override: ``--system-prompt`` or SYSTEM.md text; replaces knightcode's own
        intro, tool list and guidelines (the tools still reach the model as tool definitions)
    :param append: APPEND_SYSTEM.md and ``--append-system-prompt`` texts, in order
    :param skills: the ``<available_skills>`` section (empty: none, or no ``read`` tool)
    :param today: the date to state (today when omitted; a parameter so tests are stable)
    """
    if system_override is not None:
        sections = [system_override.strip()]
    else:
        sections = [_default_body({name for name, _ in tools}, tools)]
    sections.extend(text.strip() for text in append if text.strip())
    if context_files:
        sections.append("# Project Context\n\nProject-specific instructions and guidelines:")
        sections.extend(f"## {item.path}\n\n{item.content.strip()}" for item in context_files)
    sections.append(skills.strip())
    date = (today or datetime.date.today()).isoformat()
    sections.append(f"Current date: {date}\nCurrent working directory: {cwd.as_posix()}")
    return "\n\n".join(section for section in sections if section)
