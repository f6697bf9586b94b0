"""docs/plugin-hooks.md must document exactly the hooks of knightcode._hookspecs (datasette-style).

Each hook has a section whose heading is its exact signature, e.g.
``### `session_compact(compaction_entry, from_extension, ctx)` ``, and a python example plugin.
"""

from __future__ import annotations

import ast
import inspect
import re
import types
from pathlib import Path

import pluggy
import pytest

from knightcode import _hookspecs as hookspecs
from knightcode._markers import PROJECT_NAME

DOC = Path(__file__).resolve().parent.parent / "docs" / "plugin-hooks.md"

HEADING = re.compile(r"^### `(?P<name>\w+)\((?P<args>[^)]*)\)`$", re.MULTILINE)
CODE_BLOCK = re.compile(r"^```python\n(?P<code>.*?)^```$", re.MULTILINE | re.DOTALL)
HOOK_NAMES = hookspecs.all_hook_names()


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
        assert f"- `{argument}` —" in section, f"{name}: argument {argument} not described"
    for part in ("**When:**", "**Result:**", "**Combination:**"):
        assert part in section, f"{name}: section lacks {part}"


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_section_has_example_plugin(name: str) -> None:
    """Each section shows a complete plugin that implements the hook with a subset of its args."""
    blocks = [m.group("code") for m in CODE_BLOCK.finditer(hook_section(name))]
    assert blocks, f"{name}: no python example"
    implementations = []
    for code in blocks:
        assert "from knightcode import hookimpl" in code, f"{name}: example lacks the import"
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(d, ast.Name) and d.id == "hookimpl" for d in node.decorator_list
            ):
                implementations.append(node)
    assert name in {node.name for node in implementations}, f"{name}: no @hookimpl def {name}"
    for node in implementations:
        assert node.name in HOOK_NAMES, f"{name}: example implements unknown hook {node.name}"
        arguments = [a.arg for a in node.args.args]
        extra = set(arguments) - set(spec_arguments(node.name))
        assert not extra, f"{name}: example {node.name} takes arguments the hook lacks: {extra}"


def test_python_blocks_compile() -> None:
    blocks = [m.group("code") for m in CODE_BLOCK.finditer(doc_text())]
    assert len(blocks) > len(HOOK_NAMES)
    for index, code in enumerate(blocks):
        compile(code, f"{DOC.name}[python block {index}]", "exec")


def test_example_plugins_register_with_pluggy(tmp_path: Path) -> None:
    """Every example that implements hooks loads as a module that pluggy accepts as a plugin."""
    blocks = [m.group("code") for m in CODE_BLOCK.finditer(doc_text())]
    examples = [code for code in blocks if "@hookimpl" in code]
    assert len(examples) >= len(HOOK_NAMES)
    for index, code in enumerate(examples):
        module = types.ModuleType(f"plugin_hooks_example_{index}")
        module.__file__ = str(tmp_path / f"example_{index}.py")
        # Running the example is the point: it must import and define its hooks without error.
        exec(compile(code, module.__file__, "exec"), module.__dict__)
        manager = pluggy.PluginManager(PROJECT_NAME)
        manager.add_hookspecs(hookspecs)
        manager.register(module)  # raises PluginValidationError on a wrong argument name
        manager.check_pending()  # raises on a @hookimpl that matches no hook
        assert manager.get_hookcallers(module), f"example {index} implements no hook"


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_docstring_is_complete(name: str) -> None:
    doc = inspect.getdoc(getattr(hookspecs, name)) or ""
    lines = doc.splitlines()
    assert lines and lines[0].strip(), f"{name}: no summary line"
    assert len(lines) == 1 or not lines[1].strip(), f"{name}: summary must be one line"
    for argument in spec_arguments(name):
        assert f":param {argument}:" in doc, f"{name}: docstring lacks :param {argument}:"
    assert ":returns:" in doc, f"{name}: docstring lacks :returns:"
    assert "Combination:" in doc, f"{name}: docstring lacks Combination:"
    assert ".. versionadded::" in doc, f"{name}: docstring lacks .. versionadded::"
