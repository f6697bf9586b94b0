"""A package's skills and prompt templates end to end: ``knightcode install`` of a real git
repository, then ``knightcode -p`` against the scripted model, ``config list`` and
``config enable/disable SOURCE KIND/NAME``, all through the real command line.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

from knightcode.testing import text_reply
from tests.agent.conftest import Scripted, scripted  # noqa: F401 (the fixture)
from tests.packages.conftest import git, run
from tests.resources.test_resources_e2e import system_text, user_texts
from tests.rpc.conftest import Rpc, rpc  # noqa: F401 (the fixture)


def make_package(root: Path) -> Path:
    """A git repository with skills ``x`` and ``other`` and the template ``y``."""
    for name in ("x", "other"):
        skill = root / "skills" / name / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text(f"---\nname: {name}\ndescription: The {name} skill.\n---\nDo {name}.\n")
    (root / "prompts").mkdir()
    (root / "prompts" / "y.md").write_text("---\ndescription: Ask why\n---\nWhy $1, not ${@:2}?\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    return root


def installed(scripted: Scripted, tmp_path: Path) -> str:  # noqa: F811
    source = f"git:file://{make_package(tmp_path / 'pack')}"
    done = run("install", source, cwd=scripted.project)
    assert done.returncode == 0, done.stderr
    return source


def prompt(scripted: Scripted, text: str) -> tuple[str, str]:  # noqa: F811
    """The system prompt and the user text the model got for ``-p TEXT``."""
    scripted.server.add(text_reply("ok"))
    done = scripted.run("-p", text)
    assert done.returncode == 0, done.stderr
    body = scripted.server.requests[-1].body
    return system_text(body), user_texts(body)[-1]


def config(scripted: Scripted, *args: str) -> subprocess.CompletedProcess[str]:  # noqa: F811
    return subprocess.run(
        [sys.executable, "-m", "knightcode", "config", *args],
        cwd=scripted.project,
        env=scripted.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def listing(scripted: Scripted) -> dict[str, tuple[str, str | None, str | None]]:  # noqa: F811
    done = config(scripted, "list", "--json")
    assert done.returncode == 0, done.stderr
    return {
        row["name"]: (row["status"], row.get("package"), row.get("resource"))
        for row in json.loads(done.stdout)
    }


def test_an_installed_packages_skill_and_template_reach_the_model(
    scripted: Scripted,  # noqa: F811
    tmp_path: Path,
) -> None:
    source = installed(scripted, tmp_path)
    clone = scripted.agent_dir / "packages" / "git" / "local" / str(tmp_path / "pack")[1:]
    system, _ = prompt(scripted, "hello")
    assert "<name>x</name>" in system and "<name>other</name>" in system
    assert f"<location>{(clone / 'skills' / 'x' / 'SKILL.md').as_posix()}</location>" in system
    _, user = prompt(scripted, '/y "the parser" a b')
    assert user == "Why the parser, not a b?"

    assert listing(scripted) == {
        "skill:x": ("loaded", source, "skills/x"),
        "skill:other": ("loaded", source, "skills/other"),
        "/y": ("loaded", source, "prompts/y.md"),
    }
    table = config(scripted, "list").stdout
    assert re.search(rf"skill:x\s+skill\s+loaded\s+{re.escape(source)} skills/x", table), table


def test_config_disable_and_enable_one_resource_of_a_package(
    scripted: Scripted,  # noqa: F811
    tmp_path: Path,
) -> None:
    source = installed(scripted, tmp_path)
    settings = scripted.agent_dir / "settings.json"
    settings.chmod(0o600)

    done = config(scripted, "disable", source, "skills/x")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"disabled skills/x of {source} (in {settings})\n"
    data = json.loads(settings.read_text())
    assert list(data) == ["retry", "packages"]  # other keys and their order are kept
    assert data["packages"] == [{"source": source, "skills": ["-skills/x"]}]
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    assert listing(scripted)["skill:x"] == ("disabled", source, "skills/x")
    assert re.search(r"skill:x\s+skill\s+disabled", config(scripted, "list").stdout)
    system, _ = prompt(scripted, "hello")
    assert "<name>x</name>" not in system and "<name>other</name>" in system

    # A template by its name without ".md"; then it is plain text to the model.
    assert config(scripted, "disable", source, "prompts/y").returncode == 0
    assert listing(scripted)["/y"] == ("disabled", source, "prompts/y.md")
    _, user = prompt(scripted, "/y a b")
    assert user == "/y a b"

    again = config(scripted, "disable", source, "skills/x")
    assert again.stdout == f"skills/x of {source} was already disabled (in {settings})\n"
    assert config(scripted, "enable", source, "skills/x").returncode == 0
    entry = json.loads(settings.read_text())["packages"][0]
    assert entry == {"source": source, "skills": ["+skills/x"], "prompts": ["-prompts/y.md"]}
    system, _ = prompt(scripted, "hello")
    assert "<name>x</name>" in system


def test_config_enable_in_a_kind_that_is_off_enables_only_that_one(
    scripted: Scripted,  # noqa: F811
    tmp_path: Path,
) -> None:
    source = installed(scripted, tmp_path)
    settings = scripted.agent_dir / "settings.json"
    data = json.loads(settings.read_text())
    data["packages"] = [{"source": source, "skills": []}]
    settings.write_text(json.dumps(data))
    assert listing(scripted)["skill:other"][0] == "disabled"
    assert config(scripted, "enable", source, "skills/other").returncode == 0
    assert json.loads(settings.read_text())["packages"][0]["skills"] == ["skills/other"]
    rows = listing(scripted)
    assert rows["skill:other"][0] == "loaded" and rows["skill:x"][0] == "disabled"


def test_config_resource_errors_name_what_exists(
    scripted: Scripted,  # noqa: F811
    tmp_path: Path,
) -> None:
    source = installed(scripted, tmp_path)
    before = (scripted.agent_dir / "settings.json").read_text()

    def refused(*args: str) -> str:
        done = config(scripted, *args)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        return done.stderr

    assert "has no 'skills/nope'; its skills: skills/other, skills/x" in refused(
        "disable", source, "skills/nope"
    )
    assert "KIND one of extensions, skills, prompts, themes" in refused(
        "disable", source, "agents/x"
    )
    assert f"unknown package 'git:example.com/a/b' in the user settings; declared: {source}" in (
        refused("disable", "git:example.com/a/b", "skills/x")
    )
    assert "in the project settings (it is the user's: drop -l); declared: none" in refused(
        "disable", source, "skills/x", "-l"
    )
    assert "-l applies to a package's resource" in refused("disable", "builtin:llama.cpp", "-l")
    assert (scripted.agent_dir / "settings.json").read_text() == before


def test_an_untrusted_projects_packages_stay_ignored(
    scripted: Scripted,  # noqa: F811
    tmp_path: Path,
) -> None:
    pack = make_package(tmp_path / "pack")
    config_dir = scripted.project / ".knightcode"
    config_dir.mkdir()
    (config_dir / "settings.json").write_text(json.dumps({"packages": [str(pack)]}))
    system, user = prompt(scripted, "/y a")
    assert "<name>x</name>" not in system and user == "/y a"
    assert "skill:x" not in listing(scripted)

    assert run("trust", cwd=scripted.project).returncode == 0
    system, user = prompt(scripted, "/y a")
    assert "<name>x</name>" in system and user == "Why a, not ?"
    assert listing(scripted)["skill:x"] == ("loaded", str(pack), "skills/x")

    # Editing the project's entry with -l keeps the trust the user gave.
    done = config(scripted, "disable", str(pack), "skills/x", "-l")
    assert done.returncode == 0, done.stderr
    assert json.loads((config_dir / "settings.json").read_text())["packages"] == [
        {"source": str(pack), "skills": ["-skills/x"]}
    ]
    system, _ = prompt(scripted, "hello")
    assert "<name>x</name>" not in system and "<name>other</name>" in system


def test_a_start_without_packages_imports_no_package_code(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from knightcode._config.loading import Settings\n"
        "from knightcode._resources.discovery import discover_resources, settings_sources\n"
        "cwd = Path.cwd()\n"
        "settings = Settings.load(cwd, cwd, project_trusted=True)\n"
        "discover_resources(settings_sources(cwd, cwd, settings, trusted=True))\n"
        "print(sorted(name for name in sys.modules if name.startswith('knightcode._packages')))\n"
    )
    env = {**os.environ, "KNIGHTCODE_CODING_AGENT_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.stdout == "['knightcode._packages']\n", done.stderr
    (tmp_path / "settings.json").write_text(json.dumps({"packages": [str(tmp_path)]}))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert "knightcode._packages.resources" in done.stdout, done.stderr


def test_disabling_a_package_extension_keeps_it_from_loading(resource_repo: Path) -> None:
    canary = resource_repo.parent / "repo.imported"
    assert run("install", str(resource_repo)).returncode == 0
    done = run("config", "disable", str(resource_repo), "extensions/greet")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"disabled extensions/greet.py of {resource_repo} ")
    rows = {row["name"]: row for row in json.loads(run("config", "list", "--json").stdout)}
    greet = rows[f"ext:{resource_repo / 'extensions' / 'greet.py'}"]
    assert (greet["status"], greet["enabled"], greet["resource"]) == (
        "disabled",
        False,
        "extensions/greet.py",
    )
    assert not canary.exists()
    assert run("config", "enable", str(resource_repo), "extensions/greet.py").returncode == 0
    assert run("config", "list", "--json").returncode == 0
    assert canary.read_text() == "imported"


def test_a_user_edit_warns_when_the_trusted_projects_entry_wins(
    agent_dir: Path, project_dir: Path, resource_repo: Path
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"packages": [str(resource_repo)]}))
    (project_dir / ".knightcode").mkdir()
    (project_dir / ".knightcode" / "settings.json").write_text(
        json.dumps({"packages": [str(resource_repo)]})
    )
    assert run("trust").returncode == 0
    done = run("config", "disable", str(resource_repo), "skills/hello")
    assert done.returncode == 0, done.stderr
    assert "its entry is the one used here; add -l" in done.stderr
    rows = {
        row["name"]: row["status"] for row in json.loads(run("config", "list", "--json").stdout)
    }
    assert rows["skill:hello"] == "loaded"  # the project's entry has no filter
    assert run("config", "disable", "-l", str(resource_repo), "skills/hello").returncode == 0
    rows = {
        row["name"]: row["status"] for row in json.loads(run("config", "list", "--json").stdout)
    }
    assert rows["skill:hello"] == "disabled"


async def test_rpc_get_commands_names_the_package(rpc: Rpc, tmp_path: Path) -> None:  # noqa: F811
    pack = make_package(tmp_path / "pack")
    settings = rpc.agent_dir / "settings.json"
    data = json.loads(settings.read_text()) if settings.exists() else {}
    settings.write_text(json.dumps({**data, "packages": [str(pack)]}))
    client = await rpc.start()
    commands = await client.get_commands()
    assert {
        "name": "y",
        "description": "Ask why",
        "source": "prompt",
        "location": f"package:{pack}",
        "path": str(pack / "prompts" / "y.md"),
    } in commands
    assert {
        "name": "skill:x",
        "description": "The x skill.",
        "source": "skill",
        "location": f"package:{pack}",
        "path": str(pack / "skills" / "x" / "SKILL.md"),
    } in commands
