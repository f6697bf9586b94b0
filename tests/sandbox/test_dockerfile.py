"""The repository's Dockerfile builds, and the image runs knightcode.

Built with docker when its daemon answers, else podman (as here). No registry image can be
pulled here, so the build uses ``--build-arg BASE=localhost/knightcode-base:bookworm``, a Debian
rootfs with python3 made by ``scripts/ci/sandbox_container.sh`` (once per machine) — the
Dockerfile itself is the one users build with the default ``python:3.11-slim``.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import knightcode
from knightcode_builtins.gondolin.container import choose_cli

from . import factory_container as factory

ROOT = Path(__file__).resolve().parents[2]
BASE_IMAGE = factory.BASE_IMAGE


def engine() -> list[str]:
    """The container program, with the podman settings this kind of machine needs."""
    cli = asyncio.run(choose_cli(None))
    if os.path.basename(cli) == "podman":
        return [cli, "--runtime", factory.RUNTIME, *(f"--ulimit={u}" for u in factory.ULIMITS)]
    return [cli]


def run(argv: list[str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def image() -> Iterator[str]:
    cli = engine()
    if run([cli[0], "image", "inspect", BASE_IMAGE]).returncode != 0:
        raise RuntimeError(f"the base image {BASE_IMAGE} is missing; run {factory.SETUP}")
    tag = f"localhost/knightcode-dockerfile-test:{secrets.token_hex(4)}"
    began = time.monotonic()
    # podman takes --runtime/--ulimit on build as well; --layers=false keeps no cache images
    build = [cli[0], "build", *cli[1:], "--build-arg", f"BASE={BASE_IMAGE}", "-t", tag]
    if os.path.basename(cli[0]) == "podman":
        build.append("--layers=false")
    built = run([*build, str(ROOT)])
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    print(f"image built in {time.monotonic() - began:.1f} s")
    try:
        yield tag
    finally:
        run([cli[0], "rmi", "-f", tag])


def container(image: str, *args: str, entrypoint: str | None = None) -> str:
    cli = engine()
    argv = [cli[0], "run", "--rm", *cli[1:], "--network", "none"]
    if entrypoint is not None:
        argv += ["--entrypoint", entrypoint]
    result = run([*argv, image, *args], timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_image_runs_knightcode_version(image: str) -> None:
    assert container(image, "--version").strip() == f"knightcode {knightcode.__version__}"


def test_the_image_has_the_tools_and_starts_in_workspace(image: str) -> None:
    out = container(
        image, "-c", "pwd; rg --version | head -1; git --version; command -v knightcode",
        entrypoint="/bin/sh",
    )  # fmt: skip
    lines = out.splitlines()
    assert lines[0] == "/workspace"
    assert lines[1].startswith("ripgrep ") and lines[2].startswith("git version")
    assert lines[3] == "/opt/knightcode/bin/knightcode"
    # the checkout was installed, not copied in whole
    assert container(image, "-c", "ls /tmp", entrypoint="/bin/sh").strip() == ""


def test_the_dockerfile_documents_the_run_recipe() -> None:
    text = (ROOT / "Dockerfile").read_text()
    header = text.split("\nARG ", 1)[0]
    assert "ARG BASE=python:3.11-slim" in text
    assert '-v "$PWD:/workspace"' in header
    assert "-v knightcode-agent-home:/root/.knightcode/agent" in header
    assert "!pwd" in header


def test_dockerignore_keeps_local_state_out() -> None:
    patterns = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".git", ".venv", "build", "**/*.egg-info", "**/__pycache__"} <= patterns
