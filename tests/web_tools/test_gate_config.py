"""tools.json's ``gate`` section, the mtime cache that keeps the gate free when it is off, the
built-in patterns, and the redaction of what the gate records."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from knightcode_builtins.web_tools.config import (
    ToolsConfigError,
    describe_config,
    load_tools_config,
    tools_json_path,
    write_tools_json,
)
from knightcode_builtins.web_tools.gate_config import (
    CONTENT_QUESTION,
    DEFAULT_PATTERNS,
    ContentGate,
    GateConfig,
    GatePattern,
    question_for,
)
from knightcode_builtins.web_tools.gate_state import GateUnreadable, gate_of
from knightcode_builtins.web_tools.redact import excerpt, redact


def gate_from(agent_dir: Path, gate: object) -> GateConfig:
    write_tools_json(tools_json_path(agent_dir), {"gate": gate})
    return load_tools_config(agent_dir).gate


def test_defaults(agent_dir: Path) -> None:
    gate = gate_from(agent_dir, {})
    assert gate == GateConfig()
    assert not gate.enabled and gate.patterns is None
    assert gate.call_patterns == DEFAULT_PATTERNS
    assert gate.content == ContentGate(("web_fetch", "web_search"), None)
    assert (gate.allow_below, gate.block_above) == (0.2, 0.8)
    assert (gate.max_chars, gate.chunk_chars, gate.timeout, gate.ask_timeout) == (
        16_000,
        4_000,
        30.0,
        120.0,
    )


def test_every_key(agent_dir: Path) -> None:
    gate = gate_from(
        agent_dir,
        {
            "enabled": True,
            "classifier": "llama.cpp/tiny-decision",
            "thresholds": {"allow": 0.1, "block": 0.9},
            "patterns": [
                {"id": "push", "tool": "bash", "match": r"git\s+push"},
                {"tool": "write", "question": "Outside the project?"},
            ],
            "content": {"tools": ["web_fetch"], "question": "Injection?"},
            "maxChars": 5000,
            "chunkChars": 9000,
            "timeout": 5,
            "askTimeout": 30,
            "temperature": 2,
        },
    )
    assert gate == GateConfig(
        enabled=True,
        classifier="llama.cpp/tiny-decision",
        patterns=(
            GatePattern("bash", r"git\s+push", None, "push"),
            GatePattern("write", None, "Outside the project?"),
        ),
        allow_below=0.1,
        block_above=0.9,
        content=ContentGate(("web_fetch",), "Injection?"),
        max_chars=5000,
        chunk_chars=5000,  # never more than maxChars
        timeout=5.0,
        ask_timeout=30.0,
        temperature=2.0,
    )
    # A pattern without a question gets its tool's built-in one.
    assert question_for(gate.call_patterns[0]) == DEFAULT_PATTERNS[0].question


def test_an_empty_pattern_list_checks_no_call(agent_dir: Path) -> None:
    gate = gate_from(agent_dir, {"patterns": [], "content": {"tools": []}})
    assert gate.call_patterns == () and gate.content.tools == ()


@pytest.mark.parametrize(
    ("gate", "error"),
    [
        ({"patterns": [{"tool": "bash", "match": "(rm"}]}, "gate.patterns[0].match: not a regular"),
        ({"patterns": [{"match": "x"}]}, "gate.patterns[0].tool: is required"),
        ({"classifier": "tiny-chat"}, "gate.classifier: must be a classifier model as provider/id"),
        ({"thresholds": {"block": 2}}, "gate.thresholds.block: must be between 0 and 1 (got 2)"),
        ({"content": {"tools": "web_fetch"}}, "gate.content.tools: must be a list of strings"),
        ({"chunkChars": 10}, "gate.chunkChars: must be between 100 and 10000000 (got 10)"),
        ({"askTimeout": 0}, "gate.askTimeout: must be between 1 and 86400 (got 0)"),
        ({"enabled": "yes"}, "gate.enabled: must be true or false"),
    ],
)
def test_errors_name_the_key(agent_dir: Path, gate: object, error: str) -> None:
    with pytest.raises(ToolsConfigError) as caught:
        gate_from(agent_dir, gate)
    assert str(caught.value).startswith(f"{tools_json_path(agent_dir)}: {error}")


def test_tools_show_lists_the_patterns_in_force(agent_dir: Path) -> None:
    shown = describe_config(load_tools_config(agent_dir))["gate"]
    assert isinstance(shown, dict)
    assert shown["patternsSource"] == "built-in"
    assert [p["id"] for p in shown["patterns"]] == [
        "bash-destructive",
        "fetch-secret",
        "search-secret",
    ]
    assert shown["content"] == {"tools": ["web_fetch", "web_search"], "question": CONTENT_QUESTION}


# --- the built-in patterns --------------------------------------------------------------------


def matches(tool: str, arguments: dict[str, object]) -> bool:
    text = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    return any(
        p.tool == tool and p.match is not None and re.search(p.match, text)
        for p in DEFAULT_PATTERNS
    )


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf ~/old",
        "cd /tmp && rmdir x",
        "echo data > /etc/hosts",
        "cat a >> b",
        "git push --force origin main",
        "git reset --hard HEAD~3",
        "find / -name '*.log' -delete",
        "sed -i s/a/b/ ../other/file",
        "dd if=/dev/zero of=/dev/sda",
        "mv build /srv/www",
        "docker system prune -af",
    ],
)
def test_destructive_commands_are_checked(command: str) -> None:
    assert matches("bash", {"command": command})


@pytest.mark.parametrize(
    "command",
    ["ls -la", "git status", "grep -rn TODO src", "pytest -q 2>&1 | tail", "cat README.md"],
)
def test_reading_commands_are_not(command: str) -> None:
    assert not matches("bash", {"command": command})


@pytest.mark.parametrize(
    ("url", "checked"),
    [
        ("https://example.com/docs/page", False),
        ("https://example.com/search?q=python", True),
        ("https://user:pw@example.com/", True),
        ("https://api.example.com/hooks/0123456789abcdef0123456789abcdef", True),
    ],
)
def test_urls_that_could_carry_a_secret_are_checked(url: str, checked: bool) -> None:
    assert matches("web_fetch", {"url": url}) is checked


# --- the cache --------------------------------------------------------------------------------


def test_gate_of_reads_the_file_again_only_when_it_changes(agent_dir: Path) -> None:
    path = tools_json_path(agent_dir)
    assert gate_of(agent_dir) is None  # no file
    write_tools_json(path, {"gate": {"enabled": True, "classifier": "a/b"}})
    first = gate_of(agent_dir)
    assert first is not None and first.classifier == "a/b"
    assert gate_of(agent_dir) is first  # not parsed again
    write_tools_json(path, {"gate": {"enabled": True, "classifier": "c/d"}})
    second = gate_of(agent_dir)
    assert second is not None and second.classifier == "c/d"
    # An edit in place (same inode) is seen too.
    path.write_text(json.dumps({"gate": {"enabled": False}}))
    os.utime(path, ns=(1, 1))  # whatever the clock's granularity
    assert gate_of(agent_dir) is None


def test_other_sections_do_not_matter_to_the_gate(agent_dir: Path) -> None:
    write_tools_json(
        tools_json_path(agent_dir),
        {"search": {"count": 0}, "gate": {"enabled": True, "classifier": "a/b"}},
    )
    with pytest.raises(ToolsConfigError):
        load_tools_config(agent_dir)  # the web tools report the bad count…
    gate = gate_of(agent_dir)  # …the gate still works
    assert gate is not None and gate.classifier == "a/b"


@pytest.mark.parametrize("text", ["{", '{"gate": {"enabled": "yes"}}', "[]"])
def test_unreadable_fails_closed(agent_dir: Path, text: str) -> None:
    tools_json_path(agent_dir).write_text(text)
    with pytest.raises(GateUnreadable, match=r"so it blocks every tool call until tools\.json"):
        gate_of(agent_dir)


# --- redaction --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "redacted"),
    [
        (
            "https://u:pw@example.com/a?token=abc&x=1#k=v",
            "https://***@example.com/a?token=***&x=***#k=***",
        ),
        ("export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstu12345", "export GITHUB_TOKEN=***"),
        ('curl -H "Authorization: Bearer abc.def.ghi.jkl"', 'curl -H "Authorization: *** ***"'),
        ("mysql --password=hunter2 db", "mysql --password=*** db"),
        ("aws s3 ls AKIAIOSFODNN7EXAMPLE", "aws s3 ls ***"),
        ("key sk-proj-abcdefghijklmnop", "key ***"),
        ("/v1/keys/3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c/data", "/v1/keys/***/data"),
        ("rm -rf /usr/local/lib/python3.11/site-packages", None),
    ],
)
def test_redact(raw: str, redacted: str | None) -> None:
    assert redact(raw) == (raw if redacted is None else redacted)


def test_excerpt_is_one_short_line() -> None:
    text = excerpt("echo one\n  echo two " + "x" * 300, limit=40)
    assert text == "echo one echo two " + "x" * 21 + "…" and len(text) == 40
