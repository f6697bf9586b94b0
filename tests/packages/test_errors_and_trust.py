"""Clear one-line errors for bad sources, git failures with git's own words, and a project's
packages fetched only when the project is trusted and the user agrees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knightcode._errors import UsageError
from knightcode._packages.sources import parse_source

from .conftest import run


@pytest.mark.parametrize(
    ("text", "kind", "identity", "pinned"),
    [
        ("pip:llm-gpt4all", "pip", "pip:llm-gpt4all", False),
        ("pip:Kc_Tiny==1.2", "pip", "pip:kc-tiny", True),
        ("pip:kc-tiny>=1,<2", "pip", "pip:kc-tiny", False),
        ("pip:/w/kc_tiny-0.1-py3-none-any.whl", "pip", "pip:kc-tiny", True),
        ("git:github.com/u/repo", "git", "git:github.com/u/repo", False),
        ("git:github.com/u/repo@v1", "git", "git:github.com/u/repo", True),
        ("https://github.com/u/repo.git", "git", "git:github.com/u/repo", False),
        ("git:git@github.com:u/repo@main", "git", "git:github.com/u/repo", True),
        ("git:file:///srv/r@abc123", "git", "git:local/srv/r", True),
        ("/srv/pkg", "local", "local:/srv/pkg", True),
    ],
)
def test_sources(text: str, kind: str, identity: str, pinned: bool) -> None:
    source = parse_source(text, Path("/base"))
    assert (source.kind, source.identity, source.pinned) == (kind, identity, pinned)


def test_git_clone_url_and_ref() -> None:
    source = parse_source("git:github.com/u/repo@v1", Path("/"))
    assert (source.target, source.ref, source.location) == (
        "https://github.com/u/repo",
        "v1",
        "github.com/u/repo",
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("npm:foo", "unknown package source 'npm:foo' (npm:)"),
        ("pip:", "pip: needs a package name"),
        ("pip:foo bar", "expected pip:NAME or pip:NAME==VERSION"),
        ("git:github.com/u/r@", "empty ref after '@'"),
        ("git:..//x", "bad git URL"),
    ],
)
def test_bad_sources_are_refused(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_source(text, Path("/"))


def test_cli_errors_exit_2_in_one_line(project_dir: Path) -> None:
    for args, message in [
        (("install", "npm:foo"), "unknown package source 'npm:foo'"),
        (("install", "./nope"), f"no such directory: {project_dir / 'nope'}"),
        (("remove", "pip:nothing"), "pip:nothing is not installed in the user settings"),
        (("update", "pip:nothing"), "pip:nothing is not installed"),
    ]:
        done = run(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith(f"knightcode: error: {message}")
        assert done.stderr.count("\n") == 1
        assert "Traceback" not in done.stderr


def test_git_failure_shows_gits_words_and_leaves_nothing(
    agent_dir: Path, tmp_path: Path, resource_repo: Path
) -> None:
    done = run("install", f"git:file://{tmp_path}/absent")
    assert done.returncode == 1
    assert done.stderr.startswith(f"knightcode: error: git clone file://{tmp_path}/absent failed:")
    assert "does not appear to be a git repository" in done.stderr
    assert "Traceback" not in done.stderr

    done = run("install", f"git:file://{resource_repo}@no-such-ref")
    assert done.returncode == 1
    assert "git checkout no-such-ref failed:" in done.stderr
    assert not (agent_dir / "packages").exists()
    assert not (agent_dir / "settings.json").exists()


def test_project_packages_need_trust_and_a_yes(
    agent_dir: Path, project_dir: Path, resource_repo: Path
) -> None:
    source = f"git:file://{resource_repo}"
    config = project_dir / ".knightcode"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"packages": [source]}))
    clone = config / "packages" / "git" / "local" / str(resource_repo).lstrip("/")

    done = run("install")
    assert done.returncode == 2
    assert "this project declares packages" in done.stderr
    assert "is not trusted" in done.stderr
    assert not clone.exists()
    assert run("update").stdout == ""  # an untrusted project's packages are not touched
    rows = json.loads(run("list", "--json").stdout)
    assert rows[0]["untrusted"] is True and rows[0]["installed"] is False

    assert run("trust").returncode == 0
    done = run("install")  # no terminal to ask on
    assert done.returncode == 2
    assert "run 'knightcode install --yes'" in done.stderr
    assert not clone.exists()

    done = run("install", "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"installed {source} (project)\n"
    assert (clone / "skills" / "hello" / "SKILL.md").is_file()
    listed = json.loads(run("config", "list", "--json").stdout)
    assert [record["name"] for record in listed] == [
        f"ext:{clone / 'extensions' / 'greet.py'}",
        "skill:hello",
        "/review",
    ]
    assert run("install", "--yes").stdout == "every declared package is installed\n"
    assert (config / "packages" / "git" / ".gitignore").read_text() == "*\n"

    # The package's files are part of the project's trust: a change to one withdraws it.
    (clone / "extensions" / "greet.py").write_text("raise SystemExit('changed by a commit')\n")
    done = run("config", "list", "--json")
    assert json.loads(done.stdout) == []
    assert "project trust withdrawn" in done.stderr
    assert "greet.py (modified)" in done.stderr


def test_install_l_keeps_an_existing_trust(project_dir: Path, resource_repo: Path) -> None:
    (project_dir / ".knightcode").mkdir()
    (project_dir / ".knightcode" / "settings.json").write_text("{}")
    assert run("trust").returncode == 0
    done = run("install", "-l", str(resource_repo))
    assert done.returncode == 0, done.stderr
    assert "not trusted" not in done.stdout
    listed = json.loads(run("config", "list", "--json").stdout)
    assert [record["name"] for record in listed] == [
        f"ext:{resource_repo / 'extensions' / 'greet.py'}",
        "skill:hello",
        "/review",
    ]


def test_a_token_in_a_git_url_is_not_shown(agent_dir: Path) -> None:
    # Port 9 on loopback: nothing listens, so git fails at once without the network.
    done = run("install", "git:https://user:s3cret-token@127.0.0.1:9/u/repo")
    assert done.returncode == 1
    assert "s3cret-token" not in done.stderr
    assert "https://***@127.0.0.1:9/u/repo" in done.stderr
