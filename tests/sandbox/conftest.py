"""Fixtures for the sandbox tests: one :class:`SandboxBackend` per runner, shared by a module.

Each backend has a factory module ``tests/sandbox/factory_<name>.py`` with ``require()`` (raises
when this machine lacks a prerequisite: the tests then fail, they never skip — ``.ci/run``
installs everything) and ``create(workspace, config)`` (a runner over ``workspace`` using the
images and guests the CI set-up provides). Booting a VM or starting a container is the expensive
part, so a module shares one backend per runner; tests use fresh sub-folders of its workspace.
"""

from __future__ import annotations

import importlib
import os
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from knightcode import ExecutionBackend, LocalBackend
from knightcode_builtins.gondolin.backend import SandboxBackend
from knightcode_builtins.gondolin.config import SandboxConfig
from tests.agent.conftest import scripted  # noqa: F401  (the end-to-end tests' fixture)

SANDBOXES = ("bwrap", "container", "gondolin")
ALL = ("local", *SANDBOXES)


REQUIRED = os.environ.get("KNIGHTCODE_REQUIRE_SANDBOXES") == "1"
"""Set by ``.ci/run``, which installs every sandbox: a missing one then fails its tests."""


def need(module: Any) -> None:
    """``module.require()``: a missing prerequisite fails the test in CI
    (``KNIGHTCODE_REQUIRE_SANDBOXES=1``) and skips it elsewhere, naming what is missing and the
    ``scripts/ci/sandbox_*.sh`` that installs it.
    """
    try:
        module.require()
    except RuntimeError as error:
        if REQUIRED:
            raise
        pytest.skip(f"{error} (CI installs it: scripts/ci/sandbox_*.sh)")


# Imported now, at collection: a factory reads the CI's variables and cache paths when it is
# imported, and the tests' hermetic environment hides both (no KNIGHTCODE_*, another HOME).
FACTORIES = {name: importlib.import_module(f"tests.sandbox.factory_{name}") for name in SANDBOXES}


def factory(name: str) -> Any:
    """The factory module of backend ``name`` (its prerequisites checked with :func:`need`)."""
    module = FACTORIES[name]
    need(module)
    return module


async def make_backend(
    name: str, workspace: Path, config: SandboxConfig | None = None
) -> SandboxBackend:
    """A started sandbox backend of runner ``name`` over ``workspace``."""
    module = factory(name)
    base = config or SandboxConfig(backend=name)
    runner = await module.create(workspace, replace(base, backend=name))
    backend = SandboxBackend(runner, workspace, replace(base, backend=name))
    await backend.prepare()
    return backend


@dataclass
class Box:
    """A backend under test and where its workspace is, as the host and the backend see it."""

    name: str
    backend: ExecutionBackend
    host_root: Path
    agent_root: str

    def fresh(self) -> tuple[Path, str]:
        """A new empty folder in the workspace: (host path, the backend's path)."""
        name = f"t-{secrets.token_hex(4)}"
        host = self.host_root / name
        host.mkdir()
        return host, f"{self.agent_root}/{name}"

    @property
    def isolated(self) -> bool:
        return self.name != "local"


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=ALL)
async def box(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Box]:
    workspace = tmp_path_factory.mktemp(f"ws-{request.param}").resolve()
    if request.param == "local":
        yield Box("local", LocalBackend(workspace), workspace, str(workspace))
        return
    backend = await make_backend(request.param, workspace)
    try:
        yield Box(request.param, backend, workspace, "/workspace")
    finally:
        await backend.aclose()
