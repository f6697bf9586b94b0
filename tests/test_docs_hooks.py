"""docs/plugin-hooks.md is generated from the hookspecs, and every hook's example is a real plugin.

The page is what ``scripts/hook_docs.py`` writes (a stale page fails here), each hook has a section
whose heading is its exact signature (``### `session_compact(compaction_entry, from_extension,
ctx)` ``), and each example under ``docs/hook_examples/`` loads through the real ``-e`` loader
and implements the hook it documents.
"""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

from knightcode import (
    AbortSignal,
    Block,
    CompactionOverride,
    CompactionPreparation,
    CompactionSettings,
    FileOperations,
    PluginHost,
    ToolResultPatch,
    _hookspecs as hookspecs,
)
from knightcode._plugins.combine import Rule
from knightcode._plugins.host import PluginFailure
from knightcode._plugins.planning import HostOptions, create_plugin_host
from knightcode._plugins.records import PluginStatus
from scripts import hook_docs

from .conftest import REPO

DOC = REPO / "docs" / "plugin-hooks.md"
EXAMPLES = REPO / "docs" / "hook_examples"
TEMPLATE = REPO / "docs" / "templates" / "plugin-hooks-intro.md"

HEADING = re.compile(r"^### `(?P<name>\w+)\((?P<args>[^)]*)\)`$", re.MULTILINE)
CODE_BLOCK = re.compile(r"^```python\n(?P<code>.*?)^```$", re.MULTILINE | re.DOTALL)
HOOK_NAMES = hookspecs.all_hook_names()


@pytest.fixture(autouse=True)
def only_the_plugins_under_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """The examples are loaded alone: knightcode's built-ins would only add handlers."""
    monkeypatch.setenv("KNIGHTCODE_LOAD_PLUGINS", "")


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def documented_signatures() -> dict[str, list[str]]:
    """Hook name -> argument names, from the level-3 signature headings."""
    found: dict[str, list[str]] = {}
    for match in HEADING.finditer(doc_text()):
        name = match.group("name")
        assert name not in found, f"{name} is documented twice"
        found[name] = [arg.strip() for arg in match.group("args").split(",") if arg.strip()]
    return found


def spec_arguments(name: str) -> list[str]:
    return list(inspect.signature(getattr(hookspecs, name)).parameters)


def hook_section(name: str) -> str:
    """The text of a hook's section: from its heading to the next level-2 or level-3 heading."""
    text = doc_text()
    match = next(m for m in HEADING.finditer(text) if m.group("name") == name)
    rest = text[match.end() :]
    following = re.search(r"^##+ ", rest, re.MULTILINE)
    return rest[: following.start()] if following else rest


def example(name: str) -> Path:
    return EXAMPLES / f"{name}.py"


def load(agent_dir: Path, project_dir: Path, path: Path) -> tuple[PluginHost, list[PluginFailure]]:
    """Load one extension the way ``knightcode -e PATH`` does."""
    failures: list[PluginFailure] = []
    options = HostOptions(cwd=project_dir, agent_dir=agent_dir, extension_paths=(path,))
    return create_plugin_host(options, on_failure=failures.append), failures


# --- the page is the generator's output -----------------------------------------------------


def test_page_is_what_the_script_writes() -> None:
    assert doc_text() == hook_docs.render(), hook_docs.STALE


def test_check_option_from_the_command_line() -> None:
    """Both ways of running the script work from the repository root and agree with the page."""
    for command in (
        [sys.executable, "-m", "scripts.hook_docs", "--check"],
        [sys.executable, "scripts/hook_docs.py", "--check"],
    ):
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr


def test_check_option_reports_a_stale_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "plugin-hooks.md"
    stale.write_text(doc_text().replace("firstKeptEntryId", "first_kept_entry_id"), "utf-8")
    monkeypatch.setattr(hook_docs, "DOC", stale)
    assert hook_docs.main(["--check"]) == 1
    assert hook_docs.main([]) == 0
    assert stale.read_text(encoding="utf-8") == doc_text()


def test_every_rule_is_explained() -> None:
    assert set(hook_docs.RULES) == set(Rule)
    assert "**not** isolated" in hook_docs.combination(hook_docs.rule_of(hookspecs.tool_call))


def test_page_is_deterministic() -> None:
    assert hook_docs.render() == hook_docs.render()
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", doc_text()), "the page must not carry a date"


def test_relative_links_find_their_files() -> None:
    for target in re.findall(r"\]\((?!https?:|#)([^)#]+)", doc_text()):
        assert (DOC.parent / target).exists(), f"broken link {target}"


# --- every hook has its section --------------------------------------------------------------


def test_hookspecs_found() -> None:
    assert len(HOOK_NAMES) >= 30
    assert len(set(HOOK_NAMES)) == len(HOOK_NAMES)


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_hook_is_documented(name: str) -> None:
    assert name in documented_signatures(), f"hook {name} missing from {DOC.name}"


def test_documented_hooks_exist() -> None:
    unknown = sorted(set(documented_signatures()) - set(HOOK_NAMES))
    assert not unknown, f"{DOC.name} documents hooks that do not exist: {unknown}"


def test_documented_in_spec_order() -> None:
    assert list(documented_signatures()) == HOOK_NAMES


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_documented_signature_matches_spec(name: str) -> None:
    documented = documented_signatures().get(name)
    assert documented == spec_arguments(name), (
        f"{DOC.name} documents {name}({', '.join(documented or [])}) but the hookspec is "
        f"{name}({', '.join(spec_arguments(name))})"
    )


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_section_documents_every_argument(name: str) -> None:
    section = hook_section(name)
    for argument in spec_arguments(name):
        described = re.search(rf"^- `{argument}`\s+\(", section, re.MULTILINE)
        assert described, f"{name}: argument {argument} not described"
    for part in ("**Arguments:**", "**Result", "**Combination**", "*Added in version"):
        assert part in section, f"{name}: section lacks {part}"


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_section_includes_its_example_verbatim(name: str) -> None:
    blocks = [m.group("code") for m in CODE_BLOCK.finditer(hook_section(name))]
    assert blocks == [example(name).read_text(encoding="utf-8").rstrip() + "\n"]


def test_python_blocks_compile() -> None:
    blocks = [m.group("code") for m in CODE_BLOCK.finditer(doc_text())]
    assert len(blocks) > len(HOOK_NAMES)
    for index, code in enumerate(blocks):
        compile(code, f"{DOC.name}[python block {index}]", "exec")


def test_types_section_follows_the_source() -> None:
    """A field of an entry appears under its own name: renaming it changes the page."""
    types = doc_text().split("\n## Types\n", 1)[1]
    compaction_entry = types.split("#### `CompactionEntry`", 1)[1].split("\n#### ", 1)[0]
    assert "`firstKeptEntryId: str`" in compaction_entry
    assert "`usage: `[`Usage`](#usage) *optional*" in compaction_entry
    override = types.split("#### `CompactionOverride`", 1)[1].split("\n#### ", 1)[0]
    assert "`first_kept_entry_id: str`" in override


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_docstring_is_complete(name: str) -> None:
    doc = inspect.getdoc(getattr(hookspecs, name)) or ""
    lines = doc.splitlines()
    assert lines and lines[0].strip(), f"{name}: no summary line"
    assert len(lines) == 1 or not lines[1].strip(), f"{name}: summary must be one line"
    for argument in spec_arguments(name):
        assert f":param {argument}:" in doc, f"{name}: docstring lacks :param {argument}:"
    assert ":returns:" in doc, f"{name}: docstring lacks :returns:"
    assert ".. versionadded::" in doc, f"{name}: docstring lacks .. versionadded::"


# --- every example is a real plugin ----------------------------------------------------------


def test_one_example_per_hook() -> None:
    files = sorted(path.stem for path in EXAMPLES.glob("*.py"))
    assert files == sorted(HOOK_NAMES)


def hook_implementations(path: Path) -> dict[str, list[str]]:
    """``@hookimpl`` function name -> its argument names, read from the file."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if isinstance(target, ast.Name) and target.id == "hookimpl":
                found[node.name] = [a.arg for a in node.args.args]
    return found


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_example_implements_its_hook(name: str) -> None:
    implementations = hook_implementations(example(name))
    assert name in implementations, f"{example(name).name} has no @hookimpl def {name}"
    for hook, arguments in implementations.items():
        assert hook in HOOK_NAMES
        extra = set(arguments) - set(spec_arguments(hook))
        assert not extra, f"{example(name).name}: {hook} takes arguments the hook lacks: {extra}"
    imports = [
        node.module
        for node in ast.walk(ast.parse(example(name).read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("knightcode")
    ]
    assert imports == ["knightcode"], f"{example(name).name}: import only from knightcode"


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_example_loads_through_the_e_loader(name: str, agent_dir: Path, project_dir: Path) -> None:
    host, failures = load(agent_dir, project_dir, example(name))
    assert failures == []
    [record] = host.records
    assert record.status is PluginStatus.LOADED
    assert record.name in {handler.plugin_name for handler in host.handlers(name)}


def test_intro_example_loads(agent_dir: Path, project_dir: Path, tmp_path: Path) -> None:
    """The plugin under "Writing a plugin" works as shown."""
    code = CODE_BLOCK.search(TEMPLATE.read_text(encoding="utf-8"))
    assert code is not None
    path = tmp_path / "hello.py"
    path.write_text(code.group("code"), encoding="utf-8")
    host, failures = load(agent_dir, project_dir, path)
    assert failures == []
    assert host.registrations.commands.get("hello") is not None
    assert host.handlers("session_start")


# --- the examples that answer do what their section says --------------------------------------


async def test_tool_call_example_blocks_without_a_ui(agent_dir: Path, project_dir: Path) -> None:
    host, _ = load(agent_dir, project_dir, example("tool_call"))
    blocked = await host.hooks.tool_call(
        tool_call_id="1", tool_name="bash", input={"command": "rm -rf build"}
    )
    assert blocked == Block("Blocked by the user: rm -rf")
    assert (
        await host.hooks.tool_call(tool_call_id="2", tool_name="bash", input={"command": "ls"})
        is None
    )


async def test_input_example(agent_dir: Path, project_dir: Path) -> None:
    host, _ = load(agent_dir, project_dir, example("input"))
    handled = await host.hooks.input(text="ping", images=[], source="interactive")
    assert handled.handled
    changed = await host.hooks.input(text="?? tuples", images=[], source="interactive")
    assert not changed.handled and changed.text == "Explain briefly: tuples"


async def test_tool_result_example_redacts(agent_dir: Path, project_dir: Path) -> None:
    host, _ = load(agent_dir, project_dir, example("tool_result"))
    patch = await host.hooks.tool_result(
        tool_call_id="1",
        tool_name="bash",
        input={},
        content=[{"type": "text", "text": "key sk-" + "a" * 24}],
        details=None,
        is_error=False,
    )
    assert isinstance(patch, ToolResultPatch)
    assert patch.content == [{"type": "text", "text": "key [redacted]"}]


async def test_session_before_compact_example(agent_dir: Path, project_dir: Path) -> None:
    host, failures = load(agent_dir, project_dir, example("session_before_compact"))
    preparation = CompactionPreparation(
        first_kept_entry_id="e9",
        messages_to_summarize=[],
        turn_prefix_messages=[],
        is_split_turn=False,
        tokens_before=1234,
        previous_summary=None,
        file_ops=FileOperations(),
        settings=CompactionSettings(),
    )
    answer = await host.hooks.session_before_compact(
        preparation=preparation,
        branch_entries=[],
        custom_instructions=None,
        reason="manual",
        will_retry=False,
        signal=AbortSignal(),
    )
    assert isinstance(answer, CompactionOverride)
    assert (answer.first_kept_entry_id, answer.tokens_before) == ("e9", 1234)
    assert failures == []
