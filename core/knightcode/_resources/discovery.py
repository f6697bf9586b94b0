"""Where skills and prompt templates come from, and which one wins a name.

Skills, first found wins a name: ``<agent-dir>/skills/``, ``~/.agents/skills/``, the trusted
project's ``.knightcode/skills/``, ``.agents/skills/`` in the working directory and each parent
up to the repository root, installed packages' ``skills/`` (settings ``packages``), the
``skills`` setting, plugins (``resources_discover``), then ``--skill PATH``. ``--no-skills``
drops all of them but ``--skill``. In the two knightcode directories (and a package's
``skills/``) a root ``*.md`` file is a skill; everywhere else only ``SKILL.md`` directories are.

``.agents/skills/`` needs no trust: like ``AGENTS.md`` it is the cross-agent convention for
plain instructions, which a skill only is (the model reads it when a task matches). The
project's ``.knightcode/skills/`` and ``.knightcode/prompts/`` do need it, like the rest of
``.knightcode/`` (they are covered by the trust fingerprint).

Templates, first found wins a name: ``<agent-dir>/prompts/``, the trusted project's
``.knightcode/prompts/``, packages' ``prompts/``, the ``prompts`` setting, then plugins.

A package's skills and templates carry the source ``package:<its source>``; the user's packages
come before the project's, and an untrusted project's packages are not read at all.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._config.paths import expand_path, project_config_dir
from knightcode._resources.skills import (
    Skill,
    SkillLoad,
    load_skill_file,
    load_skills_from_dir,
)
from knightcode._resources.templates import (
    PromptTemplate,
    TemplateLoad,
    load_template_file,
    load_templates_from_dir,
)

if TYPE_CHECKING:
    from knightcode._config.loading import Settings

SKILLS_DIR = "skills"
PROMPTS_DIR = "prompts"
AGENTS_DIR = ".agents"


@dataclass(frozen=True)
class ResourceSources:
    """Everything discovery reads besides the fixed directories.

    :param agent_dir: the agent directory
    :param cwd: the working directory
    :param trusted: whether the project's ``.knightcode/`` is used
    :param package_skills: installed packages' skill folders or files, ``(package source,
        path)`` pairs
    :param package_prompts: likewise for templates
    :param setting_skills: the ``skills`` setting, ``(entry, base dir)`` pairs
    :param setting_prompts: the ``prompts`` setting, likewise
    :param plugin_skills: ``(plugin, path)`` from ``resources_discover``
    :param plugin_prompts: likewise
    :param cli_skills: ``--skill`` paths
    :param no_skills: ``--no-skills``
    :param cli_prompts: ``--prompt-template`` paths (loaded even with ``no_prompts``)
    :param no_prompts: ``--no-prompt-templates``: no discovered templates
    :param home: the user's home (``~/.agents/skills``); a parameter so tests stay inside a
        temporary directory
    """

    agent_dir: Path
    cwd: Path
    trusted: bool = False
    package_skills: Sequence[tuple[str, Path]] = ()
    package_prompts: Sequence[tuple[str, Path]] = ()
    setting_skills: Sequence[tuple[str, Path]] = ()
    setting_prompts: Sequence[tuple[str, Path]] = ()
    plugin_skills: Sequence[tuple[str, Path]] = ()
    plugin_prompts: Sequence[tuple[str, Path]] = ()
    cli_skills: Sequence[Path] = ()
    no_skills: bool = False
    cli_prompts: Sequence[Path] = ()
    no_prompts: bool = False
    home: Path | None = None


@dataclass
class ResourceSet:
    """The skills and templates of a session, and what to tell the user about them."""

    skills: list[Skill] = field(default_factory=list)
    templates: list[PromptTemplate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    plugin_themes: list[tuple[str, Path]] = field(default_factory=list)
    """``(plugin, path)``: theme files or folders from ``resources_discover`` (the theme
    catalog, :mod:`knightcode._themes.discovery`, reads them)."""
    skill_commands: bool = True
    """Settings ``enableSkillCommands``: whether skills are also ``/skill:name`` commands (the
    system prompt lists them either way)."""

    def skill(self, name: str) -> Skill | None:
        """The skill called ``name``, or None."""
        return next((skill for skill in self.skills if skill.name == name), None)


def package_label(source: str) -> str:
    """The source of a package's skills and templates: ``package:<source as declared>``."""
    return f"package:{source}"


def settings_sources(
    agent_dir: Path,
    cwd: Path,
    settings: Settings,
    *,
    trusted: bool,
    plugin_skills: Sequence[tuple[str, Path]] = (),
    plugin_prompts: Sequence[tuple[str, Path]] = (),
    cli_skills: Sequence[Path] = (),
    no_skills: bool = False,
    cli_prompts: Sequence[Path] = (),
    no_prompts: bool = False,
) -> ResourceSources:
    """The sources of a run with these settings: their ``skills``/``prompts`` paths and the
    resources of the packages they declare (nothing of the package code is imported when
    none is declared: this runs on every start).
    """
    from knightcode._packages import declares_packages

    package_skills: list[tuple[str, Path]] = []
    package_prompts: list[tuple[str, Path]] = []
    if declares_packages(settings):
        from knightcode._packages.resources import package_resource_paths

        owned = package_resource_paths(settings).owned
        package_skills, package_prompts = owned["skills"], owned["prompts"]
    return ResourceSources(
        agent_dir=agent_dir,
        cwd=cwd,
        trusted=trusted,
        package_skills=package_skills,
        package_prompts=package_prompts,
        setting_skills=settings.path_entries("skills"),
        setting_prompts=settings.path_entries("prompts"),
        plugin_skills=plugin_skills,
        plugin_prompts=plugin_prompts,
        cli_skills=cli_skills,
        no_skills=no_skills,
        cli_prompts=cli_prompts,
        no_prompts=no_prompts,
    )


def project_skill_dirs(cwd: Path) -> list[Path]:
    """``.agents/skills`` in ``cwd`` and each parent up to the repository root (the nearest
    directory holding ``.git``); only ``cwd``'s when it is not in a repository.
    """
    start = cwd.absolute()
    chain = [start, *start.parents]
    root = next((index for index, path in enumerate(chain) if (path / ".git").exists()), 0)
    return [path / AGENTS_DIR / SKILLS_DIR for path in chain[: root + 1]]


def _skills_at(path: Path, source: str) -> SkillLoad:
    """A ``--skill``/setting/plugin path: a directory (scanned) or one markdown file."""
    if path.is_dir():
        return load_skills_from_dir(path, source)
    if path.is_file() and path.suffix == ".md":
        return load_skill_file(path, source)
    if not path.exists():
        return SkillLoad(warnings=[f"{path}: skill path does not exist"])
    return SkillLoad(warnings=[f"{path}: skill path is not a markdown file"])


def _templates_at(path: Path, source: str) -> TemplateLoad:
    """A setting/plugin path: a directory of templates or one markdown file."""
    if path.is_dir():
        return load_templates_from_dir(path, source)
    if path.is_file() and path.suffix == ".md":
        return load_template_file(path, source)
    return TemplateLoad(warnings=[f"{path}: prompt template path does not exist"])


def _skill_loads(sources: ResourceSources) -> list[SkillLoad]:
    loads: list[SkillLoad] = []
    if not sources.no_skills:
        home = sources.home if sources.home is not None else Path.home()
        loads.append(load_skills_from_dir(sources.agent_dir / SKILLS_DIR, "user"))
        loads.append(load_skills_from_dir(home / AGENTS_DIR / SKILLS_DIR, "user", root_files=False))
        if sources.trusted:
            project = project_config_dir(sources.cwd) / SKILLS_DIR
            loads.append(load_skills_from_dir(project, "project"))
        for directory in project_skill_dirs(sources.cwd):
            loads.append(load_skills_from_dir(directory, "project", root_files=False))
        for package, path in sources.package_skills:
            loads.append(_skills_at(path, package_label(package)))
        for entry, base in sources.setting_skills:
            loads.append(_skills_at(expand_path(entry, base), "path"))
        for owner, path in sources.plugin_skills:
            loads.append(_skills_at(path, owner))
    for path in sources.cli_skills:
        loads.append(_skills_at(expand_path(str(path), sources.cwd), "path"))
    return loads


def _template_loads(sources: ResourceSources) -> list[TemplateLoad]:
    loads: list[TemplateLoad] = []
    if not sources.no_prompts:
        loads.append(load_templates_from_dir(sources.agent_dir / PROMPTS_DIR, "user"))
        if sources.trusted:
            project = project_config_dir(sources.cwd) / PROMPTS_DIR
            loads.append(load_templates_from_dir(project, "project"))
        for package, path in sources.package_prompts:
            loads.append(_templates_at(path, package_label(package)))
        for entry, base in sources.setting_prompts:
            loads.append(_templates_at(expand_path(entry, base), "path"))
        for owner, path in sources.plugin_prompts:
            loads.append(_templates_at(path, owner))
    for path in sources.cli_prompts:
        loads.append(_templates_at(expand_path(str(path), sources.cwd), "path"))
    return loads


def _real(path: Path) -> tuple[int, int] | Path:
    """The file's identity (device, inode): the same file reached through a symlink or
    another path is recognised with one ``stat``, where ``realpath`` walks every component.
    """
    try:
        info = os.stat(path)
    except OSError:
        return path
    return info.st_dev, info.st_ino


def discover_resources(sources: ResourceSources) -> ResourceSet:
    """Every skill and template, collisions resolved (first wins, the loser reported; the same
    file reached twice, through a symlink say, is used once without a word).
    """
    found = ResourceSet()
    seen: set[tuple[int, int] | Path] = set()
    by_name: dict[str, Skill] = {}
    collisions: list[str] = []
    for load in _skill_loads(sources):
        found.warnings += load.warnings
        for skill in load.skills:
            real = _real(skill.path)
            if real in seen:
                continue
            winner = by_name.get(skill.name)
            if winner is not None:
                collisions.append(
                    f'{skill.path}: skill name "{skill.name}" collision: '
                    f"{winner.path} is used instead"
                )
                continue
            seen.add(real)
            by_name[skill.name] = skill
            found.skills.append(skill)
    templates: dict[str, PromptTemplate] = {}
    for template_load in _template_loads(sources):
        found.warnings += template_load.warnings
        for template in template_load.templates:
            winner_template = templates.get(template.name)
            if winner_template is not None:
                if _real(winner_template.path) != _real(template.path):
                    collisions.append(
                        f'{template.path}: prompt template "/{template.name}" collision: '
                        f"{winner_template.path} is used instead"
                    )
                continue
            templates[template.name] = template
            found.templates.append(template)
    found.warnings += collisions
    if not sources.trusted:
        found.warnings += _ignored_notice(sources.cwd)
    return found


def _ignored_notice(cwd: Path) -> list[str]:
    """One line when an untrusted project has skills or templates that were left out."""
    config_dir = project_config_dir(cwd)
    present = [
        name
        for name in (SKILLS_DIR, PROMPTS_DIR)
        if (config_dir / name).is_dir() and any((config_dir / name).iterdir())
    ]
    if not present:
        return []
    return [
        f"project {' and '.join(present)} in {config_dir} are not trusted and were ignored; "
        "run 'knightcode trust' to use them"
    ]
