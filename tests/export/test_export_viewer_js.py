"""The viewer's script, run in jsdom (a real DOM in Node): tree navigation and search.

jsdom comes from npm, installed once per machine into the CI cache folder (a few seconds; the
same registry the other npm-based tests use). Without Node or npm this test fails with the
command that sets it up: it is the only check that the page's script does what it should.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from knightcode._modes.rpc.export_html import render_session_html
from knightcode._session.manager import SessionManager

from .sessions import write_demo_session

JSDOM = "jsdom@24.1.3"  # the newest line that runs on Node 20
HARNESS = Path(__file__).with_name("viewer_harness.cjs")


@pytest.fixture(scope="session")
def jsdom() -> Path:
    cache = Path(os.environ.get("KNIGHTCODE_CI_CACHE", Path.home() / ".cache" / "knightcode-ci"))
    prefix = cache / JSDOM.replace("@", "-")
    module = prefix / "node_modules" / "jsdom"
    if not (module / "package.json").is_file():
        npm = shutil.which("npm")
        assert npm, f"npm is needed once: npm install --prefix {prefix} {JSDOM}"
        subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", JSDOM],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return module


def drive(jsdom: Path, page: Path, actions: list[dict[str, str]]) -> list[dict[str, Any]]:
    node = shutil.which("node")
    assert node, "Node.js is needed (it is on the build machines)"
    result = subprocess.run(
        [node, str(HARNESS), str(jsdom), str(page), json.dumps(actions)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    states: list[dict[str, Any]] = json.loads(result.stdout)
    return states


@pytest.fixture
def page(tmp_path: Path) -> tuple[Path, SessionManager, dict[str, str]]:
    session, ids = write_demo_session(tmp_path, tmp_path / "sessions")
    assert session.session_file is not None
    reopened = SessionManager.open(session.session_file)
    path = tmp_path / "page.html"
    path.write_text(render_session_html(reopened), encoding="utf-8")
    return path, reopened, ids


def test_the_page_opens_on_the_current_branch_and_runs_nothing_from_the_session(
    jsdom: Path, page: tuple[Path, SessionManager, dict[str, str]]
) -> None:
    path, session, ids = page
    (start,) = drive(jsdom, path, [])
    branch = [entry["id"] for entry in session.get_branch()]
    shown = [entry_id for entry_id in branch if entry_id in start["visible"]]
    assert start["visible"] == shown and ids["old_branch"] not in start["visible"]
    assert start["onpath"] == branch
    assert start["alerts"] == 0  # the hostile message's script did not run


def test_clicking_a_row_shows_the_branch_through_it(
    jsdom: Path, page: tuple[Path, SessionManager, dict[str, str]]
) -> None:
    path, session, ids = page
    _start, old, back = drive(jsdom, path, [{"click": ids["old_branch"]}, {"click": ids["leaf"]}])
    old_branch = [entry["id"] for entry in session.get_branch(ids["old_branch"])]
    old_branch.append(session.get_children(ids["old_branch"])[0]["id"])  # down to its end
    assert old["onpath"] == old_branch and old["selected"] == [ids["old_branch"]]
    assert ids["old_branch"] in old["visible"] and ids["leaf"] not in old["visible"]
    assert old["scrolledTo"] == ids["old_branch"] and old["openBranches"] == 3
    assert ids["leaf"] in back["visible"] and ids["old_branch"] not in back["visible"]


def test_search_filters_all_branches_marks_matches_and_clears(
    jsdom: Path, page: tuple[Path, SessionManager, dict[str, str]]
) -> None:
    path, _session, ids = page
    start, found, none, cleared = drive(
        jsdom, path, [{"search": "ABANDONED"}, {"search": "no such words"}, {"search": ""}]
    )
    assert set(found["visible"]) == set(found["matches"]) and len(found["matches"]) == 2
    assert ids["old_branch"] in found["visible"]  # found on the branch not shown before
    assert found["marks"] == ["abandoned", "abandoned"] and found["count"].startswith("2 matches")
    assert none["visible"] == [] and none["count"].startswith("0 matches")
    assert cleared["visible"] == start["visible"] and cleared["marks"] == []
    assert cleared["text"] == start["text"]  # marks removed without losing text
