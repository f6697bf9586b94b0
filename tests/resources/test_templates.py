"""Prompt templates: argument splitting, substitution (the reference's cases from
``test/prompt-templates.test.ts``), loading and expansion."""

from __future__ import annotations

from pathlib import Path

import pytest

from knightcode._resources.discovery import ResourceSet, ResourceSources, discover_resources
from knightcode._resources.expansion import expand_input
from knightcode._resources.skills import Skill
from knightcode._resources.templates import (
    PromptTemplate,
    expand_template,
    load_templates_from_dir,
    parse_command_args,
    substitute_args,
)


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("", []),
        ("   ", []),
        ("a b c", ["a", "b", "c"]),
        ("a   b\tc", ["a", "b", "c"]),
        ('a "b c" d', ["a", "b c", "d"]),
        ("a 'b c' d", ["a", "b c", "d"]),
        ('x"y z"w', ["xy zw"]),
        ("'it\"s' ok", ['it"s', "ok"]),
        ('"unclosed rest', ["unclosed rest"]),
        ('a "" b', ["a", "b"]),
    ],
)
def test_parse_command_args(text: str, args: list[str]) -> None:
    assert parse_command_args(text) == args


ABCD = ["a", "b", "c", "d"]


@pytest.mark.parametrize(
    ("content", "args", "expected"),
    [
        ("hello $1 and $2", ["world", "pi"], "hello world and pi"),
        ("$1 $2", ["only"], "only "),
        ("$1-$9", ["only"], "only-"),
        ("$0", ["a"], ""),
        ("run $ARGUMENTS", ["a", "b", "c"], "run a b c"),
        ("run $@", ["x", "y"], "run x y"),
        ("$@", [], ""),
        ("$ARGUMENTS|$@", ["a", "b"], "a b|a b"),
        ("${@:2}", ABCD, "b c d"),
        ("${@:2:2}", ABCD, "b c"),
        ("${@:1:2}", ABCD, "a b"),
        ("${@:0}", ["a", "b"], "a b"),
        ("${@:5}", ["a", "b"], ""),
        ("$11", [str(n) for n in range(1, 12)], "11"),
        ("no tokens here", ["a"], "no tokens here"),
        # Arguments are inserted as typed, never substituted again.
        ("$1", ["$2"], "$2"),
        ("$@ $1", ["$1", "x"], "$1 x $1"),
        ("$1", ["$ARGUMENTS"], "$ARGUMENTS"),
    ],
)
def test_substitute_args(content: str, args: list[str], expected: str) -> None:
    assert substitute_args(content, args) == expected


def test_loading_descriptions_and_hints(tmp_path: Path) -> None:
    (tmp_path / "review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: FILE [FOCUS]\n---\nReview $1.\n"
    )
    long_line = "Explain " + "x" * 80
    (tmp_path / "explain.md").write_text(f"\n{long_line}\nmore\n")
    (tmp_path / "notes.txt").write_text("not a template")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.md").write_text("not loaded: subfolders are not scanned")
    load = load_templates_from_dir(tmp_path, "user")
    by_name = {t.name: t for t in load.templates}
    assert sorted(by_name) == ["explain", "review"]
    assert by_name["review"].description == "Review a file"
    assert by_name["review"].argument_hint == "FILE [FOCUS]"
    assert by_name["review"].content == "Review $1."
    assert by_name["explain"].description == long_line[:60] + "..."


def template(name: str, content: str) -> PromptTemplate:
    return PromptTemplate(name, "", content, Path(f"/t/{name}.md"), "test")


def test_expand_template() -> None:
    templates = [template("review", "Review $1 for ${@:2}.")]
    assert expand_template('/review a.py "the parser" tests', templates) == (
        "Review a.py for the parser tests."
    )
    assert expand_template("/review", templates) == "Review  for ."
    assert expand_template("/other x", templates) is None
    assert expand_template("review x", templates) is None


def test_expand_skill(tmp_path: Path) -> None:
    path = tmp_path / "pdf" / "SKILL.md"
    path.parent.mkdir()
    path.write_text("---\nname: pdf\ndescription: PDFs\n---\n\nUse pdftotext.\n")
    resources = ResourceSet(skills=[Skill("pdf", "PDFs", path, "user")])
    expanded = expand_input("/skill:pdf   convert a.pdf", resources)
    assert expanded == (
        f'<skill name="pdf" location="{path.as_posix()}">\n'
        f"References are relative to {path.parent.as_posix()}.\n\n"
        "Use pdftotext.\n</skill>\n\nconvert a.pdf"
    )
    assert expand_input("/skill:pdf", resources).endswith("</skill>")
    assert expand_input("/skill:nope x", resources) == "/skill:nope x"
    assert expand_input("plain", resources) == "plain"


def test_discovery_order_trust_and_collisions(tmp_path: Path) -> None:
    agent_dir, cwd = tmp_path / "agent", tmp_path / "project"
    (agent_dir / "prompts").mkdir(parents=True)
    (cwd / ".knightcode" / "prompts").mkdir(parents=True)
    (agent_dir / "prompts" / "review.md").write_text("user review")
    (cwd / ".knightcode" / "prompts" / "review.md").write_text("project review")
    (cwd / ".knightcode" / "prompts" / "fix.md").write_text("project fix")
    (tmp_path / "extra.md").write_text("extra")
    sources = ResourceSources(
        agent_dir=agent_dir,
        cwd=cwd,
        home=tmp_path,
        setting_prompts=[("../extra.md", cwd)],
    )
    untrusted = discover_resources(sources)
    assert [t.name for t in untrusted.templates] == ["review", "extra"]
    assert any("prompts" in w and "not trusted" in w for w in untrusted.warnings)
    trusted = discover_resources(
        ResourceSources(
            agent_dir=agent_dir, cwd=cwd, home=tmp_path, trusted=True,
            setting_prompts=[("../extra.md", cwd)],
        )
    )  # fmt: skip
    assert [(t.name, t.content) for t in trusted.templates] == [
        ("review", "user review"),
        ("fix", "project fix"),
        ("extra", "extra"),
    ]
    (collision,) = trusted.warnings
    assert '"/review" collision' in collision


def test_command_name_ends_at_any_blank() -> None:
    templates = [template("review", "Review [$@]")]
    assert expand_template("/review\na  b", templates) == "Review [a b]"
    assert expand_template("/review\ta", templates) == "Review [a]"
    assert expand_template("/", templates) is None
