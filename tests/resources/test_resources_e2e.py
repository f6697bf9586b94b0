"""Skills and prompt templates end to end: the real executable against the scripted model.

What reaches the model is read off the scripted server's requests: the system prompt (the
``<available_skills>`` list) and the user message (``/skill:name`` and ``/template`` expanded).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from knightcode.testing import text_reply
from tests.agent.conftest import MODEL, PROVIDER, Scripted, scripted  # noqa: F401 (the fixture)


def write_skill(root: Path, name: str, description: str, body: str = "Do it well.") -> Path:
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n")
    return path


def write_template(root: Path, name: str, text: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{name}.md"
    path.write_text(text)
    return path


def system_text(request_body: dict[str, Any]) -> str:
    messages = request_body["messages"]
    assert messages[0]["role"] == "system"
    content = messages[0]["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def user_texts(request_body: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for message in request_body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            found.append(content)
        else:
            found.append("".join(part.get("text", "") for part in content))
    return found


def test_system_prompt_lists_skills_when_read_is_active(scripted: Scripted) -> None:  # noqa: F811
    skill = write_skill(scripted.agent_dir / "skills", "pdf-tools", "Extract text & tables")
    scripted.server.add(text_reply("ok"))
    result = scripted.run("-p", "hello")
    assert result.returncode == 0, result.stderr
    system = system_text(scripted.server.requests[0].body)
    assert "<available_skills>" in system
    assert "<name>pdf-tools</name>" in system
    assert "<description>Extract text &amp; tables</description>" in system
    assert f"<location>{skill.as_posix()}</location>" in system


def test_no_skills_block_without_read(scripted: Scripted) -> None:  # noqa: F811
    write_skill(scripted.agent_dir / "skills", "pdf-tools", "Extract text")
    scripted.server.add(text_reply("ok"))
    result = scripted.run("--tools", "bash", "-p", "hello")
    assert result.returncode == 0, result.stderr
    assert "<available_skills>" not in system_text(scripted.server.requests[0].body)


REVIEW = "---\ndescription: Review code\nargument-hint: FILE [FOCUS...]\n---\n" + (
    "first=$1 second=$2 all=$@ args=$ARGUMENTS rest=${@:2} one=${@:2:1} none=$9."
)
EXPANDED = (
    "first=a.py second=the parser all=a.py the parser tests args=a.py the parser tests "
    "rest=the parser tests one=the parser none=."
)
TYPED = '/review a.py "the parser" tests'


def test_template_and_skill_in_print_mode(scripted: Scripted) -> None:  # noqa: F811
    write_template(scripted.agent_dir / "prompts", "review", REVIEW)
    skill = write_skill(scripted.agent_dir / "skills", "pdf-tools", "PDFs", "Use pdftotext.")
    scripted.server.add(text_reply("one"), text_reply("two"))
    result = scripted.run("-p", TYPED, "/skill:pdf-tools convert a.pdf")
    assert result.returncode == 0, result.stderr
    first, second = (user_texts(r.body)[-1] for r in scripted.server.requests)
    assert first == EXPANDED
    assert second.startswith(f'<skill name="pdf-tools" location="{skill.as_posix()}">')
    assert "Use pdftotext.\n</skill>\n\nconvert a.pdf" in second


def test_enable_skill_commands_false_sends_the_text_unexpanded(scripted: Scripted) -> None:  # noqa: F811
    write_skill(scripted.agent_dir / "skills", "pdf-tools", "PDFs", "Use pdftotext.")
    (scripted.agent_dir / "settings.json").write_text(json.dumps({"enableSkillCommands": False}))
    scripted.server.add(text_reply("ok"))
    result = scripted.run("-p", "/skill:pdf-tools convert a.pdf")
    assert result.returncode == 0, result.stderr
    body = scripted.server.requests[0].body
    assert user_texts(body)[-1] == "/skill:pdf-tools convert a.pdf"
    assert "pdf-tools" in system_text(body)  # still listed for the model to load itself


def test_template_in_json_mode_is_recorded_expanded(scripted: Scripted) -> None:  # noqa: F811
    write_template(scripted.agent_dir / "prompts", "review", REVIEW)
    scripted.server.add(text_reply("done"))
    records, result = scripted.run_json(TYPED)
    assert result.returncode == 0, result.stderr
    assert user_texts(scripted.server.requests[0].body)[-1] == EXPANDED
    users = [
        r["message"]
        for r in records
        if r["type"] == "message_end" and r["message"]["role"] == "user"
    ]
    assert users and EXPANDED in json.dumps(users[0])


def test_unknown_slash_text_goes_to_the_model_unchanged(scripted: Scripted) -> None:  # noqa: F811
    scripted.server.add(text_reply("ok"))
    result = scripted.run("-p", "/nothing-here x")
    assert result.returncode == 0, result.stderr
    assert user_texts(scripted.server.requests[0].body)[-1] == "/nothing-here x"


def test_skill_flags(scripted: Scripted, tmp_path: Path) -> None:  # noqa: F811
    write_skill(scripted.agent_dir / "skills", "from-agent-dir", "Discovered.")
    extra = write_skill(tmp_path / "elsewhere", "from-flag", "Given on the command line.")
    scripted.server.add(text_reply("ok"), text_reply("ok"))
    assert scripted.run("--skill", str(extra.parent), "-p", "hi").returncode == 0
    system = system_text(scripted.server.requests[0].body)
    assert "<name>from-agent-dir</name>" in system and "<name>from-flag</name>" in system
    result = scripted.run("--no-skills", "--skill", str(extra), "-p", "hi")
    assert result.returncode == 0, result.stderr
    system = system_text(scripted.server.requests[1].body)
    assert "<name>from-agent-dir</name>" not in system and "<name>from-flag</name>" in system


def test_skill_warnings_reach_stderr(scripted: Scripted) -> None:  # noqa: F811
    write_skill(scripted.agent_dir / "skills", "Bad_Name", "Still loads.")
    scripted.server.add(text_reply("ok"))
    result = scripted.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "invalid characters" in result.stderr
    assert "<name>Bad_Name</name>" in system_text(scripted.server.requests[0].body)


def test_untrusted_project_resources_are_ignored_until_trusted(scripted: Scripted) -> None:  # noqa: F811
    project_dir = scripted.project / ".knightcode"
    write_skill(project_dir / "skills", "project-skill", "From the project.")
    write_template(project_dir / "prompts", "ship", "Ship it: $@")
    scripted.server.add(text_reply("ok"), text_reply("ok"))
    result = scripted.run("-p", "/ship now")
    assert result.returncode == 0, result.stderr
    assert "not trusted" in result.stderr and "knightcode trust" in result.stderr
    assert "project-skill" not in system_text(scripted.server.requests[0].body)
    assert user_texts(scripted.server.requests[0].body)[-1] == "/ship now"
    trust = subprocess.run(
        [sys.executable, "-m", "knightcode", "trust"],
        cwd=scripted.project,
        env=scripted.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert trust.returncode == 0, trust.stderr
    result = scripted.run("-p", "/ship now")
    assert result.returncode == 0, result.stderr
    assert "not trusted" not in result.stderr
    assert "<name>project-skill</name>" in system_text(scripted.server.requests[1].body)
    assert user_texts(scripted.server.requests[1].body)[-1] == "Ship it: now"


def test_plugin_resources_discover(scripted: Scripted, tmp_path: Path) -> None:  # noqa: F811
    resources = tmp_path / "res"
    write_skill(resources / "skills", "plugin-skill", "From a plugin.")
    write_template(resources / "prompts", "hello", "Hello $1 from a plugin")
    plugin = tmp_path / "res_plugin.py"
    plugin.write_text(
        "from knightcode import Resources, hookimpl\n\n"
        "@hookimpl\n"
        "def resources_discover(cwd, reason, ctx):\n"
        f"    base = {str(resources)!r}\n"
        "    assert reason == 'startup'\n"
        "    return Resources(skill_paths=(base + '/skills',), prompt_paths=(base + '/prompts',))\n"
    )
    scripted.server.add(text_reply("ok"))
    result = scripted.run("-e", str(plugin), "-p", "/hello world")
    assert result.returncode == 0, result.stderr
    body = scripted.server.requests[0].body
    assert "<name>plugin-skill</name>" in system_text(body)
    assert user_texts(body)[-1] == "Hello world from a plugin"


def test_config_list_shows_skills_and_templates(scripted: Scripted) -> None:  # noqa: F811
    skill = write_skill(scripted.agent_dir / "skills", "pdf-tools", "PDFs")
    template = write_template(scripted.agent_dir / "prompts", "review", REVIEW)
    write_skill(scripted.agent_dir / "skills", "no-description", "")

    def config_list(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "knightcode", "config", "list", *extra],
            cwd=scripted.project,
            env=scripted.env(KNIGHTCODE_LOAD_PLUGINS=""),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    listing = config_list("--json")
    assert listing.returncode == 0, listing.stderr
    rows = {(r["name"], r["kind"], r["source"]) for r in json.loads(listing.stdout)}
    assert ("skill:pdf-tools", "skill", str(skill)) in rows
    assert ("/review", "prompt", str(template)) in rows
    assert "description is required" in listing.stderr
    table = config_list()
    assert re.search(r"skill:pdf-tools\s+skill\s+loaded", table.stdout), table.stdout
    assert re.search(r"/review\s+prompt\s+loaded", table.stdout), table.stdout


def test_prompt_template_flags(scripted: Scripted, tmp_path: Path) -> None:  # noqa: F811
    """``--prompt-template PATH`` adds a file or folder; ``-np`` drops the discovered ones but
    keeps those."""
    write_template(scripted.agent_dir / "prompts", "review", REVIEW)
    extra = write_template(tmp_path / "extra", "ship", "Ship it: $1")
    scripted.server.add(text_reply("one"), text_reply("two"), text_reply("three"))
    assert scripted.run("--prompt-template", str(extra), "-p", "/ship v2").returncode == 0
    assert user_texts(scripted.server.requests[-1].body)[-1] == "Ship it: v2"
    result = scripted.run("-np", "--prompt-template", str(extra.parent), "-p", TYPED, "/ship v3")
    assert result.returncode == 0, result.stderr
    first, second = (user_texts(r.body)[-1] for r in scripted.server.requests[1:])
    assert first == TYPED  # discovered template dropped: the text goes as typed
    assert second == "Ship it: v3"
    missing = scripted.run("--prompt-template", str(tmp_path / "nope.md"), "-np", "-p", "hi")
    assert "nope.md: prompt template path does not exist" in missing.stderr
