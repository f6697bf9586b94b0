"""The filter rules of a package entry's kind lists (``!pattern``, ``+path``, ``-path``, globs),
on resources listed from real files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knightcode._config.loading import Settings
from knightcode._packages.filters import Resource, enabled, resource_at, with_override
from knightcode._packages.resources import package_resource_paths


@pytest.fixture
def skills(tmp_path: Path) -> list[Resource]:
    root = tmp_path / "pack"
    paths = []
    for rel in ("skills/review", "skills/old/one", "skills/old/two", "skills/lint"):
        path = root / rel / "SKILL.md"
        path.parent.mkdir(parents=True)
        path.write_text("---\ndescription: d\n---\n")
        paths.append(path)
    return [resource_at(path, root) for path in paths]


def on(resources: list[Resource], filters: list[str]) -> list[str]:
    return [
        item.rel
        for item, state in zip(resources, enabled(resources, filters), strict=True)
        if state
    ]


ALL = ["skills/review", "skills/old/one", "skills/old/two", "skills/lint"]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ([], []),
        (["-skills/review"], ["skills/old/one", "skills/old/two", "skills/lint"]),
        (["+skills/review"], ALL),
        (["skills/review"], ["skills/review"]),
        (["skills/old"], ["skills/old/one", "skills/old/two"]),  # a folder includes what is in it
        (["review"], ["skills/review"]),  # by name
        (["skills/review/SKILL.md"], ["skills/review"]),  # by its file
        (["./skills/review/"], ["skills/review"]),
        (["skills/*"], ["skills/review", "skills/lint"]),  # * stays in one segment
        (["skills/**"], ALL),
        (["**/two"], ["skills/old/two"]),
        (["!skills/old/*"], ["skills/review", "skills/lint"]),
        (["!skills/old"], ["skills/review", "skills/lint"]),
        (["!skills/old/*", "+skills/old/two"], ["skills/review", "skills/lint", "skills/old/two"]),
        (
            ["+skills/old/two", "-skills/old/two"],
            ["skills/review", "skills/old/one", "skills/lint"],
        ),
        (["skills/review", "-skills/review"], []),
        (["+skills/old"], ALL),  # + and - name one resource exactly, not a folder
        (["skills/lint", "+skills/old"], ["skills/lint"]),
        (["l?nt"], ["skills/lint"]),
    ],
)
def test_filter_rules(skills: list[Resource], filters: list[str], expected: list[str]) -> None:
    assert sorted(on(skills, filters)) == sorted(expected)


@pytest.mark.parametrize(
    ("before", "rel", "state", "after"),
    [
        (None, "skills/x", False, ["-skills/x"]),
        (None, "skills/x", True, ["+skills/x"]),
        ([], "skills/x", True, ["skills/x"]),
        ([], "skills/x", False, []),
        (["-skills/x", "!skills/old/*"], "skills/x", True, ["!skills/old/*", "+skills/x"]),
        (["skills/x", "+skills/y"], "skills/x", False, ["skills/x", "+skills/y", "-skills/x"]),
    ],
)
def test_with_override(before: list[str] | None, rel: str, state: bool, after: list[str]) -> None:
    assert with_override(before, rel, state) == after


def test_filtered_kinds_list_their_enabled_files(tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    for rel in ("skills/a/SKILL.md", "skills/b/SKILL.md", "skills/loose.md", "extra/c/SKILL.md"):
        (pack / rel).parent.mkdir(parents=True, exist_ok=True)
        (pack / rel).write_text("---\ndescription: d\n---\n")
    (pack / "prompts").mkdir()
    (pack / "prompts" / "p.md").write_text("x")
    agent = tmp_path / "agent"
    agent.mkdir()
    entry = {"source": str(pack), "skills": ["!skills/a", "extra"], "prompts": ["!*"]}
    (agent / "settings.json").write_text(json.dumps({"packages": [entry]}))
    found = package_resource_paths(Settings.load(agent, tmp_path, project_trusted=False))
    # "extra" is outside skills/: it adds its skills, and as the one plain entry it is also
    # the only include.
    assert found.paths["skills"] == [pack / "extra" / "c" / "SKILL.md"]
    assert found.paths["prompts"] == []
    entry["skills"] = ["!skills/a"]
    (agent / "settings.json").write_text(json.dumps({"packages": [entry]}))
    found = package_resource_paths(Settings.load(agent, tmp_path, project_trusted=False))
    assert found.paths["skills"] == [
        pack / "skills" / "b" / "SKILL.md",
        pack / "skills" / "loose.md",
    ]
    assert found.owned["skills"][0] == (str(pack), pack / "skills" / "b" / "SKILL.md")
