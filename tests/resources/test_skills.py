"""Skill loading and validation: the reference's cases (``test/skills.test.ts``) transcribed,
with their fixtures written into a temporary directory, plus knightcode's discovery places.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from knightcode._resources.discovery import (
    ResourceSources,
    discover_resources,
    project_skill_dirs,
)
from knightcode._resources.frontmatter import parse_frontmatter
from knightcode._resources.skills import Skill, format_skills_for_prompt, load_skills_from_dir


def skill_file(directory: Path, header: str, body: str = "Instructions.") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    path.write_text(f"---\n{header}\n---\n\n{body}\n" if header else f"{body}\n")
    return path


@pytest.fixture
def fixtures(tmp_path: Path) -> Path:
    """The reference's ``fixtures/skills`` tree."""
    root = tmp_path / "skills"
    skill_file(
        root / "valid-skill",
        "name: valid-skill\ndescription: A valid skill for testing purposes.",
    )
    skill_file(root / "name-mismatch", "name: different-name\ndescription: Mismatched.")
    skill_file(root / "invalid-name-chars", "name: Invalid_Name\ndescription: Bad chars.")
    skill_file(root / ("x" * 70), f"name: {'x' * 70}\ndescription: Long name.")
    (root / "long-name").mkdir()
    (root / ("x" * 70)).rename(root / "long-name" / ("x" * 70))
    skill_file(root / "missing-description", "name: missing-description")
    skill_file(
        root / "unknown-field",
        "name: unknown-field\ndescription: Extra fields.\nauthor: someone\nversion: 1.0",
    )
    skill_file(root / "nested" / "child-skill", "name: child-skill\ndescription: Nested.")
    skill_file(root / "no-frontmatter", "", "Just text, no header.")
    skill_file(root / "invalid-yaml", "name: invalid-yaml\ndescription: ok\n[unclosed")
    skill_file(
        root / "multiline-description",
        "name: multiline-description\ndescription: |\n  This is a multiline description.\n"
        "  It spans lines.",
    )
    skill_file(root / "consecutive-hyphens", "name: bad--name\ndescription: Hyphens.")
    skill_file(
        root / "disable-model-invocation",
        "name: disable-model-invocation\ndescription: Only by command.\n"
        "disable-model-invocation: true",
    )
    return root


def test_valid_skill(fixtures: Path) -> None:
    load = load_skills_from_dir(fixtures / "valid-skill", "test")
    assert [(s.name, s.description, s.source) for s in load.skills] == [
        ("valid-skill", "A valid skill for testing purposes.", "test")
    ]
    assert load.warnings == []
    assert load.skills[0].model_invocable


def test_name_not_matching_its_directory_warns_but_loads(fixtures: Path) -> None:
    load = load_skills_from_dir(fixtures / "name-mismatch", "test")
    assert [s.name for s in load.skills] == ["different-name"]
    assert any("does not match parent directory" in w for w in load.warnings)


@pytest.mark.parametrize(
    ("directory", "problem"),
    [
        ("invalid-name-chars", "invalid characters"),
        ("long-name", "exceeds 64 characters"),
        ("consecutive-hyphens", "consecutive hyphens"),
    ],
)
def test_bad_names_warn_but_load(fixtures: Path, directory: str, problem: str) -> None:
    load = load_skills_from_dir(fixtures / directory, "test")
    assert len(load.skills) == 1
    assert any(problem in w for w in load.warnings), load.warnings


@pytest.mark.parametrize("directory", ["missing-description", "no-frontmatter"])
def test_no_description_warns_and_skips(fixtures: Path, directory: str) -> None:
    load = load_skills_from_dir(fixtures / directory, "test")
    assert load.skills == []
    assert any("description is required" in w for w in load.warnings)
    assert all(w.startswith(str(fixtures / directory / "SKILL.md")) for w in load.warnings)


def test_unknown_fields_warn(fixtures: Path) -> None:
    load = load_skills_from_dir(fixtures / "unknown-field", "test")
    assert len(load.skills) == 1
    assert any('unknown frontmatter field "author"' in w for w in load.warnings)
    assert any('unknown frontmatter field "version"' in w for w in load.warnings)


def test_nested_skills_load_recursively(fixtures: Path) -> None:
    load = load_skills_from_dir(fixtures / "nested", "test")
    assert [s.name for s in load.skills] == ["child-skill"]
    assert load.warnings == []


def test_invalid_yaml_warns_and_skips(fixtures: Path) -> None:
    load = load_skills_from_dir(fixtures / "invalid-yaml", "test")
    assert load.skills == []
    assert any("at line 4" in w for w in load.warnings), load.warnings


def test_multiline_description_is_kept(fixtures: Path) -> None:
    load = load_skills_from_dir(fixtures / "multiline-description", "test")
    (skill,) = load.skills
    assert "\n" in skill.description
    assert "This is a multiline description." in skill.description
    assert load.warnings == []


def test_disable_model_invocation(fixtures: Path) -> None:
    load = load_skills_from_dir(fixtures / "disable-model-invocation", "test")
    (skill,) = load.skills
    assert not skill.model_invocable
    assert not any("unknown frontmatter field" in w for w in load.warnings)


def test_whole_tree(fixtures: Path) -> None:
    names = {s.name for s in load_skills_from_dir(fixtures, "test").skills}
    assert names == {
        "valid-skill",
        "different-name",
        "Invalid_Name",
        "x" * 70,
        "unknown-field",
        "child-skill",
        "multiline-description",
        "bad--name",
        "disable-model-invocation",
    }


def test_missing_directory_is_empty(tmp_path: Path) -> None:
    load = load_skills_from_dir(tmp_path / "none", "test")
    assert (load.skills, load.warnings) == ([], [])


def test_root_md_files_only_where_allowed(tmp_path: Path) -> None:
    """A root ``*.md`` is a skill in the knightcode directories, not in ``.agents/skills``;
    ``SKILL.md`` directories count everywhere; hidden and ``node_modules`` entries never."""
    root = tmp_path / "skills"
    root.mkdir()
    (root / "quick.md").write_text("---\ndescription: A root file skill.\n---\nBody\n")
    skill_file(root / "dir-skill", "description: A directory skill.")
    skill_file(root / ".hidden" / "secret", "description: Hidden.")
    skill_file(root / "node_modules" / "dep", "description: A dependency.")
    assert {s.name for s in load_skills_from_dir(root, "user").skills} == {"skills", "dir-skill"}
    only_dirs = load_skills_from_dir(root, "project", root_files=False)
    assert [s.name for s in only_dirs.skills] == ["dir-skill"]


def prompt_skill(name: str, description: str, *, invocable: bool = True) -> Skill:
    return Skill(name, description, Path(f"/path/{name}/SKILL.md"), "test", invocable)


def test_format_empty() -> None:
    assert format_skills_for_prompt([]) == ""
    assert format_skills_for_prompt([prompt_skill("hidden", "x", invocable=False)]) == ""


def test_format_xml() -> None:
    text = format_skills_for_prompt(
        [
            prompt_skill("skill-one", 'A skill with <special> & "characters".'),
            prompt_skill("skill-two", "Second."),
            prompt_skill("hidden-skill", "Hidden.", invocable=False),
        ]
    )
    intro = text[: text.index("<available_skills>")]
    assert "The following skills provide specialized instructions" in intro
    assert "Use the read tool to load a skill's file" in intro
    assert "Relative paths inside a skill file are resolved from the skill" in intro
    assert text.count("<skill>") == 2
    assert "<name>skill-one</name>" in text and "<name>skill-two</name>" in text
    assert "hidden-skill" not in text
    assert "&lt;special&gt; &amp; &quot;characters&quot;" in text
    assert "<location>/path/skill-one/SKILL.md</location>" in text
    assert text.endswith("</available_skills>")


def sources(tmp_path: Path, **extra: object) -> ResourceSources:
    agent_dir, cwd, home = tmp_path / "agent", tmp_path / "project", tmp_path / "home"
    for path in (agent_dir, cwd, home):
        path.mkdir(exist_ok=True)
    return ResourceSources(agent_dir=agent_dir, cwd=cwd, home=home, **extra)  # type: ignore[arg-type]


def test_explicit_paths_and_missing_ones(fixtures: Path, tmp_path: Path) -> None:
    found = discover_resources(
        sources(tmp_path, cli_skills=[fixtures / "valid-skill", tmp_path / "nope"])
    )
    assert [(s.name, s.source) for s in found.skills] == [("valid-skill", "path")]
    assert any("skill path does not exist" in w for w in found.warnings)


def test_collisions_keep_the_first_and_report_the_second(tmp_path: Path) -> None:
    base = sources(tmp_path)
    first = skill_file(base.agent_dir / "skills" / "calendar", "description: First.")
    second = skill_file(tmp_path / "other" / "calendar", "description: Second.")
    found = discover_resources(sources(tmp_path, cli_skills=[second.parent]))
    assert [(s.path, s.description) for s in found.skills] == [(first, "First.")]
    (collision,) = [w for w in found.warnings if "collision" in w]
    assert str(second) in collision and str(first) in collision


def test_symlinked_duplicate_is_silent(tmp_path: Path) -> None:
    base = sources(tmp_path)
    skill_file(base.agent_dir / "skills" / "calendar", "description: First.")
    (base.home / ".agents" / "skills").mkdir(parents=True)
    (base.home / ".agents" / "skills" / "calendar").symlink_to(
        base.agent_dir / "skills" / "calendar"
    )
    found = discover_resources(base)
    assert [s.name for s in found.skills] == ["calendar"]
    assert found.warnings == []


def test_every_place_and_no_skills(tmp_path: Path) -> None:
    base = sources(tmp_path, trusted=True)
    (tmp_path / ".git").mkdir()
    skill_file(base.agent_dir / "skills" / "a-user", "description: a")
    skill_file(base.home / ".agents" / "skills" / "b-home", "description: b")
    skill_file(base.cwd / ".knightcode" / "skills" / "c-project", "description: c")
    skill_file(base.cwd / ".agents" / "skills" / "d-agents", "description: d")
    skill_file(tmp_path / ".agents" / "skills" / "e-root", "description: e")
    skill_file(tmp_path / "setting" / "f-setting", "description: f")
    skill_file(tmp_path / "plugin" / "g-plugin", "description: g")
    skill_file(tmp_path / "cli" / "h-cli", "description: h")
    extra = {
        "setting_skills": [("../setting", base.cwd)],
        "plugin_skills": [("my-plugin", tmp_path / "plugin")],
        "cli_skills": [tmp_path / "cli" / "h-cli" / "SKILL.md"],
    }
    found = discover_resources(sources(tmp_path, trusted=True, **extra))
    assert [s.name for s in found.skills] == [
        "a-user", "b-home", "c-project", "d-agents", "e-root", "f-setting", "g-plugin", "h-cli"
    ]  # fmt: skip
    assert found.skill("g-plugin") is not None and found.skill("g-plugin").source == "my-plugin"  # type: ignore[union-attr]
    only_cli = discover_resources(sources(tmp_path, trusted=True, no_skills=True, **extra))
    assert [s.name for s in only_cli.skills] == ["h-cli"]


def test_ancestors_stop_at_the_repository_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    cwd = repo / "a" / "b"
    cwd.mkdir(parents=True)
    assert project_skill_dirs(cwd) == [
        cwd / ".agents/skills",
        repo / "a/.agents/skills",
        repo / ".agents/skills",
    ]
    outside = tmp_path / "plain"
    outside.mkdir()
    assert project_skill_dirs(outside)[0] == outside / ".agents/skills"


def test_untrusted_project_skills_are_ignored_with_a_notice(tmp_path: Path) -> None:
    base = sources(tmp_path)
    skill_file(base.cwd / ".knightcode" / "skills" / "c-project", "description: c")
    found = discover_resources(base)
    assert found.skills == []
    assert any("not trusted" in w and "knightcode trust" in w for w in found.warnings)
    trusted = discover_resources(sources(tmp_path, trusted=True))
    assert [s.name for s in trusted.skills] == ["c-project"]
    assert trusted.warnings == []


def test_frontmatter_forms() -> None:
    parsed = parse_frontmatter(
        "---\r\nname: a\r\ndescription: >\r\n  folded\r\n  text\r\nmetadata:\r\n  k: v\r\n"
        "q: 'it''s'\r\nflag: false\r\n---\r\nBody\r\n"
    )
    assert parsed.fields == {
        "name": "a",
        "description": "folded text",
        "metadata": "k: v",
        "q": "it's",
        "flag": False,
    }
    assert parsed.body == "Body"
    assert parse_frontmatter("---\nno end").fields == {}
    assert parse_frontmatter("plain").body == "plain"
