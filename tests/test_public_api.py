"""The public API's boundary: what plugins may import, what ``knightcode`` exports, and what
importing it costs.

* Built-in plugins and the example plugins (and ``docs/hook_examples/`` when there is one) are
  written against the public API only: ``knightcode``, ``knightcode.testing`` and
  ``knightcode.rpc`` — never a private module, not even one reached through them.
* ``knightcode.__all__`` resolves; the lazy ``_EXPORTS`` table and the ``if TYPE_CHECKING:``
  imports the type checker reads name the same things; and every exported name lives in a
  private module (the public name is the only way in).
* ``import knightcode`` loads nothing heavy, and ``from knightcode import hookimpl`` only pluggy.
"""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

import knightcode

REPO = Path(__file__).resolve().parent.parent
PUBLIC_MODULES = frozenset({"knightcode", "knightcode.testing", "knightcode.rpc"})
PLUGIN_TREES = ("builtin_plugins", "plugins_examples", "docs/hook_examples")
INIT = Path(knightcode.__file__)
HEAVY = ("httpx", "pydantic", "pluggy")


# --- (a) plugins import the public API only ---------------------------------------------------


def plugin_modules() -> list[Path]:
    """Every Python file of the built-in and example plugins."""
    found: list[Path] = []
    for tree in PLUGIN_TREES:
        root = REPO / tree
        if root.is_dir():
            found += sorted(root.rglob("*.py"))
    return found


def private_imports(source: str) -> list[str]:
    """The imports of knightcode in ``source`` that reach past the public API: another
    ``knightcode`` module, a ``_``-prefixed name taken from a public one, or an
    ``import_module("knightcode._…")`` call.
    """
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_knightcode(alias.name) and alias.name not in PUBLIC_MODULES:
                    found.append(f"line {node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if not _is_knightcode(node.module):
                continue
            if node.module not in PUBLIC_MODULES:
                found.append(f"line {node.lineno}: from {node.module} import ...")
                continue
            for alias in node.names:
                if alias.name.startswith("_") and alias.name != "__version__":
                    found.append(f"line {node.lineno}: from {node.module} import {alias.name}")
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and _is_knightcode(node.args[0].value)
            and node.args[0].value not in PUBLIC_MODULES
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
        ):
            found.append(f"line {node.lineno}: import_module({node.args[0].value!r})")
    return found


def _is_knightcode(module: str) -> bool:
    return module == "knightcode" or module.startswith("knightcode.")


def test_the_plugin_trees_are_scanned() -> None:
    files = {path.relative_to(REPO).as_posix() for path in plugin_modules()}
    assert "builtin_plugins/knightcode_builtins/compaction/compactor.py" in files
    assert "plugins_examples/hello_command.py" in files


@pytest.mark.parametrize(
    "path", plugin_modules(), ids=lambda path: path.relative_to(REPO).as_posix()
)
def test_plugins_import_only_the_public_api(path: Path) -> None:
    assert private_imports(path.read_text(encoding="utf-8")) == []


def test_the_import_scan_finds_every_way_past_the_public_api() -> None:
    source = (
        "import knightcode, knightcode.testing, knightcode.rpc, json\n"
        "from knightcode import hookimpl, __version__\n"
        "from knightcode.testing import ScriptedServer\n"
        "from . import sibling\n"
        "from knightcode_builtins.compaction import compactor\n"
        "import knightcode._hookspecs\n"
        "from knightcode._types import messages\n"
        "from knightcode import _hookspecs\n"
        "from knightcode.testing import _server\n"
        "def later():\n"
        "    from knightcode._agent.session import AgentSession\n"
        "    importlib.import_module('knightcode._llm.registry')\n"
    )
    assert private_imports(source) == [
        "line 6: import knightcode._hookspecs",
        "line 7: from knightcode._types import ...",
        "line 8: from knightcode import _hookspecs",
        "line 9: from knightcode.testing import _server",
        "line 11: from knightcode._agent.session import ...",
        "line 12: import_module('knightcode._llm.registry')",
    ]


# --- (b) what knightcode exports ------------------------------------------------------------


def type_checking_imports() -> dict[str, set[str]]:
    """``module -> names`` of the ``if TYPE_CHECKING:`` imports of ``knightcode/__init__.py``;
    each must be ``name as name`` (an explicit re-export for the type checker).
    """
    imports: dict[str, set[str]] = {}
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1, "one `if TYPE_CHECKING:` block of re-exports"
    for node in blocks[0].body:
        assert isinstance(node, ast.ImportFrom) and node.module, ast.dump(node)
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name} is not re-exported as itself"
            imports.setdefault(node.module, set()).add(alias.name)
    return imports


def exports_table() -> dict[str, set[str]]:
    """The ``_EXPORTS`` table, ``module -> names``."""
    table = knightcode._EXPORTS
    assert all(len(names) == len(set(names)) for names in table.values())
    return {module: set(names) for module, names in table.items()}


def test_every_name_of_all_resolves() -> None:
    assert "__version__" in knightcode.__all__
    assert len(knightcode.__all__) == len(set(knightcode.__all__))
    missing = [name for name in knightcode.__all__ if not hasattr(knightcode, name)]
    assert missing == []
    assert sorted(dir(knightcode)) == sorted(knightcode.__all__)


def test_the_exports_table_matches_the_type_checking_imports() -> None:
    assert exports_table() == type_checking_imports()
    names = [name for names in exports_table().values() for name in names]
    assert len(names) == len(set(names)), "a name exported from two modules"
    assert sorted([*names, "__version__"]) == sorted(knightcode.__all__)


@pytest.mark.parametrize("module", sorted(knightcode._EXPORTS))
def test_exported_names_live_in_private_modules(module: str) -> None:
    assert any(part.startswith("_") for part in module.split(".")[1:]), module
    for name in knightcode._EXPORTS[module]:
        value = getattr(knightcode, name)
        assert value is getattr(sys.modules[module], name)
        if inspect.isclass(value) or inspect.isfunction(value):
            # Defined where the table says, or in another private module (never a public one).
            defined = value.__module__
            assert defined.startswith("knightcode.") and any(
                part.startswith("_") for part in defined.split(".")[1:]
            ), f"{name} is defined in {defined}"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        knightcode.Nope  # noqa: B018


# --- (c) what importing costs -----------------------------------------------------------------


def loaded_by(statement: str) -> dict[str, list[str]]:
    """Run ``statement`` in a fresh interpreter: the top-level packages outside the standard
    library that it loaded (``new``) and the heavy ones present afterwards (``heavy``).
    """
    code = (
        "import json, sys\n"
        "before = set(sys.modules)\n"
        f"{statement}\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "outside = sorted(m for m in new if m not in sys.stdlib_module_names)\n"
        f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "print(json.dumps({'new': outside, 'heavy': heavy}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    loaded: dict[str, list[str]] = json.loads(result.stdout.splitlines()[-1])
    return loaded


def test_import_knightcode_loads_nothing_heavy() -> None:
    assert loaded_by("import knightcode") == {"new": ["knightcode"], "heavy": []}


def test_hookimpl_loads_only_pluggy() -> None:
    assert loaded_by("from knightcode import hookimpl") == {
        "new": ["knightcode", "pluggy"],
        "heavy": ["pluggy"],
    }


def test_the_plugin_contract_types_load_no_model_client() -> None:
    loaded = loaded_by(
        "from knightcode import HookContext, Block, Cancel, ToolResultPatch, AgentMessage"
    )
    assert loaded == {"new": ["knightcode"], "heavy": []}
