"""``knightcode install pip:…`` end to end: real pip, a real wheel, a throwaway environment.

pip installs into the environment knightcode runs from (``sys.executable``), so the test must
not run knightcode from the test venv: that would leave the plugin installed there for every
later test. Instead each test makes a venv without pip (fast: nothing is copied) whose one
``.pth`` file adds the test venv's site-packages, so knightcode, its dependencies and pip import
from there while ``pip install`` writes into the throwaway venv's own site-packages. ``--target``
was the other option, but then the plugin would not be where knightcode looks for entry points,
which is the behaviour under test. The index is switched off (``PIP_NO_INDEX``) and wheels come
from a local folder (``PIP_FIND_LINKS``), so nothing reaches the network.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .conftest import run


def build_wheel(folder: Path, version: str) -> Path:
    """A real wheel of the plugin ``kc-tiny`` (entry point group ``knightcode.plugins``).

    Written with zipfile rather than a build backend so the test needs neither network nor
    setuptools/hatch in the environment; pip installs it like any other wheel.
    """
    folder.mkdir(exist_ok=True)
    path = folder / f"kc_tiny-{version}-py3-none-any.whl"
    info = f"kc_tiny-{version}.dist-info"
    files = {
        "kc_tiny/__init__.py": f'"""A tiny knightcode plugin."""\nVERSION = "{version}"\n',
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: kc-tiny\nVersion: {version}\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
        f"{info}/entry_points.txt": "[knightcode.plugins]\nkc-tiny = kc_tiny\n",
    }
    record = "".join(f"{name},,\n" for name in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr(f"{info}/RECORD", record)
    return path


@pytest.fixture
def throwaway_python(tmp_path: Path) -> str:
    """The python of a new venv that sees the test venv's packages but installs into itself."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    own = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in site.getsitepackages())
    (Path(own) / "_parent_env.pth").write_text(lines)
    return str(python)


@pytest.fixture
def wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "wheels"
    folder.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    return folder


def _plugins(python: str) -> dict[str, str]:
    listed = json.loads(run("config", "list", "--json", python=python).stdout)
    return {record["name"]: record["status"] for record in listed}


def test_wheel_install_loads_the_entry_point_and_remove_uninstalls(
    agent_dir: Path, wheels: Path, throwaway_python: str
) -> None:
    wheel = build_wheel(wheels, "0.1")
    assert _plugins(throwaway_python) == {}
    relative = os.path.relpath(wheel, Path.cwd())
    done = run("install", f"pip:{relative}", python=throwaway_python)
    assert done.returncode == 0, done.stderr
    assert _plugins(throwaway_python) == {"plugin:kc-tiny": "loaded"}
    # Only the throwaway environment has it.
    assert _plugins(sys.executable) == {}
    rows = json.loads(run("list", "--json", python=throwaway_python).stdout)
    assert rows == [
        {
            "source": f"pip:{wheel}",
            "scope": "user",
            "kind": "pip",
            "pinned": True,
            "installed": True,
            "version": "0.1",
        }
    ]
    done = run("remove", "pip:kc-tiny", python=throwaway_python)
    assert done.returncode == 0, done.stderr
    assert _plugins(throwaway_python) == {}
    assert json.loads((agent_dir / "settings.json").read_text())["packages"] == []


def test_update_upgrades_unpinned_and_skips_pinned(
    agent_dir: Path, wheels: Path, throwaway_python: str
) -> None:
    build_wheel(wheels, "0.1")
    assert run("install", "pip:kc-tiny", python=throwaway_python).returncode == 0
    build_wheel(wheels, "0.2")
    done = run("update", python=throwaway_python)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "pip:kc-tiny: 0.2\n"

    done = run("install", "pip:kc-tiny==0.1", python=throwaway_python)
    assert done.returncode == 0, done.stderr
    assert json.loads((agent_dir / "settings.json").read_text())["packages"] == ["pip:kc-tiny==0.1"]
    rows = json.loads(run("list", "--json", python=throwaway_python).stdout)
    assert [row["version"] for row in rows] == ["0.1"]
    assert run("update", python=throwaway_python).stdout == "pip:kc-tiny==0.1: pinned, skipped\n"


def test_pip_failure_shows_pips_words(wheels: Path, throwaway_python: str) -> None:
    done = run("install", "pip:kc-absent==9", python=throwaway_python)
    assert done.returncode == 1
    assert done.stderr.startswith("knightcode: error: pip install kc-absent==9 failed:")
    assert "No matching distribution found for kc-absent==9" in done.stderr
    assert "Traceback" not in done.stderr
