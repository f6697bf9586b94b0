"""Discovery, load order, blocking before import and failure isolation."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from knightcode._plugins.host import PluginFailure, PluginHost
from knightcode._plugins.records import PluginKind, PluginStatus

from .conftest import canary_plugin, recorder_plugin, write


def settings(agent_dir: Path, **values: object) -> None:
    (agent_dir / "settings.json").write_text(json.dumps(values))


async def test_every_source_loads_in_design_order(
    agent_dir: Path,
    project_dir: Path,
    tmp_path: Path,
    fake_site: Callable[..., Path],
    make_host: Callable[..., PluginHost],
    failures: list[PluginFailure],
) -> None:
    """Built-ins, packages, user, trusted project, settings paths, -e: loaded and called in that
    order.
    """
    fake_site(
        "fakeknight",
        {
            "knightcode.builtins": {"compaction": "fake_builtin"},
            "knightcode.plugins": {"thirdparty": "fake_package"},
        },
        {"fake_builtin": recorder_plugin("builtin"), "fake_package": recorder_plugin("package")},
    )
    write(agent_dir / "extensions" / "user_ext.py", recorder_plugin("user"))
    write(
        project_dir / ".knightcode" / "extensions" / "project_ext" / "__init__.py",
        recorder_plugin("project"),
    )
    write(tmp_path / "listed" / "from_settings.py", recorder_plugin("settings"))
    settings(
        agent_dir, extensions=["../../../listed/from_settings.py"]
    )  # relative to the settings file's folder
    cli_ext = write(tmp_path / "cli_ext.py", recorder_plugin("cli"))

    host = make_host(cli_ext, approve=True)

    assert failures == []
    kinds = [record.kind for record in host.records]
    assert kinds == [
        PluginKind.BUILTIN,
        PluginKind.PACKAGE,
        PluginKind.USER,
        PluginKind.PROJECT,
        PluginKind.SETTINGS,
        PluginKind.CLI,
    ]
    names = [record.name for record in host.records]
    assert names[:2] == ["builtin:compaction", "plugin:thirdparty"]
    assert names[2] == f"ext:{(agent_dir / 'extensions' / 'user_ext.py').resolve()}"
    assert all(record.enabled for record in host.records)

    await host.hooks.session_start(reason="startup", previous_session_file=None)
    calls = (project_dir / "calls.log").read_text().split()
    assert calls == ["builtin", "package", "user", "project", "settings", "cli"]


def test_no_extensions_keeps_builtins_and_cli_paths(
    agent_dir: Path,
    tmp_path: Path,
    fake_site: Callable[..., Path],
    make_host: Callable[..., PluginHost],
) -> None:
    fake_site(
        "fakeknight",
        {
            "knightcode.builtins": {"gondolin": "fake_builtin"},
            "knightcode.plugins": {"thirdparty": "fake_package"},
        },
        {"fake_builtin": "", "fake_package": ""},
    )
    write(agent_dir / "extensions" / "user_ext.py", "")
    cli_ext = write(tmp_path / "cli_ext.py", "")
    host = make_host(cli_ext, no_extensions=True)
    assert [r.kind for r in host.records] == [PluginKind.BUILTIN, PluginKind.CLI]


def test_extension_dir_rules(agent_dir: Path, make_host: Callable[..., PluginHost]) -> None:
    """*.py files and folders with __init__.py; private names, other files and plain folders are
    not extensions.
    """
    ext = agent_dir / "extensions"
    write(ext / "b_tool.py", "")
    write(ext / "a_pkg" / "__init__.py", "from .helper import VALUE\n")
    write(ext / "a_pkg" / "helper.py", "VALUE = 1\n")
    write(ext / "_private.py", "raise RuntimeError('must not be imported')")
    write(ext / "notes.txt", "")
    write(ext / "plain_folder" / "x.py", "raise RuntimeError('must not be imported')")
    host = make_host()
    assert [Path(r.source).name for r in host.records] == ["a_pkg", "b_tool.py"]
    assert all(r.enabled for r in host.records)


def test_same_file_twice_loads_once(agent_dir: Path, make_host: Callable[..., PluginHost]) -> None:
    path = write(agent_dir / "extensions" / "tool.py", "")
    settings(agent_dir, extensions=[str(path)])
    host = make_host(path)
    assert len(host.records) == 1


def test_blocked_plugins_are_never_imported(
    agent_dir: Path,
    tmp_path: Path,
    fake_site: Callable[..., Path],
    make_host: Callable[..., PluginHost],
) -> None:
    builtin_canary, user_canary, stem_canary = tmp_path / "b", tmp_path / "u", tmp_path / "s"
    fake_site(
        "fakeknight",
        {"knightcode.builtins": {"llama.cpp": "fake_llama"}},
        {"fake_llama": canary_plugin(builtin_canary)},
    )
    user_ext = write(agent_dir / "extensions" / "noisy.py", canary_plugin(user_canary))
    write(agent_dir / "extensions" / "by_stem.py", canary_plugin(stem_canary))
    settings(
        agent_dir, extensions=["-builtin:llama.cpp", f"-ext:{user_ext.resolve()}", "-ext:by_stem"]
    )

    host = make_host()

    assert not builtin_canary.exists() and not user_canary.exists() and not stem_canary.exists()
    assert {r.name: r.status for r in host.records} == {
        "builtin:llama.cpp": PluginStatus.DISABLED,
        f"ext:{(agent_dir / 'extensions' / 'by_stem.py').resolve()}": PluginStatus.DISABLED,
        f"ext:{user_ext.resolve()}": PluginStatus.DISABLED,
    }
    assert host.warnings == []


def test_blocking_an_unknown_name_warns(
    agent_dir: Path, make_host: Callable[..., PluginHost]
) -> None:
    settings(agent_dir, extensions=["-builtin:nonesuch", "-builtin:web-tools"])
    host = make_host()
    assert len(host.warnings) == 1
    assert "'builtin:nonesuch'" in host.warnings[0]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def broken(:\n    pass\n", "SyntaxError"),
        (
            "import no_such_module_knightcode\n",
            "ModuleNotFoundError: No module named 'no_such_module_knightcode'",
        ),
        ("raise SystemExit(3)\n", "SystemExit"),
        (
            "from knightcode import hookimpl\n\n"
            "@hookimpl\ndef register_commands(register):\n    raise ValueError('nope')\n",
            "registration failed: ValueError: nope",
        ),
        (
            "from knightcode import hookimpl\n\n@hookimpl\ndef sesion_start(ctx):\n    pass\n",
            "implements unknown hook 'sesion_start' (did you mean 'session_start'?)",
        ),
        (
            "from knightcode import hookimpl\n\n"
            "@hookimpl\ndef session_start(reason, nonsense):\n    pass\n",
            "nonsense",
        ),
        (
            "from knightcode import hookimpl\n\n"
            "@hookimpl\ndef register_flags(register):\n    register(nme='x')\n",
            "registration failed: TypeError",
        ),
    ],
    ids=[
        "syntax-error",
        "import-error",
        "system-exit",
        "raising-registration",
        "unknown-hook",
        "bad-argument",
        "bad-register-call",
    ],
)
async def test_a_broken_extension_is_reported_once_and_skipped(
    source: str,
    expected: str,
    agent_dir: Path,
    project_dir: Path,
    make_host: Callable[..., PluginHost],
    failures: list[PluginFailure],
) -> None:
    ext = agent_dir / "extensions"
    write(ext / "a_good.py", recorder_plugin("good"))
    bad = write(ext / "b_bad.py", source)
    write(ext / "c_good.py", recorder_plugin("also-good"))

    host = make_host()

    assert len(failures) == 1
    failure = failures[0]
    assert failure.plugin == f"ext:{bad.resolve()}" and failure.event == "load"
    assert expected in failure.error
    statuses = [r.status for r in host.records]
    assert statuses == [PluginStatus.LOADED, PluginStatus.FAILED, PluginStatus.LOADED]
    assert host.records[1].error == failure.error
    assert host.registrations.commands.names() == []
    await host.hooks.session_start(reason="startup", previous_session_file=None)
    assert (project_dir / "calls.log").read_text().split() == ["good", "also-good"]


def test_missing_extension_path_is_reported(
    agent_dir: Path,
    tmp_path: Path,
    make_host: Callable[..., PluginHost],
    failures: list[PluginFailure],
) -> None:
    host = make_host(tmp_path / "nope.py")
    assert failures[0].error == f"extension path not found: {tmp_path / 'nope.py'}"
    assert host.records[0].status is PluginStatus.FAILED


def test_untrusted_project_extensions_are_never_imported(
    project_dir: Path, tmp_path: Path, make_host: Callable[..., PluginHost]
) -> None:
    canary = tmp_path / "canary"
    write(project_dir / ".knightcode" / "extensions" / "evil.py", canary_plugin(canary))
    host = make_host()
    assert not canary.exists()
    assert host.records == []
    assert any("not trusted" in warning for warning in host.warnings)


def test_trusted_project_extensions_load_until_a_file_changes(
    agent_dir: Path, project_dir: Path, tmp_path: Path, make_host: Callable[..., PluginHost]
) -> None:
    from knightcode._config.trust import TrustStore

    canary = tmp_path / "canary"
    ext = write(project_dir / ".knightcode" / "extensions" / "tool.py", canary_plugin(canary))
    TrustStore(agent_dir).trust(project_dir)
    host = make_host()
    assert canary.exists() and host.records[0].kind is PluginKind.PROJECT
    canary.unlink()

    # Importing wrote __pycache__ into the project; that must not count as a change...
    host = make_host()
    assert canary.exists()
    canary.unlink()

    # ...but an edit does: the project is untrusted again and says which file changed.
    ext.write_text(ext.read_text() + "\n# edited\n")
    host = make_host()
    assert not canary.exists()
    assert host.records == []
    assert any("extensions/tool.py" in warning for warning in host.warnings)


def test_an_expected_builtin_missing_from_metadata_is_reported(
    monkeypatch: pytest.MonkeyPatch,
    fake_site: Callable[..., Path],
    make_host: Callable[..., PluginHost],
) -> None:
    fake_site(
        "fakeknight",
        {"knightcode.builtins": {"compaction": "fake_compaction"}},
        {"fake_compaction": ""},
    )
    # every real built-in is declared now: expect one that no metadata has
    monkeypatch.setattr(
        "knightcode._plugins.planning.EXPECTED_BUILTINS", ("compaction", "not-yet-built")
    )
    monkeypatch.setenv("KNIGHTCODE_LOAD_PLUGINS", "builtin:compaction,builtin:not-yet-built")
    host = make_host()
    assert [(r.name, r.status) for r in host.records] == [
        ("builtin:compaction", PluginStatus.LOADED),
        ("builtin:not-yet-built", PluginStatus.MISSING),
    ]
    assert "missing from the installed metadata" in (host.records[1].error or "")


def test_a_blocked_builtin_is_disabled_not_missing(
    agent_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_site: Callable[..., Path],
    make_host: Callable[..., PluginHost],
) -> None:
    fake_site(
        "fakeknight",
        {"knightcode.builtins": {"compaction": "fake_compaction"}},
        {"fake_compaction": ""},
    )
    monkeypatch.setattr("knightcode._plugins.planning.EXPECTED_BUILTINS", ("compaction",))
    settings(agent_dir, extensions=["-builtin:compaction"])
    host = make_host()
    assert [(r.name, r.status) for r in host.records] == [
        ("builtin:compaction", PluginStatus.DISABLED)
    ]


def test_load_plugins_allow_list(
    fake_site: Callable[..., Path],
    make_host: Callable[..., PluginHost],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_site(
        "fakeknight",
        {
            "knightcode.builtins": {"compaction": "fake_a"},
            "knightcode.plugins": {"one": "fake_b", "two": "fake_c"},
        },
        {"fake_a": "", "fake_b": "", "fake_c": ""},
    )
    monkeypatch.setenv("KNIGHTCODE_LOAD_PLUGINS", "plugin:two")
    assert [r.name for r in make_host().records] == ["plugin:two"]
    monkeypatch.setenv("KNIGHTCODE_LOAD_PLUGINS", "")
    assert make_host().records == []
    monkeypatch.delenv("KNIGHTCODE_LOAD_PLUGINS")
    names = [r.name for r in make_host().records]
    assert names[0] == "builtin:compaction" and "plugin:one" in names and "plugin:two" in names
