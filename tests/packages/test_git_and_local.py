"""``knightcode install/list/update/remove`` of git repositories and local directories."""

from __future__ import annotations

import json
from pathlib import Path

from knightcode._config.loading import Settings
from knightcode._packages.resources import package_resource_paths

from .conftest import git, run


def _settings(path: Path) -> object:
    return json.loads(path.read_text())["packages"]


def _clone(agent_dir: Path, repo: Path) -> Path:
    return agent_dir / "packages" / "git" / "local" / str(repo).lstrip("/")


def test_git_install_list_update_remove(
    agent_dir: Path, project_dir: Path, resource_repo: Path
) -> None:
    source = f"git:file://{resource_repo}"
    done = run("install", source)
    assert done.returncode == 0, done.stderr
    clone = _clone(agent_dir, resource_repo)
    assert (clone / "skills" / "hello" / "SKILL.md").is_file()
    assert _settings(agent_dir / "settings.json") == [source]

    rows = json.loads(run("list", "--json").stdout)
    assert rows == [
        {
            "source": source,
            "scope": "user",
            "kind": "git",
            "pinned": False,
            "installed": True,
            "version": "v1",
            "path": str(clone),
            "resources": {
                "extensions": [str(clone / "extensions")],
                "skills": [str(clone / "skills")],
                "prompts": [str(clone / "prompts")],
            },
        }
    ]

    # The package's extension is loaded by the plugin planner like a settings path.
    listed = json.loads(run("config", "list", "--json").stdout)
    names = {record["name"]: record["status"] for record in listed}
    assert names == {
        f"ext:{clone / 'extensions' / 'greet.py'}": "loaded",
        "skill:hello": "loaded",
        "/review": "loaded",
    }
    assert (resource_repo.parent / "repo.imported").read_text() == "imported"

    # Upstream moves on; update pulls it.
    (resource_repo / "themes").mkdir()
    (resource_repo / "themes" / "dark.json").write_text("{}")
    git(resource_repo, "add", "-A")
    git(resource_repo, "commit", "-q", "-m", "two")
    done = run("update")
    assert done.returncode == 0, done.stderr
    assert (clone / "themes" / "dark.json").is_file()
    assert done.stdout.startswith(f"{source}: v1-1-g")

    done = run("remove", source)
    assert done.returncode == 0, done.stderr
    assert not clone.exists()
    assert not (agent_dir / "packages" / "git" / "local").exists()
    assert _settings(agent_dir / "settings.json") == []
    assert json.loads(run("list", "--json").stdout) == []


def test_pinned_ref_is_checked_out_and_skipped_by_update(
    agent_dir: Path, resource_repo: Path
) -> None:
    git(resource_repo, "commit", "-q", "--allow-empty", "-m", "after v1")
    assert run("install", f"git:file://{resource_repo}").returncode == 0
    pinned = f"git:file://{resource_repo}@v1"
    done = run("install", pinned)  # the same package at a ref: replaces the entry
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"reinstalled {pinned}")
    assert _settings(agent_dir / "settings.json") == [pinned]
    clone = _clone(agent_dir, resource_repo)
    assert git(clone, "describe", "--tags").strip() == "v1"

    (resource_repo / "new.txt").write_text("x")
    git(resource_repo, "add", "-A")
    git(resource_repo, "commit", "-q", "-m", "later")
    done = run("update")
    assert done.stdout == f"{pinned}: pinned, skipped\n"
    assert not (clone / "new.txt").exists()

    # Installed again without the ref: back on the branch, at its newest commit.
    assert run("install", f"git:file://{resource_repo}").returncode == 0
    assert (clone / "new.txt").is_file()
    assert git(clone, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert run("update").returncode == 0


def test_local_directory_is_used_in_place_and_project_scope(
    agent_dir: Path, project_dir: Path, resource_repo: Path
) -> None:
    inside = project_dir / "tools" / "pkg"
    (inside / "skills").mkdir(parents=True)
    done = run("install", "-l", "tools/pkg")
    assert done.returncode == 0, done.stderr
    assert "not trusted" in done.stdout
    project_settings = project_dir / ".knightcode" / "settings.json"
    # Relative to .knightcode/, so the entry works in a teammate's checkout.
    assert _settings(project_settings) == ["../tools/pkg"]
    done = run("install", str(resource_repo))
    assert done.returncode == 0, done.stderr
    assert _settings(agent_dir / "settings.json") == [str(resource_repo)]
    assert not (agent_dir / "packages").exists()  # referenced, not copied

    untrusted = Settings.load(agent_dir, project_dir, project_trusted=False)
    assert package_resource_paths(untrusted).paths["skills"] == [resource_repo / "skills"]
    trusted = Settings.load(agent_dir, project_dir, project_trusted=True)
    assert package_resource_paths(trusted).paths["skills"] == [
        resource_repo / "skills",
        (project_dir / "tools" / "pkg" / "skills").resolve(),
    ]

    assert run("update").stdout == (
        f"{resource_repo}: a local directory, used in place (nothing to update)\n"
    )
    assert run("remove", str(resource_repo)).returncode == 0
    assert resource_repo.is_dir()  # never deleted: it is the user's directory
    assert run("remove", "-l", "tools/pkg").returncode == 0
    assert _settings(project_settings) == []


def test_object_entries_filter_resources(agent_dir: Path, resource_repo: Path) -> None:
    (agent_dir / "settings.json").write_text(
        json.dumps(
            {
                "packages": [
                    {
                        "source": str(resource_repo),
                        "skills": ["skills/hello"],
                        "extensions": [],
                    }
                ]
            }
        )
    )
    settings = Settings.load(agent_dir, Path.cwd(), project_trusted=False)
    found = package_resource_paths(settings).paths
    assert found["skills"] == [resource_repo / "skills" / "hello" / "SKILL.md"]
    assert found["extensions"] == []
    assert found["prompts"] == [resource_repo / "prompts"]
    listed = json.loads(run("config", "list", "--json").stdout)
    rows = [(row["name"], row["status"], row.get("resource")) for row in listed]
    assert rows == [
        ("skill:hello", "loaded", "skills/hello"),
        ("/review", "loaded", "prompts/review.md"),
        (f"ext:{resource_repo / 'extensions' / 'greet.py'}", "disabled", "extensions/greet.py"),
    ]


def test_declared_but_missing_package_is_a_warning(agent_dir: Path, tmp_path: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"packages": ["git:example.invalid/a/b"]}))
    done = run("config", "list")
    assert done.returncode == 0
    assert (
        "package git:example.invalid/a/b is not installed; run 'knightcode install' to fetch it"
        in done.stderr
    )
    rows = json.loads(run("list", "--json").stdout)
    assert rows[0]["installed"] is False


def test_a_package_in_both_scopes_uses_the_projects_entry(
    agent_dir: Path, project_dir: Path, resource_repo: Path
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"packages": [str(resource_repo)]}))
    (project_dir / ".knightcode").mkdir()
    (project_dir / ".knightcode" / "settings.json").write_text(
        json.dumps({"packages": [{"source": str(resource_repo), "skills": []}]})
    )
    settings = Settings.load(agent_dir, project_dir, project_trusted=True)
    found = package_resource_paths(settings).paths
    assert found["skills"] == []
    assert found["prompts"] == [resource_repo / "prompts"]
    settings = Settings.load(agent_dir, project_dir, project_trusted=False)
    assert package_resource_paths(settings).paths["skills"] == [resource_repo / "skills"]


def test_list_as_text(agent_dir: Path, resource_repo: Path) -> None:
    assert run("list").stdout == "no packages (install one with 'knightcode install SOURCE')\n"
    assert run("install", f"git:file://{resource_repo}@v1").returncode == 0
    clone = _clone(agent_dir, resource_repo)
    assert run("list").stdout == (
        f"git:file://{resource_repo}@v1  (user, v1, pinned)\n"
        f"  extensions: {clone / 'extensions'}\n"
        f"  skills: {clone / 'skills'}\n"
        f"  prompts: {clone / 'prompts'}\n"
    )
