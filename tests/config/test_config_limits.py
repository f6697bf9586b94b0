"""Configuration files that are damaged, huge, deeply nested or not files at all, and config
writes that fail: always one line on stderr and no traceback, through the real executable.

Reading problems are configuration errors (exit 2); a write that fails for lack of space or
permission is a runtime failure (exit 1), like knightcode's other I/O errors.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from knightcode._config.jsonfile import (
    MAX_CONFIG_BYTES,
    MAX_CONFIG_DEPTH,
    ConfigWriteError,
    _depth_exceeds,
    read_json_object,
    write_json_atomic,
)
from knightcode._errors import ConfigError

DEEP = '{"a":' * 5000 + "1" + "}" * 5000
MODELS = {
    "providers": {
        "local": {
            "baseUrl": "http://127.0.0.1:9/v1",
            "api": "openai-completions",
            "models": [{"id": "m", "contextWindow": 32000, "maxTokens": 4096}],
        }
    }
}


def knightcode(
    *args: str, prefix: Sequence[str] = (), env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "knightcode", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def one_error_line(result: subprocess.CompletedProcess[str], status: int, *parts: str) -> None:
    """The run failed with ``status`` and one error line holding ``parts`` (warnings aside)."""
    assert result.returncode == status, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert all(line.startswith("knightcode: ") for line in lines), result.stderr
    (error,) = [line for line in lines if line.startswith("knightcode: error: ")]
    for part in parts:
        assert part in error


def run_prompt() -> subprocess.CompletedProcess[str]:
    return knightcode("--model", "local/m", "-p", "hi")


@pytest.fixture
def models(agent_dir: Path) -> None:
    (agent_dir / "models.json").write_text(json.dumps(MODELS))


@pytest.mark.parametrize("name", ["settings.json", "models.json", "auth.json"])
def test_a_file_nested_5000_deep_is_one_line_and_exit_2(
    agent_dir: Path, models: None, name: str
) -> None:
    path = agent_dir / name
    path.write_text(DEEP)
    one_error_line(run_prompt(), 2, str(path), f"nested deeper than {MAX_CONFIG_DEPTH} levels")


def test_an_untrusted_projects_deep_settings_are_ignored_without_a_traceback(
    project_dir: Path, agent_dir: Path, models: None
) -> None:
    # An untrusted project's settings are not read at all (sessionDir included): the run goes
    # on to the model (which is not there: one attempt, no retries) with the usual notice.
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}))
    path = project_dir / ".knightcode" / "settings.json"
    path.parent.mkdir()
    path.write_text(DEEP)
    result = run_prompt()
    assert "Traceback" not in result.stderr
    assert "are not trusted and were ignored" in result.stderr
    assert "Connection error" in result.stderr


def test_a_trusted_projects_deep_settings_are_one_line_and_exit_2(
    project_dir: Path, models: None
) -> None:
    path = project_dir / ".knightcode" / "settings.json"
    path.parent.mkdir()
    path.write_text(DEEP)
    one_error_line(
        knightcode("--approve", "--model", "local/m", "-p", "hi"),
        2,
        str(path),
        "nested deeper than",
    )


def test_a_settings_file_over_the_size_limit_is_refused(agent_dir: Path, models: None) -> None:
    path = agent_dir / "settings.json"
    path.write_text('{"theme": "' + "x" * MAX_CONFIG_BYTES + '"}')
    one_error_line(run_prompt(), 2, str(path), "larger than 4 MiB")


def test_a_fifo_as_settings_does_not_hang(agent_dir: Path, models: None) -> None:
    path = agent_dir / "settings.json"
    os.mkfifo(path)  # no writer: opening it for reading would block forever
    one_error_line(run_prompt(), 2, str(path), "not a regular file")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"local": ', "invalid JSON at line 1 column 11"),
        ('{"local": 5}', 'local: expected {"type": "api_key"'),
        ('{"local": {"type": "api_key", "key": ""}}', "local.key: expected a non-empty string"),
        ("[1]", "must be a JSON object"),
    ],
)
def test_an_invalid_auth_json_exits_2_before_any_request(
    agent_dir: Path, models: None, text: str, expected: str
) -> None:
    # Before: the run started, its request failed with the auth.json message, exit status 1.
    (agent_dir / "auth.json").write_text(text)
    one_error_line(run_prompt(), 2, "auth.json", expected)


# --- failed writes ---------------------------------------------------------------------------


def _namespaces_work(*flags: str) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", *flags, "true"], capture_output=True, timeout=10, check=False
    )
    return probe.returncode == 0


WRITERS = [("config", "disable", "builtin:llama.cpp"), ("trust",)]
WRITTEN = {"config": "settings.json", "trust": "trust.json"}


@pytest.mark.parametrize("command", WRITERS, ids=lambda c: c[0])
def test_a_config_write_on_a_full_disk_is_one_line(
    tmp_path: Path, project_dir: Path, command: tuple[str, ...]
) -> None:
    """A real ENOSPC: the agent dir lives on a 64 KiB tmpfs filled up beforehand, mounted in a
    private user and mount namespace (no privileges needed where user namespaces are allowed).
    """
    if not _namespaces_work("-Urm"):
        pytest.skip("unshare -Urm (user and mount namespaces) is not available here")
    (project_dir / ".knightcode").mkdir()
    (project_dir / ".knightcode" / "settings.json").write_text("{}")
    disk = tmp_path / "disk"
    disk.mkdir()
    script = (
        'mount -t tmpfs -o size=64k tmpfs "$0" && mkdir "$0/agent" '
        '&& { dd if=/dev/zero of="$0/fill" bs=4096 2>/dev/null; true; } '
        '&& KNIGHTCODE_CODING_AGENT_DIR="$0/agent" exec "$@"'
    )
    result = knightcode(*command, prefix=("unshare", "-Urm", "sh", "-c", script, str(disk)))
    target = disk / "agent" / WRITTEN[command[0]]
    one_error_line(result, 1, f"cannot write {target}: No space left on device")


@pytest.mark.parametrize("command", WRITERS, ids=lambda c: c[0])
def test_a_config_write_without_permission_is_one_line(
    agent_dir: Path, project_dir: Path, command: tuple[str, ...]
) -> None:
    """A real EACCES: a read-only agent dir. Root ignores permission bits, so as root the
    command runs in a fresh user namespace, where it has no power over files it does not map.
    """
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:
        if not _namespaces_work("-U"):
            pytest.skip("running as root and unshare -U is not available")
        prefix = ("unshare", "-U")
    (project_dir / ".knightcode").mkdir()
    (project_dir / ".knightcode" / "settings.json").write_text("{}")
    agent_dir.chmod(0o500)
    try:
        result = knightcode(*command, prefix=prefix)
    finally:
        agent_dir.chmod(0o700)
    target = agent_dir / WRITTEN[command[0]]
    one_error_line(result, 1, f"cannot write {target}: Permission denied")
    assert not target.exists() and list(agent_dir.iterdir()) == []  # no temporary file left


# --- the reader and writer themselves ---------------------------------------------------------


def test_nesting_up_to_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"a":' * (MAX_CONFIG_DEPTH - 1) + "[1]" + "}" * (MAX_CONFIG_DEPTH - 1))
    assert read_json_object(path) is not None
    path.write_text('{"a":' * MAX_CONFIG_DEPTH + "[1]" + "}" * MAX_CONFIG_DEPTH)
    with pytest.raises(ConfigError, match="nested deeper than 64 levels"):
        read_json_object(path)


def test_a_file_at_the_size_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    padding = MAX_CONFIG_BYTES - len('{"a": ""}')
    path.write_text('{"a": "' + "x" * padding + '"}')
    assert path.stat().st_size == MAX_CONFIG_BYTES
    data = read_json_object(path)
    assert data is not None and len(str(data["a"])) == padding


def test_dev_zero_is_not_read_forever() -> None:
    with pytest.raises(ConfigError, match="not a regular file"):
        read_json_object(Path("/dev/zero"))


def test_a_failed_write_is_a_config_write_error_and_an_os_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ConfigWriteError) as info:
        write_json_atomic(blocker / "settings.json", {})  # its "directory" is a file
    assert isinstance(info.value, OSError)
    assert str(info.value).startswith(f"cannot write {blocker / 'settings.json'}: ")


def _nesting(value: object) -> int:
    if isinstance(value, list):
        return 1 + max(map(_nesting, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_nesting, value.values()), default=0)
    return 0


def _random_json(rng: random.Random, depth: int) -> object:
    """Values whose strings are full of brackets, quotes and backslashes."""
    if depth == 0 or rng.random() < 0.2:
        return "".join(rng.choice('[]{}"\\aé') for _ in range(rng.randint(0, 6)))
    if rng.random() < 0.5:
        return [_random_json(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {_random_json(rng, 0): _random_json(rng, depth - 1) for _ in range(rng.randint(0, 3))}


def test_the_nesting_measure_ignores_brackets_inside_strings() -> None:
    rng = random.Random(11)
    for _ in range(500):
        value = _random_json(rng, rng.randint(0, 8))
        raw = json.dumps(value, ensure_ascii=rng.random() < 0.5).encode()
        depth = _nesting(value)
        assert not _depth_exceeds(raw, depth), raw
        assert depth == 0 or _depth_exceeds(raw, depth - 1), raw
