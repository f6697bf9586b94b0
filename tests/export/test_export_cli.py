"""``knightcode --export SESSION [OUT]``, run as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from knightcode._modes.rpc.export_html import render_session_html
from knightcode._session.location import default_session_dir
from knightcode._session.manager import SessionManager

from .sessions import write_demo_session


@pytest.fixture(autouse=True)
def no_builtins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNIGHTCODE_LOAD_PLUGINS", "")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "knightcode", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.fixture
def demo(agent_dir: Path, project_dir: Path) -> SessionManager:
    """The demo session, stored where this project's sessions live."""
    session, _ids = write_demo_session(project_dir, default_session_dir(project_dir, agent_dir))
    assert session.session_file is not None and session.session_file.is_file()
    return session


def expected_page(session: SessionManager) -> str:
    assert session.session_file is not None
    return render_session_html(SessionManager.open(session.session_file))


def test_export_by_path_writes_the_default_name_and_says_where(
    demo: SessionManager, project_dir: Path, tmp_path: Path
) -> None:
    assert demo.session_file is not None
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run("--export", str(demo.session_file), cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    target = elsewhere / f"knightcode-session-{demo.session_file.stem}.html"
    assert result.stdout == f"Exported to: {target}\n"
    assert target.read_text(encoding="utf-8") == expected_page(demo)


def test_export_to_a_given_file(demo: SessionManager, project_dir: Path) -> None:
    assert demo.session_file is not None
    result = run("--export", str(demo.session_file), "out/page.html", cwd=project_dir)
    assert result.returncode == 0, result.stderr
    target = project_dir / "out" / "page.html"
    assert result.stdout == f"Exported to: {target}\n" and target.is_file()


@pytest.mark.parametrize("length", [None, 8])
def test_export_by_id_or_unique_prefix(
    demo: SessionManager, project_dir: Path, length: int | None
) -> None:
    reference = demo.session_id[:length] if length else demo.session_id
    result = run("--export", reference, "page.html", cwd=project_dir)
    assert result.returncode == 0, result.stderr
    assert (project_dir / "page.html").read_text(encoding="utf-8") == expected_page(demo)


def test_export_by_id_looks_in_the_session_dir_given(project_dir: Path, tmp_path: Path) -> None:
    session, _ids = write_demo_session(project_dir, tmp_path / "kept")
    result = run(
        "--export",
        session.session_id,
        "page.html",
        "--session-dir",
        str(tmp_path / "kept"),
        cwd=project_dir,
    )
    assert result.returncode == 0, result.stderr
    assert (project_dir / "page.html").is_file()


def test_export_finds_another_projects_session_by_id(demo: SessionManager, tmp_path: Path) -> None:
    other = tmp_path / "other-project"
    other.mkdir()
    result = run("--export", demo.session_id[:8], cwd=other)
    assert result.returncode == 0, result.stderr
    assert demo.session_file is not None
    assert (other / f"knightcode-session-{demo.session_file.stem}.html").is_file()


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("no-such-id", "--export 'no-such-id': no session has this id or id prefix"),
        ("missing.jsonl", "missing.jsonl does not exist"),
        ("./gone/", "does not exist"),
    ],
)
def test_a_bad_session_is_a_clear_usage_error(
    project_dir: Path, reference: str, message: str
) -> None:
    result = run("--export", reference, cwd=project_dir)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == "" and not list(project_dir.glob("*.html"))


def test_a_file_that_is_not_a_session_is_refused_untouched(project_dir: Path) -> None:
    notes = project_dir / "notes.jsonl"
    notes.write_text('{"hello": "world"}\n')
    empty = project_dir / "empty.jsonl"
    empty.write_text("")
    for path in (notes, empty):
        result = run("--export", str(path), cwd=project_dir)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert "is not a session file" in result.stderr
    assert notes.read_text() == '{"hello": "world"}\n' and empty.read_text() == ""
    assert not list(project_dir.glob("*.html"))


def test_an_ambiguous_prefix_lists_the_matches(
    agent_dir: Path, project_dir: Path, demo: SessionManager
) -> None:
    session_dir = default_session_dir(project_dir, agent_dir)
    second, _ = write_demo_session(project_dir, session_dir)
    # Both ids are UUIDv7s made within the same millisecond or so: a one-character prefix is
    # shared (the timestamp's first digit).
    shared = next(
        n for n, (a, b) in enumerate(zip(demo.session_id, second.session_id, strict=True)) if a != b
    )
    prefix = demo.session_id[:shared]
    assert prefix
    result = run("--export", prefix, cwd=project_dir)
    assert result.returncode == 2 and "matches 2 sessions" in result.stderr


def test_more_than_one_output_is_refused(demo: SessionManager, project_dir: Path) -> None:
    assert demo.session_file is not None
    result = run("--export", str(demo.session_file), "a.html", "b.html", cwd=project_dir)
    assert result.returncode == 2 and "one output file" in result.stderr


def test_an_unwritable_output_is_an_error_not_a_traceback(
    demo: SessionManager, project_dir: Path
) -> None:
    assert demo.session_file is not None
    (project_dir / "taken").write_text("a file, not a directory")
    result = run("--export", str(demo.session_file), "taken/page.html", cwd=project_dir)
    assert result.returncode == 1 and "cannot write" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_lists_export() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "knightcode", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "--export SESSION" in result.stdout
