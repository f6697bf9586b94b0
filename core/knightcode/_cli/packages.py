"""``knightcode install/remove/update/list``: the command-line face of :mod:`knightcode._packages`.

A project's packages are code and prompts chosen by whoever wrote its ``.knightcode/settings.json``,
so they are fetched only for a trusted project and after the user says yes (or passes ``--yes``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from knightcode._errors import UsageError
from knightcode._packages.declared import Declared, read_declared
from knightcode._packages.manage import Where

_LOCAL = click.option(
    "-l", "--local", is_flag=True, help="Use the project's .knightcode/ instead of the agent dir."
)


def _where(local: bool) -> Where:
    from knightcode._config.paths import agent_dir

    return Where("project" if local else "user", agent_dir(), Path.cwd())


def _project_trusted(where: Where) -> bool:
    from knightcode._config.trust import resolve_trust

    return resolve_trust(where.agent_dir, where.cwd, approve=False).trusted


def _keeping_trust(where: Where) -> bool:
    """Whether the project was trusted before we change its settings or package files; then
    trust is renewed afterwards: the user's own ``install -l`` or ``update`` must not withdraw it
    (the fingerprint covers the project's package files, see ``knightcode._config.trust``).
    """
    from knightcode._config.trust import TrustStore

    return where.scope == "project" and TrustStore(where.agent_dir).status(where.cwd).state == (
        "trusted"
    )


def _renew_trust(where: Where, was_trusted: bool) -> None:
    from knightcode._config.trust import TrustStore

    if was_trusted:
        TrustStore(where.agent_dir).trust(where.cwd)


def _confirm_project(items: list[Declared], yes: bool) -> None:
    names = ", ".join(item.source.text for item in items)
    if yes:
        return
    if not sys.stdin.isatty():
        raise UsageError(
            f"this project declares packages to install ({names}); "
            "run 'knightcode install --yes' to install them"
        )
    if not click.confirm(f"Install the project's packages {names}?", default=False, err=True):
        raise click.Abort


def _install_declared(yes: bool) -> None:
    """Fetch every declared package that is missing: the user's, then the trusted project's."""
    from knightcode._packages.manage import fetch, missing

    user = _where(False)
    todo = missing(read_declared("user", user.root))
    project = _where(True)
    declared_here = read_declared("project", project.root)
    wanted = missing(declared_here)
    if wanted:
        if not _project_trusted(project):
            raise UsageError(
                f"this project declares packages ({', '.join(i.source.text for i in wanted)}) "
                f"but is not trusted; review {project.root / 'settings.json'} and run "
                "'knightcode trust' first"
            )
        _confirm_project(wanted, yes)
    if not todo and not wanted:
        click.echo("every declared package is installed")
    was_trusted = _keeping_trust(project)
    for item in [*todo, *wanted]:
        fetch(item.source, item.root)
        click.echo(f"installed {item.source.text} ({item.scope})")
    _renew_trust(project, was_trusted)


@click.command("install")
@click.argument("source", required=False)
@_LOCAL
@click.option("-y", "--yes", is_flag=True, help="Install a project's packages without asking.")
def install(source: str | None, local: bool, yes: bool) -> None:
    """Install a package and declare it in settings 'packages'.

    SOURCE is pip:NAME[==VERSION] (a Python plugin, installed into knightcode's environment),
    git:URL[@REF] (a repository with extensions/, skills/, prompts/, themes/, cloned into the
    agent dir or, with -l, the project) or a directory (used in place). Without SOURCE, installs
    what the settings declare and is missing; a project's packages need trust and a yes.
    """
    from knightcode._packages.manage import install as install_source

    if source is None:
        _install_declared(yes)
        return
    where = _where(local)
    was_trusted = _keeping_trust(where)
    installed, added = install_source(source, where)
    _renew_trust(where, was_trusted)
    verb = "installed" if added else "reinstalled"
    click.echo(f"{verb} {installed.text} ({where.scope}: {where.root / 'settings.json'})")
    if where.scope == "project" and not _project_trusted(where):
        click.echo("  the project is not trusted: its packages load after 'knightcode trust'")


@click.command("remove")
@click.argument("source")
@_LOCAL
def remove(source: str, local: bool) -> None:
    """Remove a package: undeclare it and delete its clone or uninstall it (pip)."""
    from knightcode._packages.manage import remove as remove_source

    where = _where(local)
    was_trusted = _keeping_trust(where)
    gone = remove_source(source, where)
    _renew_trust(where, was_trusted)
    click.echo(f"removed {gone.source.text} ({where.scope})")


def _all_declared(trusted_only: bool) -> list[Declared]:
    user, project = _where(False), _where(True)
    declared = read_declared("user", user.root)
    if not trusted_only or _project_trusted(project):
        declared += read_declared("project", project.root)
    return declared


@click.command("update")
@click.argument("source", required=False)
def update(source: str | None) -> None:
    """Update unpinned packages (git pull, pip upgrade); pinned ones (==, @ref) are skipped."""
    from knightcode._packages.manage import update as update_all

    project = _where(True)
    was_trusted = _keeping_trust(project)
    update_all(_all_declared(trusted_only=True), source, Path.cwd(), click.echo)
    _renew_trust(project, was_trusted)


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def list_packages(as_json: bool) -> None:
    """The declared packages: source, scope, version or ref, and their resources."""
    from knightcode._packages.manage import describe

    project = _where(True)
    trusted = _project_trusted(project)
    rows = []
    for item in _all_declared(trusted_only=False):
        row = describe(item)
        if item.scope == "project" and not trusted:
            row["untrusted"] = True
        rows.append(row)
    if as_json:
        json.dump(rows, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return
    if not rows:
        click.echo("no packages (install one with 'knightcode install SOURCE')")
    for row in rows:
        state = str(row["version"] or "") if row["installed"] else "not installed"
        notes = [row["scope"], state, "pinned" if row["pinned"] else ""]
        if row.get("untrusted"):
            notes.append("project not trusted")
        click.echo(f"{row['source']}  ({', '.join(str(n) for n in notes if n)})")
        resources = row.get("resources")
        if isinstance(resources, dict):
            for kind, paths in resources.items():
                click.echo(f"  {kind}: {', '.join(paths)}")


def toggle_resource(package: str, resource: str, *, on: bool, local: bool) -> None:
    """``knightcode config enable/disable SOURCE KIND/NAME [-l]``: edit the package's entry in
    the user's (or with ``-l`` the project's) settings; a trusted project stays trusted.
    """
    from knightcode._packages.toggle import find_package, set_resource_enabled

    where = _where(local)
    declared = find_package(package, where.scope, where.agent_dir, where.cwd)
    was_trusted = _keeping_trust(where)
    item, changed = set_resource_enabled(declared, resource, on)
    _renew_trust(where, was_trusted)
    verb = "enabled" if on else "disabled"
    settings = where.root / "settings.json"
    if where.scope == "user" and _project_overrides(where, declared):
        click.echo(
            f"knightcode: warning: this project declares {declared.source.text} too, and its "
            "entry is the one used here; add -l to change that one",
            err=True,
        )
    if changed:
        click.echo(f"{verb} {item.rel} of {declared.source.text} (in {settings})")
    else:
        click.echo(f"{item.rel} of {declared.source.text} was already {verb} (in {settings})")


def _project_overrides(where: Where, declared: Declared) -> bool:
    """Whether a trusted project here declares the same package (its entry wins)."""
    project = Where("project", where.agent_dir, where.cwd)
    if not (project.root / "settings.json").is_file() or not _project_trusted(project):
        return False
    return any(
        item.source.identity == declared.source.identity
        for item in read_declared("project", project.root)
    )
