"""The command line, run as a real subprocess: options, subcommands, exit codes, error lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from knightcode._cli.main_command import make_request, split_model
from knightcode._errors import UsageError

from .plugins.conftest import canary_plugin, write


@pytest.fixture(autouse=True)
def only_the_plugins_under_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about extensions; knightcode's own built-ins would only add rows."""
    monkeypatch.setenv("KNIGHTCODE_LOAD_PLUGINS", "")


def run(*args: str, stdin: str | None = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "knightcode", *args],
        capture_output=True,
        text=True,
        input=stdin,
        check=False,
        env=os.environ.copy(),
    )


def test_version_is_fast_path() -> None:
    result = run("--version")
    assert result.returncode == 0 and result.stdout.startswith("knightcode ")
    from knightcode import __version__

    assert result.stdout.strip() == f"knightcode {__version__}"


def test_version_imports_nothing_heavy() -> None:
    code = (
        "import sys; from knightcode.__main__ import main; main(['--version']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('click','pluggy','pydantic','httpx','rich','watchfiles','importlib_metadata')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.splitlines()[-1] == "[]"


def test_help_lists_every_documented_option() -> None:
    result = run("--help")
    assert result.returncode == 0
    for option in (
        "--mode",
        "-p, --print",
        "--provider",
        "--model",
        "--thinking",
        "--session PATH",
        "--session-dir",
        "--no-session",
        "-c, --continue",
        "-r, --resume",
        "-e, --extension",
        "-ne, --no-extensions",
        "-t, --tools",
        "-nt, --no-tools",
        "-nbt, --no-builtin-tools",
        "--system-prompt",
        "--append-system-prompt",
        "--approve",
        "-v, --version",
        "-nc, --no-context-files",
        "--verbose",
        "--offline",
        "--api-key KEY",
        "--models PATTERNS",
        "--list-models [SEARCH]",
        "--fork PATH|ID",
        "--temperature NUMBER",
        "--prompt-template PATH",
        "-np, --no-prompt-templates",
        "--no-themes",
        "--theme NAME|PATH",
        "-h, --help",
        "knightcode config list",
        "knightcode trust",
    ):
        assert option in result.stdout, option


def test_help_does_not_import_pydantic_httpx_or_rich() -> None:
    code = (
        "import sys; from knightcode._cli import run; run(['--help']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic','httpx','rich')), "
        "file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stderr.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mode", "yaml"], "Invalid value for '--mode'"),
        (["--thinking", "loud"], "Invalid value for '--thinking'"),
        (
            ["--session", "a.jsonl", "--no-session"],
            "--session and --no-session cannot be used together",
        ),
        (["-c", "-r"], "--continue and --resume cannot be used together"),
        (["--tools", "read", "--no-tools"], "--tools and --no-tools cannot be used together"),
        (["--tools", "read,,ls", "hi"], "expected a comma-separated list of tool names"),
        (["--mode", "rpc", "hello"], "--mode rpc takes no messages"),
        (["-p", "--mode", "rpc"], "--print and --mode rpc cannot be used together"),
        (["--model", "/x", "hi"], "expected 'provider/model-id'"),
        (["--no-such-option"], "No such option '--no-such-option'"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("knightcode: error: ") and message in lines[0]
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_interactive_mode_without_a_terminal_says_what_to_use() -> None:
    result = run()  # stdin and stderr are pipes here
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "knightcode: error: interactive mode needs a terminal (stdin is not one); "
        "use -p 'message' or --mode json|rpc in scripts"
    )


def test_print_without_a_model_is_a_clear_configuration_error(agent_dir: Path) -> None:
    env_clean = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    result = subprocess.run(
        [sys.executable, "-m", "knightcode", "-p", "hi"],
        capture_output=True,
        text=True,
        input="",
        check=False,
        env=env_clean,
    )
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("knightcode: error: no model available: set an API key")


def test_print_mode_needs_a_message() -> None:
    result = run("-p")
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        == "knightcode: error: --mode text needs a message (or piped input on stdin)"
    )


def test_model_splitting() -> None:
    assert split_model(None, "anthropic/claude-x") == ("anthropic", "claude-x")
    assert split_model(None, "openrouter/meta/llama") == ("openrouter", "meta/llama")
    assert split_model("openrouter", "meta/llama") == ("openrouter", "meta/llama")
    assert split_model(None, "gpt-x") == (None, "gpt-x")


def _params(**overrides: object) -> dict[str, object]:
    base: dict[str, object] = dict(
        mode=None,
        print_mode=False,
        messages=("hi",),
        provider=None,
        model=None,
        thinking=None,
        session=None,
        session_dir=None,
        no_session=False,
        continue_recent=False,
        resume=False,
        tools=None,
        no_tools=False,
        no_builtin_tools=False,
        system_prompt=None,
        append_system_prompt=(),
        approve=False,
        extension=(),
        no_extensions=False,
        skill=(),
        no_skills=False,
        theme=None,
    )
    base.update(overrides)
    return base


def test_make_request_decides_the_mode() -> None:
    assert make_request(_params()).mode == "interactive"
    assert make_request(_params(print_mode=True)).mode == "text"
    assert make_request(_params(print_mode=True, mode="json")).mode == "json"
    request = make_request(_params(tools="read, grep", model="a/b", plugin_flag__x="1"))
    assert request.tools == ["read", "grep"] and (request.provider, request.model) == ("a", "b")
    assert request.plugin_flags == {"x": "1"}
    with pytest.raises(UsageError):
        make_request(_params(session=Path("x"), resume=True))


@pytest.mark.parametrize(
    ("settings", "key", "problem"),
    [
        (
            '{"extensions": "not-a-list"}',
            "extensions",
            'expected a list of strings, got "not-a-list"',
        ),
        # Read only once a run needs it, and still a configuration error before any request.
        (
            '{"retry": {"maxRetries": "three"}}',
            "retry.maxRetries",
            'expected a non-negative integer, got "three"',
        ),
    ],
)
def test_settings_error_is_one_line_exit_2(
    agent_dir: Path, settings: str, key: str, problem: str
) -> None:
    (agent_dir / "settings.json").write_text(settings)
    result = subprocess.run(
        [sys.executable, "-m", "knightcode", "-p", "hi", "--no-session"],
        capture_output=True,
        text=True,
        input="",
        check=False,
        env={**os.environ, "OPENAI_API_KEY": "sk-test"},
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"knightcode: settings error in {agent_dir / 'settings.json'}: {key}: {problem}"
    ]


def test_invalid_json_settings_names_line_and_column(agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text('{\n  "theme": "dark",\n  oops\n}')
    result = run("-p", "hi")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert str(agent_dir / "settings.json") in line and "line 3 column 3" in line


def test_help_survives_broken_configuration(agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text("{not json")
    result = run("--help")
    assert result.returncode == 0 and "Usage: knightcode" in result.stdout
    assert "warning" in result.stderr


def test_config_list_reports_every_plugin(agent_dir: Path, tmp_path: Path) -> None:
    good = write(agent_dir / "extensions" / "good.py", "")
    bad = write(agent_dir / "extensions" / "bad.py", "import nonexistent_module_x\n")
    blocked = write(agent_dir / "extensions" / "blocked.py", "")
    (agent_dir / "settings.json").write_text(json.dumps({"extensions": ["-ext:blocked"]}))
    result = run("config", "list", "--json")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # the failure is in the listing, not printed twice
    records = {r["name"]: r for r in json.loads(result.stdout)}
    assert records[f"ext:{bad.resolve()}"] == {
        "name": f"ext:{bad.resolve()}",
        "kind": "user",
        "source": str(bad.resolve()),
        "enabled": False,
        "status": "failed",
        "error": "ModuleNotFoundError: No module named 'nonexistent_module_x' (bad.py, line 1)",
    }
    assert records[f"ext:{good.resolve()}"]["enabled"] is True
    assert records[f"ext:{blocked.resolve()}"]["status"] == "disabled"

    table = run("config", "list")
    assert table.returncode == 0
    assert "NAME" in table.stdout and "failed" in table.stdout and "No module named" in table.stdout


def test_config_list_with_extension_flag(tmp_path: Path) -> None:
    ext = write(tmp_path / "mine.py", "")
    result = run("config", "list", "--json", "-e", str(ext))
    assert [r["kind"] for r in json.loads(result.stdout)] == ["cli"]


def test_config_disable_and_enable_edit_only_the_extensions_list(
    agent_dir: Path, tmp_path: Path
) -> None:
    settings = agent_dir / "settings.json"
    settings.write_text(
        json.dumps(
            {"theme": "light", "extensions": ["./x.py"], "retry": {"maxRetries": 5}}, indent=2
        )
    )
    result = run("config", "disable", "llama.cpp")
    assert result.returncode == 0, result.stderr
    assert "disabled builtin:llama.cpp" in result.stdout
    data = json.loads(settings.read_text())
    assert data == {
        "theme": "light",
        "extensions": ["./x.py", "-builtin:llama.cpp"],
        "retry": {"maxRetries": 5},
    }
    assert list(data) == ["theme", "extensions", "retry"]

    assert "already disabled" in run("config", "disable", "builtin:llama.cpp").stdout
    assert run("config", "enable", "builtin:llama.cpp").returncode == 0
    assert json.loads(settings.read_text())["extensions"] == ["./x.py"]

    unknown = run("config", "disable", "nonesuch")
    assert unknown.returncode == 2
    assert (
        unknown.stderr.strip()
        == "knightcode: error: unknown plugin 'nonesuch'; 'knightcode config list' shows the names"
    )


def test_a_disabled_extension_is_not_imported_by_the_cli(agent_dir: Path, tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    write(agent_dir / "extensions" / "noisy.py", canary_plugin(canary))
    assert run("config", "disable", "ext:noisy").returncode == 0
    assert run("--help").returncode == 0
    assert not canary.exists()


def test_trust_flow(project_dir: Path, tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    write(project_dir / ".knightcode" / "extensions" / "tool.py", canary_plugin(canary))
    listing = run("config", "list", "--json")
    assert json.loads(listing.stdout) == [] and not canary.exists()
    assert "not trusted" in listing.stderr

    approved = run("config", "list", "--json", "--approve")
    assert [r["kind"] for r in json.loads(approved.stdout)] == ["project"] and canary.exists()
    canary.unlink()
    assert json.loads(run("config", "list", "--json").stdout) == []  # --approve lasted one run

    trusted = run("trust")
    assert (
        trusted.returncode == 0
        and "trusted" in trusted.stdout
        and "extensions/tool.py" in trusted.stdout
    )
    assert [r["kind"] for r in json.loads(run("config", "list", "--json").stdout)] == ["project"]

    (project_dir / ".knightcode" / "settings.json").write_text("{}")
    changed = run("config", "list", "--json")
    assert json.loads(changed.stdout) == []
    assert "settings.json (added)" in changed.stderr

    assert run("trust").returncode == 0
    assert "no longer trusting" in run("trust", "--revoke").stdout
    assert "was not trusted" in run("trust", "--revoke").stdout


def test_plugin_flags_parse_and_unknown_flags_fail(tmp_path: Path) -> None:
    ext = write(
        tmp_path / "flags.py",
        """
    from knightcode import hookimpl

    @hookimpl
    def register_flags(register):
        register(name="plan", type="boolean", description="Plan first.")
        register(name="model", type="string", description="Clashes with a built-in option.")
    """,
    )
    help_text = run("-e", str(ext), "--help")
    assert "--plan" in help_text.stdout and "Plan first. [ext:" in help_text.stdout
    assert "registers flag --model, which knightcode already has; ignored" in help_text.stderr
    without = run("--plan")
    assert without.returncode == 2 and "No such option '--plan'" in without.stderr
    with_ext = run("-e", str(ext), "--plan", "--mode", "rpc")
    assert with_ext.returncode == 2 and "no model available" in with_ext.stderr  # the flag parsed
