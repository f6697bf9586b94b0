"""The ``bwrap`` runner for the sandbox contract suite.

CI installs bubblewrap with ``scripts/ci/sandbox_bwrap.sh``; a machine without it fails the
suite with the reason (never a skip).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from knightcode_builtins.gondolin.bwrap import BwrapRunner
from knightcode_builtins.gondolin.config import SandboxConfig
from knightcode_builtins.gondolin.runner import Runner

NAME = "bwrap"


def require() -> None:
    """Raise ``RuntimeError`` naming what is missing for the bwrap runner on this machine."""
    binary = shutil.which("bwrap")
    if binary is None:
        raise RuntimeError(
            "bwrap is not installed: run scripts/ci/sandbox_bwrap.sh (apt-get install bubblewrap)"
        )
    probe = subprocess.run(
        [binary, "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        raise RuntimeError(f"bwrap cannot create a sandbox here: {probe.stderr.strip()}")


async def create(workspace: Path, config: SandboxConfig) -> Runner:
    """A started bwrap runner over ``workspace``; its private ``/tmp`` lives in a fresh state
    directory beside the workspace (empty again after ``close``).
    """
    state_dir = Path(tempfile.mkdtemp(prefix="bwrap-state-", dir=workspace.parent))
    runner = BwrapRunner(workspace, config, state_dir=state_dir)
    await runner.start()
    return runner
