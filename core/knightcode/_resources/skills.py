"""Skills (the Agent Skills standard): loading, validation and the system prompt's list.

Loading is lenient, like the reference: a file that breaks a rule of the standard (a name with
capitals, an unknown header field, …) still loads and each violation becomes a warning naming
the file. Only a skill without a description is dropped — the model chooses skills by their
descriptions, so one without is useless to it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

from knightcode._resources.frontmatter import read_frontmatter, text_field, unreadable

SKILL_FILE = "SKILL.md"
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
STANDARD_FIELDS = frozenset(
    {
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
        "allowed-tools",
        "disable-model-invocation",
    }
)
_NAME_CHARS = re.compile(r"^[a-z0-9-]+$")


@dataclass(frozen=True)
class Skill:
    """One loaded skill.

    :param name: from the header, else the name of its directory
    :param description: from the header
    :param path: the markdown file (absolute)
    :param source: where it was found: ``user``, ``project``, ``path``, ``package:<source>``
        or ``plugin``
    :param model_invocable: False for ``disable-model-invocation: true``: left out of the
        system prompt, loaded only by ``/skill:name``
    """

    name: str
    description: str
    path: Path
    source: str
    model_invocable: bool = True

    @property
    def base_dir(self) -> Path:
        """The directory a skill's relative references are resolved against."""
        return self.path.parent


@dataclass
class SkillLoad:
    """Skills found and the warnings about them (each ``"<file>: <problem>"``)."""

    skills: list[Skill] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def name_problems(name: str, directory_name: str) -> list[str]:
    """What is wrong with a skill's name under the standard (empty: nothing)."""
    problems: list[str] = []
    if name != directory_name:
        problems.append(f'name "{name}" does not match parent directory "{directory_name}"')
    if len(name) > MAX_NAME_LENGTH:
        problems.append(f"name exceeds {MAX_NAME_LENGTH} characters ({len(name)})")
    if not _NAME_CHARS.match(name):
        problems.append(
            "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"
        )
    if name.startswith("-") or name.endswith("-"):
        problems.append("name must not start or end with a hyphen")
    if "--" in name:
        problems.append("name must not contain consecutive hyphens")
    return problems


def description_problems(description: str | None) -> list[str]:
    """What is wrong with a description (missing, blank or too long)."""
    if description is None or not description.strip():
        return ["description is required"]
    if len(description) > MAX_DESCRIPTION_LENGTH:
        return [f"description exceeds {MAX_DESCRIPTION_LENGTH} characters ({len(description)})"]
    return []


def load_skill_file(path: Path, source: str) -> SkillLoad:
    """One skill file, with its warnings; no skill when it has no description or is unreadable."""
    result = SkillLoad()
    try:
        parsed = read_frontmatter(path)
    except OSError as exc:
        result.warnings.append(unreadable(path, exc))
        return result
    if parsed.error is not None:
        result.warnings.append(f"{path}: {parsed.error}")
        return result
    fields = parsed.fields
    unknown = [key for key in fields if key not in STANDARD_FIELDS]
    problems = [f'unknown frontmatter field "{key}"' for key in unknown]
    description = text_field(fields, "description")
    problems += description_problems(description)
    directory_name = path.parent.name
    name = text_field(fields, "name") or directory_name
    problems += name_problems(name, directory_name)
    result.warnings.extend(f"{path}: {problem}" for problem in problems)
    if description is not None and description.strip():
        invocable = fields.get("disable-model-invocation") is not True
        result.skills.append(Skill(name, description.strip(), path, source, invocable))
    return result


def _entries(directory: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as found:
            return sorted(found, key=lambda entry: entry.name)
    except OSError:
        return []


def load_skills_from_dir(directory: Path, source: str, *, root_files: bool = True) -> SkillLoad:
    """The skills under ``directory`` (the files :func:`skill_files` finds), with warnings."""
    result = SkillLoad()
    for path in skill_files(directory, root_files=root_files):
        one = load_skill_file(path, source)
        result.skills += one.skills
        result.warnings += one.warnings
    return result


def skill_files(directory: Path, *, root_files: bool = True) -> list[Path]:
    """The skill files under ``directory``: its own ``*.md`` files when ``root_files``, and
    every ``SKILL.md`` in its subdirectories, at any depth. Package filters enable and disable
    these one by one, so they are listed apart from loading.

    Hidden entries and ``node_modules`` are skipped; symlinks are followed (broken ones
    skipped). A directory holding a ``SKILL.md`` is one skill: its subfolders are its own
    references, not more skills.
    """
    entries = _entries(directory)
    if not root_files and any(e.name == SKILL_FILE and _is_file(e) for e in entries):
        return [Path(directory, SKILL_FILE)]
    found: list[Path] = []
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        path = Path(entry.path)
        if _is_dir(entry):
            found += skill_files(path, root_files=False)
        elif root_files and entry.name.endswith(".md") and _is_file(entry):
            found.append(path)
    return found


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def format_skills_for_prompt(skills: list[Skill]) -> str:
    """The system prompt's section listing the skills the model may load (the standard's XML);
    empty when none is model-invocable.
    """
    visible = [skill for skill in skills if skill.model_invocable]
    if not visible:
        return ""
    lines = [
        "The following skills provide specialized instructions for specific tasks.",
        "Use the read tool to load a skill's file when the task matches its description.",
        "Relative paths inside a skill file are resolved from the skill's directory.",
        "",
        "<available_skills>",
    ]
    quote = {'"': "&quot;", "'": "&apos;"}
    for skill in visible:
        lines += [
            "  <skill>",
            f"    <name>{escape(skill.name, quote)}</name>",
            f"    <description>{escape(skill.description, quote)}</description>",
            f"    <location>{escape(skill.path.as_posix(), quote)}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)
