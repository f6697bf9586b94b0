"""The exported viewer page: structure, entry kinds, the tree, escaping, and its script."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from knightcode._modes.rpc.export_assets import SCRIPT, script_hash
from knightcode._modes.rpc.export_entries import FOLD_LINES
from knightcode._modes.rpc.export_html import render_session_html
from knightcode._session.manager import SessionManager

from .sessions import HOSTILE, assistant, user, write_demo_session


class Page(HTMLParser):
    """The page's elements: every start tag with its attributes, the scripts' text, and the
    text of each section (by entry id)."""

    VOID = frozenset({"meta", "img", "input", "br", "hr", "link"})

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.sections: dict[str, str] = {}
        self._in_script = False
        self._section: str | None = None
        self._depth = 0
        self.stack: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if tag not in self.VOID:
            self.stack.append(tag)
        self._in_script = tag == "script"
        if tag == "section":
            self._section = attributes["data-id"] or ""
            self.sections[self._section] = ""

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-3:]}"
        self.stack.pop()
        if tag == "script":
            self._in_script = False
        if tag == "section":
            self._section = None

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)
        elif self._section is not None:
            self.sections[self._section] += data

    def having(self, tag: str, css: str) -> list[dict[str, str | None]]:
        return [
            attrs
            for name, attrs in self.tags
            if name == tag and css in (attrs.get("class") or "").split()
        ]


@pytest.fixture
def demo(tmp_path: Path) -> tuple[SessionManager, dict[str, str], str]:
    session, ids = write_demo_session(tmp_path, tmp_path / "sessions")
    assert session.session_file is not None
    reopened = SessionManager.open(session.session_file)
    return reopened, ids, render_session_html(reopened)


def test_the_page_parses_and_every_tag_is_closed(demo: tuple[SessionManager, dict, str]) -> None:
    _session, _ids, text = demo
    page = Page(text)
    assert page.stack == [] and text.startswith("<!DOCTYPE html>")


def test_each_entry_kind_is_rendered_distinctly(demo: tuple[SessionManager, dict, str]) -> None:
    page = Page(demo[2])
    for css in (
        "user",
        "assistant",
        "toolResult",
        "compaction",
        "branchSummary",
        "change",  # model change
    ):
        assert page.having("section", css), css
    assert page.having("details", "thinking")
    calls = page.having("div", "call")
    assert len(calls) == 4  # read, bash, edit, write


def test_code_and_tool_content_are_highlighted_by_language_and_extension(
    demo: tuple[SessionManager, dict, str],
) -> None:
    text = demo[2]
    # the markdown code fence (python), the read result of main.py, the bash command, the
    # edit diff, the written markdown file: each a highlighted block with token classes
    assert '<span class="nb">print</span>' in text
    assert '<span class="k">def</span>' in text and '<span class="m">42</span>' in text
    assert '<span class="gd">-42</span>' in text and '<span class="gi">+43</span>' in text
    assert '<span class="gh"># Notes</span>' in text
    assert "<strong>Done</strong>" in text  # assistant markdown


def test_long_tool_output_starts_folded_with_its_line_count(
    demo: tuple[SessionManager, dict, str],
) -> None:
    page = Page(demo[2])
    folded = [attrs for attrs in page.having("details", "out") if "open" not in attrs]
    unfolded = [attrs for attrs in page.having("details", "out") if "open" in attrs]
    assert len(folded) == 1 and unfolded  # the 40-line bash output; the short ones open
    assert "output · 40 lines" in demo[2] and FOLD_LINES < 40


def test_the_tree_holds_every_branch_and_marks_the_current_path(
    demo: tuple[SessionManager, dict, str],
) -> None:
    session, ids, text = demo
    page = Page(text)
    rows = {attrs["data-id"]: attrs for attrs in page.having("li", "row")}
    assert set(rows) == {entry["id"] for entry in session.get_entries()}
    path = {entry["id"] for entry in session.get_branch()}
    on_path = {key for key, attrs in rows.items() if "onpath" in (attrs["class"] or "")}
    assert on_path == path and ids["old_branch"] not in path
    (leaf,) = page.having("li", "leaf")
    assert leaf["data-id"] == ids["leaf"]
    # each row names its parent, so the script can show any branch
    for entry in session.get_entries():
        assert rows[entry["id"]].get("data-parent") == entry["parentId"]
    # the fork: two sub-branches, the abandoned one folded, the current one open
    branches = [attrs for name, attrs in page.tags if name == "details" and "class" not in attrs]
    assert len(branches) == 3 and sum("open" in attrs for attrs in branches) == 2
    # entries off the current branch are in the page, hidden until their branch is chosen
    sections = {attrs["data-id"]: attrs for attrs in page.having("section", "entry")}
    assert "hidden" in sections[ids["old_branch"]] and "hidden" not in sections[ids["fork"]]
    assert "abandoned branch question" in page.sections[ids["old_branch"]]


def test_a_hostile_message_stays_text(demo: tuple[SessionManager, dict, str]) -> None:
    _session, ids, text = demo
    page = Page(text)
    # one script, ours; no element from the session's text
    assert [name for name, _ in page.tags].count("script") == 1 and page.scripts == [SCRIPT]
    assert text.count("<script") == 1 and text.count("</script>") == 1
    assert not page.having("img", "") and not [
        a for n, a in page.tags if n == "a" and "javascript" in (a.get("href") or "")
    ]
    assert HOSTILE.split(" [x]")[0] in page.sections[ids["leaf"]]  # shown as text
    # the script may run only by its hash
    (policy,) = [a for n, a in page.tags if n == "meta" and a.get("http-equiv")]
    assert f"script-src {script_hash()}" in (policy["content"] or "")
    assert "default-src 'none'" in (policy["content"] or "")


def test_hostile_ids_names_and_paths_stay_in_their_attributes(tmp_path: Path) -> None:
    session = SessionManager.create(tmp_path, tmp_path / "s")
    session.append_session_info('x"><script>alert(1)</script>')
    session.append_message(user("<b>hi</b>"))
    session.append_message(
        assistant(
            [
                {
                    "type": "toolCall",
                    "id": '"><svg onload=alert(1)>',
                    "name": "read",
                    "arguments": {"path": '"><img src=x onerror=alert(1)>.py'},
                }
            ]
        )
    )
    text = render_session_html(session)
    page = Page(text)
    assert text.count("<script") == 1 and not page.having("img", "") and "<svg" not in text
    assert "<b>" not in text


def test_the_script_is_valid_javascript(tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node is not None, "Node.js is needed for this test (it is on the build machines)"
    script = tmp_path / "viewer.js"
    script.write_text(SCRIPT, encoding="utf-8")
    result = subprocess.run([node, "--check", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_page_loads_nothing_from_anywhere(demo: tuple[SessionManager, dict, str]) -> None:
    page = Page(demo[2])
    for name, attrs in page.tags:
        assert "src" not in attrs or (attrs["src"] or "").startswith("data:"), (name, attrs)
        assert name not in ("link", "iframe", "object", "embed", "base")
    assert not re.search(r"https?://", demo[2].split("<main>")[0])


def test_the_same_session_gives_the_same_bytes(demo: tuple[SessionManager, dict, str]) -> None:
    session, _ids, text = demo
    assert session.session_file is not None
    assert render_session_html(SessionManager.open(session.session_file)) == text
