"""Trust covers everything that can run: each hole, probed through the real executable.

Every case plants code that writes a canary file if it ever runs, starts ``python -m knightcode``
against the scripted model server, and checks the canary (and what stderr and the model were
told). Each positive control shows the same set-up does run when it should, so a canary that
stays absent means something.
"""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from knightcode.testing import text_reply
from tests.agent.conftest import Scripted, scripted

__all__ = ["scripted"]  # the fixture, imported so this module can use it

MARKER_CODE = "open({canary!r}, 'a').write({text!r} + '\\n')\n"


def canary_code(canary: Path, text: str = "ran") -> str:
    """Python source that appends ``text`` to ``canary``; a plugin module needs no hooks."""
    return MARKER_CODE.format(canary=str(canary), text=text)


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def knightcode(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """A knightcode subcommand (``trust``) in the project, without the scripted model flags."""
    return subprocess.run(
        [sys.executable, "-m", "knightcode", *args],
        cwd=project,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def ask(scripted: Scripted, *args: str) -> subprocess.CompletedProcess[str]:
    """One print-mode prompt, answered ``ok`` by the scripted server."""
    scripted.server.add(text_reply("ok"))
    return scripted.run("-p", *args)


def trust(project: Path) -> None:
    result = knightcode(project, "trust")
    assert result.returncode == 0, result.stderr


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


# --- extensions named in the project's settings --------------------------------------------


@pytest.mark.parametrize("where", ["beside settings", "parent dir", "absolute", "package"])
def test_editing_an_extension_named_in_settings_withdraws_trust(
    scripted: Scripted, tmp_path: Path, where: str
) -> None:
    project = scripted.project
    canary = tmp_path / "canary"
    config = project / ".knightcode"
    if where == "beside settings":  # "c.py", as the docs show: relative to .knightcode/
        entry, ext = "c.py", config / "c.py"
    elif where == "parent dir":
        entry, ext = "../tools/ext.py", project / "tools" / "ext.py"
    elif where == "absolute":
        ext = tmp_path / "elsewhere" / "ext.py"
        entry = str(ext)
    else:  # a package: a file deep inside it counts too
        entry, ext = "../tools/pkg", project / "tools" / "pkg" / "impl.py"
        put(project / "tools" / "pkg" / "__init__.py", "from . import impl\n")
    put(ext, canary_code(canary, "v1"))
    put(config / "settings.json", json.dumps({"extensions": [entry]}))
    trust(project)

    result = ask(scripted, "hi")
    assert result.returncode == 0, result.stderr
    assert lines(canary) == ["v1"]  # trusted: the named extension runs

    put(ext, canary_code(canary, "v2"))
    result = ask(scripted, "hi")
    assert result.returncode == 0, result.stderr
    assert lines(canary) == ["v1"]  # the edited code did not run
    shown = "c.py" if where == "beside settings" else str(ext.resolve())
    withdrawn = "project trust withdrawn: .knightcode files changed since you trusted them"
    assert f"{withdrawn} ({shown} (modified))" in result.stderr


# --- bytecode -------------------------------------------------------------------------------


def _compile(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    py_compile.compile(
        str(source),
        cfile=str(target),
        doraise=True,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )


@pytest.mark.parametrize("case", ["cached helper", "package of __init__.pyc", "legacy pyc"])
def test_bytecode_in_a_trusted_project_never_runs(
    scripted: Scripted, tmp_path: Path, case: str
) -> None:
    project = scripted.project
    canary, loaded = tmp_path / "canary", tmp_path / "loaded"
    pkg = project / ".knightcode" / "extensions" / "pkg"
    put(
        pkg / "__init__.py",
        "from . import helper\n"
        "try:\n    from . import sub, local_overrides\nexcept ImportError:\n    pass\n"
        + canary_code(loaded, "pkg"),
    )
    put(pkg / "helper.py", "X = 1\n")
    trust(project)
    # Someone commits bytecode afterwards; bytecode is not fingerprinted, so trust stays.
    evil = put(tmp_path / "evil.py", canary_code(canary))
    if case == "cached helper":  # used instead of helper.py whatever the source says
        _compile(evil, Path(importlib.util.cache_from_source(str(pkg / "helper.py"))))
    elif case == "package of __init__.pyc":
        _compile(evil, pkg / "sub" / "__init__.pyc")
    else:
        _compile(evil, pkg / "local_overrides.pyc")

    result = ask(scripted, "hi")
    assert result.returncode == 0, result.stderr
    assert "not trusted" not in result.stderr and "withdrawn" not in result.stderr
    assert lines(loaded) == ["pkg"]  # the extension itself loaded...
    assert not canary.exists()  # ...and its bytecode did not run
    # ...nor was any written.
    assert not Path(importlib.util.cache_from_source(str(pkg / "__init__.py"))).exists()


def test_bytecode_beside_an_extension_that_extends_sys_path_never_runs(
    scripted: Scripted, tmp_path: Path
) -> None:
    project = scripted.project
    canary, loaded = tmp_path / "canary", tmp_path / "loaded"
    extensions = project / ".knightcode" / "extensions"
    put(
        extensions / "tool.py",
        "import os, sys\n"
        "sys.path.insert(0, os.path.join(os.path.dirname(__file__), '_lib'))\n"
        "import helper\n"
        "try:\n    import local_overrides\nexcept ImportError:\n    pass\n"
        + canary_code(loaded, "tool"),
    )
    put(extensions / "_lib" / "helper.py", "X = 1\n")
    trust(project)
    evil = put(tmp_path / "evil.py", canary_code(canary))
    _compile(evil, Path(importlib.util.cache_from_source(str(extensions / "_lib" / "helper.py"))))
    _compile(evil, extensions / "_lib" / "local_overrides.pyc")

    result = ask(scripted, "hi")
    assert result.returncode == 0, result.stderr
    assert lines(loaded) == ["tool"]
    assert not canary.exists()


# --- sessionDir -----------------------------------------------------------------------------


def test_an_untrusted_session_dir_is_not_continued(scripted: Scripted) -> None:
    project = scripted.project
    put(project / ".knightcode" / "settings.json", json.dumps({"sessionDir": ".sessions"}))
    trust(project)
    assert ask(scripted, "remember the planted words").returncode == 0
    (planted,) = (project / ".sessions").glob("*.jsonl")
    assert "planted words" in planted.read_text()
    # From here on the project is a stranger's repository carrying that session.
    assert knightcode(project, "trust", "--revoke").returncode == 0

    result = ask(scripted, "-c", "hello")
    assert result.returncode == 0, result.stderr
    assert "are not trusted and were ignored" in result.stderr
    assert "planted words" not in json.dumps(scripted.server.requests[-1].body)
    assert list((project / ".sessions").glob("*.jsonl")) == [planted]  # nothing written there

    trust(project)  # trusted again: -c continues the project's session as before
    result = ask(scripted, "-c", "hello again")
    assert result.returncode == 0, result.stderr
    assert "planted words" in json.dumps(scripted.server.requests[-1].body)


# --- context files --------------------------------------------------------------------------


def _system_prompt(scripted: Scripted) -> str:
    messages = scripted.server.requests[-1].body["messages"]
    return str(messages[0]["content"])


@pytest.mark.parametrize("case", ["world-writable file", "world-writable dir", "other owner"])
def test_context_files_others_can_write_are_skipped(
    scripted: Scripted, tmp_path: Path, case: str
) -> None:
    shared = tmp_path / "shared"
    cwd = shared / "work"
    cwd.mkdir(parents=True)
    mine = put(cwd / "AGENTS.md", "MINE-INSTRUCTIONS")
    planted = put(shared / "AGENTS.md", "PLANTED-INSTRUCTIONS")
    if case == "world-writable file":
        planted.chmod(0o666)
        why = "it is world-writable"
    elif case == "world-writable dir":
        shared.chmod(0o777)
        why = "its directory is world-writable, so anyone can replace it"
    else:
        if os.geteuid() != 0:
            pytest.skip("giving a file to another user needs root")
        os.chown(planted, 54321, 54321)
        why = "it is owned by another user (uid 54321)"
    scripted.project = cwd

    result = ask(scripted, "hi")
    assert result.returncode == 0, result.stderr
    prompt = _system_prompt(scripted)
    assert "MINE-INSTRUCTIONS" in prompt and str(mine) in prompt
    assert "PLANTED-INSTRUCTIONS" not in prompt
    assert f"knightcode: warning: context file {planted} skipped: {why}\n" in result.stderr

    # Sticky world-writable directories (like /tmp) are fine for the user's own files.
    shared.chmod(0o1777)
    planted.chmod(0o644)
    if case == "other owner":
        os.chown(planted, os.geteuid(), os.getegid())
    result = ask(scripted, "hi")
    assert "PLANTED-INSTRUCTIONS" in _system_prompt(scripted)
    assert "skipped" not in result.stderr


# --- the agent dir --------------------------------------------------------------------------


def test_a_relative_agent_dir_is_a_configuration_error(scripted: Scripted, tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    put(scripted.project / ".knightcode" / "extensions" / "evil.py", canary_code(canary))
    result = scripted.run("-p", "hi", KNIGHTCODE_CODING_AGENT_DIR=".knightcode")
    assert result.returncode == 2
    assert result.stderr == (
        "knightcode: error: KNIGHTCODE_CODING_AGENT_DIR must be an absolute path "
        "(or start with ~), got '.knightcode'\n"
    )
    assert not canary.exists()
    assert scripted.server.requests == []


# --- special files ---------------------------------------------------------------------------


def test_special_files_in_the_fingerprint_are_not_read(scripted: Scripted) -> None:
    """A FIFO with no writer in ``.knightcode/`` and ``/dev/zero`` named as an extension would
    block or never end if hashed: they are recorded by kind, trust works, and a FIFO planted
    afterwards withdraws it."""
    project = scripted.project
    config = project / ".knightcode"
    put(config / "settings.json", json.dumps({"extensions": ["/dev/zero"]}))
    os.mkfifo(config / "SYSTEM.md")
    trust(project)  # returns: neither special file is read
    (config / "prompts").mkdir()
    os.mkfifo(config / "prompts" / "p.md")
    result = ask(scripted, "hi")
    assert "Traceback" not in result.stderr
    assert "prompts/p.md (added)" in result.stderr
