"""Project trust: fingerprints, the trust store, and the decision for one run."""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knightcode._config.trust import TrustStatus, TrustStore, fingerprint, resolve_trust
from knightcode._errors import SettingsError

WriteJson = Callable[[Path, Any], Path]


def put(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def config(project_dir: Path) -> Path:
    return project_dir / ".knightcode"


def test_fingerprint_covers_exactly_the_trust_relevant_files(config: Path) -> None:
    for name in (
        "settings.json",
        "mcp.json",
        "SYSTEM.md",
        "APPEND_SYSTEM.md",
        "README.md",
        "extensions/a.py",
        "extensions/pkg/__init__.py",
        "skills/x/y/SKILL.md",
        "prompts/p.md",
        "themes/t.json",
        "sessions/s.jsonl",
        "other/z.py",
    ):
        put(config / name, name)
    put(config / "extensions" / "__pycache__" / "a.cpython-311.pyc")
    put(config / "extensions" / "pkg" / "stale.pyc")
    prints = fingerprint(config)
    assert list(prints) == [
        "APPEND_SYSTEM.md",
        "SYSTEM.md",
        "extensions/a.py",
        "extensions/pkg/__init__.py",
        "mcp.json",
        "prompts/p.md",
        "settings.json",
        "skills/x/y/SKILL.md",
        "themes/t.json",
    ]
    assert prints["settings.json"] == hashlib.sha256(b"settings.json").hexdigest()


def test_nothing_to_trust_is_state_none(project_dir: Path, agent_dir: Path, config: Path) -> None:
    store = TrustStore(agent_dir)
    assert store.status(project_dir) == TrustStatus("none")
    put(config / "sessions" / "s.jsonl")  # not trust-relevant
    decision = resolve_trust(agent_dir, project_dir, approve=False)
    assert (decision.trusted, decision.status.state, decision.notice) == (False, "none", None)


def test_untrusted_project_is_ignored_with_a_notice(
    project_dir: Path, agent_dir: Path, config: Path
) -> None:
    put(config / "settings.json", "{}")
    decision = resolve_trust(agent_dir, project_dir, approve=False)
    assert decision.trusted is False
    assert decision.status == TrustStatus("untrusted")
    assert decision.notice == (
        f"project settings in {config} are not trusted and were ignored; "
        "run 'knightcode trust' to use them"
    )


def test_trust_is_recorded_with_mode_0600(project_dir: Path, agent_dir: Path, config: Path) -> None:
    put(config / "extensions" / "tool.py")
    store = TrustStore(agent_dir)
    store.trust(project_dir)
    assert store.status(project_dir) == TrustStatus("trusted")
    trust_file = agent_dir / "trust.json"
    assert stat.S_IMODE(trust_file.stat().st_mode) == 0o600
    record = json.loads(trust_file.read_text())["projects"][str(project_dir.resolve())]
    assert record["files"] == fingerprint(config)
    decision = resolve_trust(agent_dir, project_dir, approve=False)
    assert (decision.trusted, decision.notice) == (True, None)


def test_trust_belongs_to_one_directory(project_dir: Path, agent_dir: Path, tmp_path: Path) -> None:
    put(project_dir / ".knightcode" / "settings.json")
    other = tmp_path / "other"
    put(other / ".knightcode" / "settings.json")
    TrustStore(agent_dir).trust(project_dir)
    assert TrustStore(agent_dir).status(other).state == "untrusted"


def test_changes_withdraw_trust_and_are_listed(
    project_dir: Path, agent_dir: Path, config: Path
) -> None:
    put(config / "settings.json", "{}")
    put(config / "mcp.json", "{}")
    put(config / "skills" / "a" / "SKILL.md", "one")
    store = TrustStore(agent_dir)
    store.trust(project_dir)
    put(config / "settings.json", '{"extensions": ["x.py"]}')
    (config / "mcp.json").unlink()
    put(config / "extensions" / "new.py")
    put(config / "skills" / "a" / "SKILL.md", "two")
    expected = [
        "extensions/new.py (added)",
        "mcp.json (removed)",
        "settings.json (modified)",
        "skills/a/SKILL.md (modified)",
    ]
    assert store.status(project_dir) == TrustStatus("changed", expected)
    decision = resolve_trust(agent_dir, project_dir, approve=False)
    assert decision.trusted is False
    assert decision.notice == (
        "project trust withdrawn: .knightcode files changed since you trusted them "
        f"({', '.join(expected)}); run 'knightcode trust' to trust them again"
    )
    store.trust(project_dir)
    assert store.status(project_dir).state == "trusted"


def test_bytecode_does_not_withdraw_trust(project_dir: Path, agent_dir: Path, config: Path) -> None:
    put(config / "extensions" / "pkg" / "__init__.py")
    store = TrustStore(agent_dir)
    store.trust(project_dir)
    put(config / "extensions" / "__pycache__" / "x.cpython-311.pyc")
    put(config / "extensions" / "pkg" / "__pycache__" / "__init__.cpython-311.pyc")
    put(config / "extensions" / "pkg" / "mod.pyc")
    assert store.status(project_dir).state == "trusted"


def test_symlinked_files_are_hashed_by_content(
    project_dir: Path, agent_dir: Path, config: Path, tmp_path: Path
) -> None:
    target = put(tmp_path / "outside" / "tool.py", "v1")
    (config / "extensions").mkdir(parents=True)
    (config / "extensions" / "tool.py").symlink_to(target)
    store = TrustStore(agent_dir)
    store.trust(project_dir)
    target.write_text("v2")
    assert store.status(project_dir) == TrustStatus("changed", ["extensions/tool.py (modified)"])


def test_symlinked_directories_are_followed_so_edits_behind_them_withdraw_trust(
    project_dir: Path, agent_dir: Path, config: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    put(outside / "a.py", "v1")
    (config / "extensions").mkdir(parents=True)
    (config / "extensions" / "linked").symlink_to(outside, target_is_directory=True)
    assert list(fingerprint(config)) == ["extensions/linked/a.py"]
    store = TrustStore(agent_dir)
    store.trust(project_dir)
    put(outside / "a.py", "v2")
    put(outside / "b.py")
    assert store.status(project_dir).changed == [
        "extensions/linked/a.py (modified)",
        "extensions/linked/b.py (added)",
    ]


def test_a_symlink_cycle_is_walked_once(project_dir: Path, config: Path) -> None:
    put(config / "extensions" / "pkg" / "a.py", "x")
    (config / "extensions" / "pkg" / "loop").symlink_to(
        config / "extensions", target_is_directory=True
    )
    assert list(fingerprint(config)) == ["extensions/pkg/a.py"]


def test_approve_trusts_this_run_without_recording(
    project_dir: Path, agent_dir: Path, config: Path
) -> None:
    put(config / "settings.json")
    decision = resolve_trust(agent_dir, project_dir, approve=True)
    assert (decision.trusted, decision.status.state, decision.notice) == (True, "untrusted", None)
    assert not (agent_dir / "trust.json").exists()
    assert TrustStore(agent_dir).status(project_dir).state == "untrusted"


def test_revoke(project_dir: Path, agent_dir: Path, config: Path) -> None:
    put(config / "settings.json")
    store = TrustStore(agent_dir)
    assert store.revoke(project_dir) is False
    store.trust(project_dir)
    assert store.revoke(project_dir) is True
    assert store.status(project_dir).state == "untrusted"
    assert json.loads((agent_dir / "trust.json").read_text())["projects"] == {}


def test_default_project_trust_always_from_global_settings(
    project_dir: Path, agent_dir: Path, config: Path, write_json: WriteJson, global_settings: Path
) -> None:
    put(config / "settings.json")
    write_json(global_settings, {"defaultProjectTrust": "always"})
    decision = resolve_trust(agent_dir, project_dir, approve=False)
    assert (decision.trusted, decision.notice) == (True, None)
    assert not (agent_dir / "trust.json").exists()


@pytest.mark.parametrize("value", ["ask", "never"])
def test_default_project_trust_ask_or_never_does_not_trust(
    project_dir: Path,
    agent_dir: Path,
    config: Path,
    write_json: WriteJson,
    global_settings: Path,
    value: str,
) -> None:
    put(config / "settings.json")
    write_json(global_settings, {"defaultProjectTrust": value})
    assert resolve_trust(agent_dir, project_dir, approve=False).trusted is False


def test_a_project_cannot_vouch_for_itself(
    project_dir: Path, agent_dir: Path, write_json: WriteJson, project_settings: Path
) -> None:
    write_json(project_settings, {"defaultProjectTrust": "always"})
    decision = resolve_trust(agent_dir, project_dir, approve=False)
    assert decision.trusted is False
    assert decision.notice is not None


def test_invalid_default_project_trust(
    project_dir: Path, agent_dir: Path, config: Path, write_json: WriteJson, global_settings: Path
) -> None:
    put(config / "settings.json")
    write_json(global_settings, {"defaultProjectTrust": "yes"})
    with pytest.raises(SettingsError) as info:
        resolve_trust(agent_dir, project_dir, approve=False)
    assert str(info.value) == (
        f"settings error in {global_settings}: defaultProjectTrust: "
        'expected one of "ask", "always", "never", got "yes"'
    )


def test_damaged_trust_record_trusts_nothing(
    project_dir: Path, agent_dir: Path, config: Path, write_json: WriteJson
) -> None:
    put(config / "settings.json")
    key = str(project_dir.resolve())
    write_json(agent_dir / "trust.json", {"projects": {key: {"files": "all"}}})
    assert TrustStore(agent_dir).status(project_dir).state == "untrusted"


def test_extensions_named_in_settings_are_fingerprinted_wherever_they_live(
    project_dir: Path, config: Path, tmp_path: Path
) -> None:
    beside = put(config / "c.py", "c")
    parent = put(project_dir / "tools" / "ext.py", "ext")
    absolute = put(tmp_path / "elsewhere" / "abs.py", "abs")
    put(project_dir / "lib" / "pkg" / "__init__.py", "init")
    put(project_dir / "lib" / "pkg" / "data" / "table.json", "{}")
    put(project_dir / "lib" / "pkg" / "__pycache__" / "x.cpython-311.pyc", "bytecode")
    put(project_dir / "lib" / "loose.py", "loose")
    put(project_dir / "lib" / "notes.txt", "not imported")
    put(project_dir / "lib" / "_private.py", "not imported")
    entries = [
        "c.py",
        "../tools/ext.py",
        str(absolute),
        "+../lib",
        "-builtin:compaction",
        "gone.py",
    ]
    put(config / "settings.json", json.dumps({"extensions": entries}))
    lib = (project_dir / "lib").resolve()
    assert list(fingerprint(config)) == sorted(
        [
            "c.py",
            "settings.json",
            str(parent.resolve()),
            str(absolute.resolve()),
            str(lib / "loose.py"),
            str(lib / "pkg" / "__init__.py"),
            str(lib / "pkg" / "data" / "table.json"),
        ]
    )
    assert fingerprint(config)["c.py"] == hashlib.sha256(beside.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "text",
    ["{not json", '{"extensions": "x.py"}', '{"extensions": [5]}', '{"a":' * 100_000 + "1"],
)
def test_unusable_extension_entries_name_nothing(config: Path, text: str) -> None:
    put(config / "x.py")
    put(config / "settings.json", text)
    assert list(fingerprint(config)) == ["settings.json"]


def test_an_edit_to_a_named_extension_withdraws_trust_and_names_the_file(
    project_dir: Path, agent_dir: Path, config: Path
) -> None:
    ext = put(project_dir / "tools" / "ext.py", "v1")
    put(config / "settings.json", json.dumps({"extensions": ["../tools/ext.py"]}))
    store = TrustStore(agent_dir)
    store.trust(project_dir)
    ext.write_text("v2")
    assert store.status(project_dir) == TrustStatus("changed", [f"{ext.resolve()} (modified)"])
