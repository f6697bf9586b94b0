"""The wheel built from the repository holds every package, and they import from it."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from .conftest import REPO


def packages_in_repo() -> set[str]:
    """Every folder with ``__init__.py`` under the two package roots, as dotted names."""
    found = set()
    for root in ("core", "builtin_plugins"):
        base = REPO / root
        for init in base.rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            found.add(".".join(init.parent.relative_to(base).parts))
    return found


def test_wheel_contains_every_subpackage(tmp_path: Path) -> None:
    out = tmp_path / "wheel"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(REPO)],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = out.glob("knightcode-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(tmp_path / "unpacked")
    expected = packages_in_repo()
    assert {
        "knightcode",
        "knightcode._plugins",
        "knightcode._config",
        "knightcode._cli",
        "knightcode_builtins",
    } <= expected
    for package in expected:
        assert f"{package.replace('.', '/')}/__init__.py" in names, package
    assert "knightcode/py.typed" in names
    assert "knightcode_builtins/gondolin/bridge.mjs" in names  # package data the runner starts
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert (
        "knightcode = knightcode.__main__:main"
        in (tmp_path / "unpacked" / entry_points).read_text()
    )

    # Import every package from the unpacked wheel, not from the source tree.
    unpacked = str(tmp_path / "unpacked")
    code = (
        "import importlib, sys\n"
        "for name in sys.argv[1:]:\n"
        "    module = importlib.import_module(name)\n"
        f"    assert module.__file__.startswith({unpacked!r}), module.__file__\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "unpacked")}
    subprocess.run(
        [sys.executable, "-c", code, *sorted(expected)], check=True, env=env, cwd=tmp_path
    )
