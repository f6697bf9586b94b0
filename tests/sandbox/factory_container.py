"""The ``container`` runner for the sandbox contract suite: podman with the local busybox image.

``scripts/ci/sandbox_container.sh`` installs podman, runc and uidmap and imports
``localhost/knightcode-test-busybox:1`` once per machine. Podman here needs ``--runtime runc``
(crun refuses the hybrid cgroup layout) and lowered ulimits (no CAP_SYS_RESOURCE); they are
settings, passed here as a user would.
"""

from __future__ import annotations

import dataclasses
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path

from knightcode_builtins.gondolin.config import ContainerConfig, SandboxConfig
from knightcode_builtins.gondolin.container import ContainerRunner
from knightcode_builtins.gondolin.runner import Runner

IMAGE = "localhost/knightcode-test-busybox:1"
BASE_IMAGE = "localhost/knightcode-base:bookworm"
"""A Debian image (bash, dash, coreutils): the Dockerfile's base in CI, also run by the tests."""
RUNTIME = "runc"
ULIMITS = ("nofile=1024:1024", "nproc=1024:1024")
SETUP = "scripts/ci/sandbox_container.sh"
SETTINGS = {
    "container": {"cli": "podman", "image": IMAGE, "runtime": RUNTIME, "ulimits": list(ULIMITS)}
}
"""The same sandbox as settings ``sandbox`` (the end-to-end tests run the real executable)."""


def container_config(
    config: SandboxConfig | None = None,
    *,
    image: str = IMAGE,
    ulimits: tuple[str, ...] = ULIMITS,
) -> SandboxConfig:
    """``config`` (default: a container sandbox) running ``image`` with podman and runc."""
    base = config or SandboxConfig(backend="container")
    container = ContainerConfig(
        cli="podman",
        image=image,
        runtime=RUNTIME,
        ulimits=ulimits,
        extra_args=base.container.extra_args,
    )
    return dataclasses.replace(base, backend="container", container=container)


def require() -> None:
    """Raise ``RuntimeError`` naming what is missing for the container tests on this machine."""
    for program in ("podman", RUNTIME):
        if shutil.which(program) is None:
            raise RuntimeError(f"{program} is not installed; run {SETUP}")
    for image in (IMAGE, BASE_IMAGE):
        found = subprocess.run(
            ["podman", "image", "exists", image], capture_output=True, check=False, timeout=60
        )
        if found.returncode != 0:
            raise RuntimeError(f"the test image {image} is missing; run {SETUP}")


def state_dir() -> Path:
    """A folder for runners' private files (each runner makes and removes its own inside)."""
    path = Path(tempfile.gettempdir()) / "knightcode-container-tests"
    path.mkdir(exist_ok=True)
    return path


async def create(workspace: Path, config: SandboxConfig) -> Runner:
    """A container runner over ``workspace`` (not started: it starts on first use)."""
    require()
    return ContainerRunner(
        workspace,
        container_config(config),
        session_id=f"test-{secrets.token_hex(4)}",
        state_dir=state_dir(),
    )
