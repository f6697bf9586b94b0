"""Skills and prompt templates end to end: the real executable against the scripted model.

What reaches the model is read off the scripted server's requests: the system prompt (the
``<available_skills>`` list) and the user message (``/skill:name`` and ``/template`` expanded).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

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
