"""Turning ``/skill:name args`` and ``/template args`` into the prompt they stand for.

Done in :meth:`AgentSession.prompt` (after the ``input`` hook, so a plugin sees what the user
typed), which makes every mode — interactive, ``-p``, JSON, RPC ``prompt`` — expand alike.
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import quoteattr

from knightcode._resources.discovery import ResourceSet
from knightcode._resources.frontmatter import read_frontmatter
from knightcode._resources.templates import expand_template, split_command

SKILL_PREFIX = "/skill:"


def skill_block(name: str, path: Path, args: str) -> str | None:
    """A skill's body wrapped for the model, then the user's ``args``; None when the file
    cannot be read any more (it changed since start-up).
    """
    try:
        body = read_frontmatter(path).body
    except OSError:
        return None
    block = (
        f"<skill name={quoteattr(name)} location={quoteattr(path.as_posix())}>\n"
        f"References are relative to {path.parent.as_posix()}.\n\n{body}\n</skill>"
    )
    return f"{block}\n\n{args}" if args.strip() else block


def expand_input(text: str, resources: ResourceSet | None) -> str:
    """The prompt ``text`` stands for: a skill or template expanded, anything else unchanged."""
    if resources is None or not text.startswith("/"):
        return text
    name, args = split_command(text)
    if name.startswith(SKILL_PREFIX[1:]):
        if not resources.skill_commands:
            return text
        skill = resources.skill(name[len(SKILL_PREFIX) - 1 :])
        if skill is None:
            return text
        expanded = skill_block(skill.name, skill.path, args.strip())
        return text if expanded is None else expanded
    expanded_template = expand_template(text, resources.templates)
    return text if expanded_template is None else expanded_template
