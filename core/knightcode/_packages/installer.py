"""Fetching packages: ``git`` clones and pulls, ``pip`` installs into knightcode's own Python.

pip runs as ``sys.executable -m pip`` so the distribution lands in the environment knightcode
runs from, where discovery finds its ``knightcode.plugins`` entry points (the way ``llm
install`` works). Failures become :class:`PackageError` carrying the tool's last stderr lines.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from knightcode._errors import KnightcodeError
from knightcode._packages.sources import Source

_TAIL_LINES = 12


class PackageError(KnightcodeError):
    """git or pip failed (exit 1: not the user's typing, but something they can look into)."""


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[-_TAIL_LINES:])


def _run(command: list[str], what: str, cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(
            command, cwd=cwd, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        raise PackageError(f"{what}: {command[0]} is not installed") from None
    if done.returncode != 0:
        detail = _tail(done.stderr) or _tail(done.stdout) or f"exit status {done.returncode}"
        raise PackageError(shown_url(f"{what} failed:\n{detail}"))
    return done.stdout


def package_dir(source: Source, root: Path) -> Path | None:
    """The directory a resource package's files are in (None for pip packages).

    ``root`` is the scope's folder: git clones go to ``<root>/packages/git/<host>/<path>``.
    """
    if source.kind == "git":
        assert source.location is not None
        return root / "packages" / "git" / source.location
    if source.kind == "local":
        return Path(source.target)
    return None


def shown_url(url: str) -> str:
    """Text fit for messages: a password or token in a URL in it is replaced by ``***``."""
    return re.sub(r"([a-z][a-z0-9+.-]*://)[^/@\s]+@", r"\1***@", url)


def _git(*args: str, cwd: Path | None = None, what: str) -> str:
    # GIT_TERMINAL_PROMPT is not set: a private repository may still ask for credentials on
    # a terminal, as ``git clone`` would; stdin is closed, so without one it just fails.
    return _run(["git", *args], what, cwd)


def git_fetch(source: Source, dest: Path) -> None:
    """Clone ``source`` into ``dest`` (or fetch when it is already there) and check out its ref.

    An existing clone installed again without a ref goes back to the remote's default branch
    at its newest commit, so a package pinned before can be unpinned (and ``update`` then pulls).
    """
    if (dest / ".git").exists():
        _git("fetch", "--quiet", "--tags", "origin", cwd=dest, what=f"git fetch in {dest}")
        if source.ref is None:
            head = _git(
                "symbolic-ref", "--short", "refs/remotes/origin/HEAD", cwd=dest, what="git"
            ).strip()
            branch = head.removeprefix("origin/")
            _git("checkout", "--quiet", "-B", branch, head, cwd=dest, what=f"git checkout {head}")
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        _ignore_clones(dest)
        _git(
            "clone",
            "--quiet",
            source.target,
            str(dest),
            what=f"git clone {shown_url(source.target)}",
        )
    if source.ref is not None:
        _git("checkout", "--quiet", source.ref, cwd=dest, what=f"git checkout {source.ref}")


def _ignore_clones(dest: Path) -> None:
    """Put a ``.gitignore`` of ``*`` in the ``packages/git/`` folder above ``dest``: a project's
    clones are fetched from its settings, never committed with it.
    """
    for parent in dest.parents:
        if parent.name == "git" and parent.parent.name == "packages":
            ignore = parent / ".gitignore"
            if not ignore.exists():
                ignore.write_text("*\n")
            return


def git_pull(dest: Path) -> None:
    """Fast-forward an unpinned clone to its upstream."""
    _git("pull", "--quiet", "--ff-only", cwd=dest, what=f"git pull in {dest}")


def git_version(dest: Path) -> str | None:
    """The checked-out tag or short commit of a clone; None when it is not one."""
    try:
        return _git("describe", "--tags", "--always", cwd=dest, what="git describe").strip()
    except PackageError:
        return None


def remove_clone(dest: Path, root: Path) -> None:
    """Delete a clone, then the folders it leaves empty, ``<host>/<path>`` up to ``packages/``."""
    shutil.rmtree(dest, ignore_errors=True)
    stop = root / "packages"
    parent = dest.parent
    while parent.is_relative_to(stop):
        try:
            if [entry.name for entry in parent.iterdir()] == [".gitignore"]:
                (parent / ".gitignore").unlink()  # ours (see _ignore_clones)
            parent.rmdir()
        except OSError:
            break
        parent = parent.parent


def _pip(*args: str, what: str) -> None:
    _run([sys.executable, "-m", "pip", *args, "--disable-pip-version-check"], what)


def pip_install(source: Source, upgrade: bool = False) -> None:
    """Install (or upgrade) a pip source into the running interpreter's environment."""
    extra = ["--upgrade"] if upgrade else []
    _pip("install", "--quiet", *extra, source.target, what=f"pip install {source.target}")


def pip_uninstall(source: Source) -> None:
    """Uninstall a pip source's distribution from the running environment."""
    name = source.identity.removeprefix("pip:")
    _pip("uninstall", "--yes", "--quiet", name, what=f"pip uninstall {name}")


def pip_version(source: Source) -> str | None:
    """The installed version of a pip source's distribution; None when it is not installed."""
    try:
        return metadata.version(source.identity.removeprefix("pip:"))
    except metadata.PackageNotFoundError:
        return None
