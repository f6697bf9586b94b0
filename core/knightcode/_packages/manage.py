"""The operations behind ``knightcode install/remove/update/list``.

Each works on one scope — the user's agent dir or, with ``-l``, the project's ``.knightcode/`` —
and keeps that scope's settings ``packages`` in step with what is installed, so a teammate's
checkout (project scope) or another machine (user scope) can reproduce it with a bare
``knightcode install``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from knightcode._errors import UsageError
from knightcode._packages import installer
from knightcode._packages.declared import (
    Declared,
    Scope,
    forget,
    record,
    scope_root,
)
from knightcode._packages.resources import RESOURCE_KINDS, resources_of
from knightcode._packages.sources import Source, parse_source

Report = Callable[[str], None]


@dataclass(frozen=True)
class Where:
    """The scope an operation works on."""

    scope: Scope
    agent_dir: Path
    cwd: Path

    @property
    def root(self) -> Path:
        return scope_root(self.scope, self.agent_dir, self.cwd)


def fetch(source: Source, root: Path) -> None:
    """Install one source's files (clone, pip install); a local directory must exist."""
    if source.kind == "pip":
        installer.pip_install(source)
    elif source.kind == "git":
        dest = installer.package_dir(source, root)
        assert dest is not None
        fresh = not dest.exists()
        try:
            installer.git_fetch(source, dest)
        except installer.PackageError:
            if fresh:  # a failed clone or a missing ref leaves nothing behind
                installer.remove_clone(dest, root)
            raise
    elif not Path(source.target).is_dir():
        raise UsageError(
            f"no such directory: {source.target} (a Python package is pip:NAME, "
            "a repository git:URL)"
        )


def install(text: str, where: Where) -> tuple[Source, bool]:
    """Install ``text`` and declare it in the scope's settings.

    :returns: the source and whether it was newly declared (False: an entry was replaced)
    """
    source = parse_source(text, where.cwd)
    fetch(source, where.root)
    return source, record(source, where.root)


def missing(declared: list[Declared]) -> list[Declared]:
    """The declared packages that are not installed."""
    absent = []
    for item in declared:
        if item.source.kind == "pip":
            if installer.pip_version(item.source) is None:
                absent.append(item)
        else:
            path = installer.package_dir(item.source, item.root)
            if path is None or not path.is_dir():
                absent.append(item)
    return absent


def remove(text: str, where: Where) -> Declared:
    """Undeclare a package and delete what ``install`` fetched (never a local directory)."""
    source = parse_source(text, where.cwd)
    gone = forget(source, where.root)
    if gone is None:
        raise UsageError(
            f"{text} is not installed in the {where.scope} settings "
            f"({where.root / 'settings.json'}); 'knightcode list' shows the packages"
        )
    if gone.source.kind == "pip":
        if installer.pip_version(gone.source) is not None:
            installer.pip_uninstall(gone.source)
    elif gone.source.kind == "git":
        dest = installer.package_dir(gone.source, where.root)
        assert dest is not None
        installer.remove_clone(dest, where.root)
    return gone


def update(declared: list[Declared], only: str | None, cwd: Path, report: Report) -> None:
    """Update unpinned packages (git pull, pip upgrade); pinned and local ones are skipped.

    :param only: a source naming the single package to update
    """
    wanted = parse_source(only, cwd).identity if only is not None else None
    chosen = [item for item in declared if wanted in (None, item.source.identity)]
    if wanted is not None and not chosen:
        raise UsageError(f"{only} is not installed; 'knightcode list' shows the packages")
    for item in chosen:
        source = item.source
        if source.kind == "local":
            report(f"{source.text}: a local directory, used in place (nothing to update)")
        elif source.pinned:
            report(f"{source.text}: pinned, skipped")
        elif source.kind == "pip":
            installer.pip_install(source, upgrade=True)
            report(f"{source.text}: {installer.pip_version(source) or 'not installed'}")
        else:
            dest = installer.package_dir(source, item.root)
            assert dest is not None
            if not dest.is_dir():
                installer.git_fetch(source, dest)
            else:
                installer.git_pull(dest)
            report(f"{source.text}: {installer.git_version(dest) or 'updated'}")


def describe(item: Declared) -> dict[str, object]:
    """One package as ``list`` shows it: source, scope, kind, version, where, resources."""
    source = item.source
    row: dict[str, object] = {
        "source": source.text,
        "scope": item.scope,
        "kind": source.kind,
        "pinned": source.pinned and source.kind != "local",
    }
    if source.kind == "pip":
        version = installer.pip_version(source)
        row |= {"installed": version is not None, "version": version}
        return row
    path = installer.package_dir(source, item.root)
    assert path is not None
    installed = path.is_dir()
    version = installer.git_version(path) if installed and source.kind == "git" else None
    resources = resources_of(item) if installed else {kind: [] for kind in RESOURCE_KINDS}
    row |= {
        "installed": installed,
        "version": version,
        "path": str(path),
        "resources": {kind: [str(p) for p in paths] for kind, paths in resources.items() if paths},
    }
    return row
