"""Enabling and disabling one resource of a package (``knightcode config enable/disable
SOURCE KIND/NAME``): a ``+path``/``-path`` filter in the package's settings entry.
"""

from __future__ import annotations

from pathlib import Path

from knightcode._errors import UsageError
from knightcode._packages.declared import Declared, Scope, read_declared, scope_root, set_filters
from knightcode._packages.filters import Resource, with_override
from knightcode._packages.installer import package_dir
from knightcode._packages.resources import RESOURCE_KINDS, package_resources
from knightcode._packages.sources import parse_source

SUFFIXES = (".md", ".py", ".json")


def find_package(text: str, scope: Scope, agent_dir: Path, cwd: Path) -> Declared:
    """The installed package ``text`` names in ``scope``'s settings.

    :raises UsageError: it is not declared there (naming those that are, and the other scope
        when the package is declared there), or not installed
    """
    wanted = parse_source(text, cwd).identity
    declared = read_declared(scope, scope_root(scope, agent_dir, cwd))
    found = next((item for item in declared if item.source.identity == wanted), None)
    if found is None:
        other: Scope = "user" if scope == "project" else "project"
        there = read_declared(other, scope_root(other, agent_dir, cwd))
        hint = ""
        if any(item.source.identity == wanted for item in there):
            hint = (
                " (it is the project's: add -l)"
                if other == "project"
                else " (it is the user's: drop -l)"
            )
        names = ", ".join(item.source.text for item in declared) or "none"
        raise UsageError(
            f"unknown package {text!r} in the {scope} settings{hint}; declared: {names}"
        )
    root = package_dir(found.source, found.root)
    if found.source.kind == "pip":
        raise UsageError(f"{found.source.text} is a pip package: it has no resources to enable")
    if root is None or not root.is_dir():
        raise UsageError(
            f"package {found.source.text} is not installed; run 'knightcode install' first"
        )
    return found


def _names(item: Resource, kind: str) -> tuple[str, ...]:
    """What the command line may call a resource: its path, without suffix, ``kind/name``."""
    bare = next((item.rel.removesuffix(s) for s in SUFFIXES if item.rel.endswith(s)), item.rel)
    return (item.rel, bare, f"{kind}/{item.name}")


def find_resource(package: Declared, text: str) -> tuple[str, Resource, bool]:
    """The kind of the resource ``text`` (``KIND/NAME``) names in ``package``, the resource and
    whether it is enabled now.

    :raises UsageError: an unknown kind, or no such resource (naming those there are)
    """
    text = text.strip().removeprefix("./").rstrip("/")
    kind = text.partition("/")[0]
    if kind not in RESOURCE_KINDS:
        raise UsageError(
            f"{text!r}: a resource is KIND/NAME with KIND one of {', '.join(RESOURCE_KINDS)} "
            "(e.g. skills/review)"
        )
    resources = package_resources(package)[kind]
    for rule in range(3):
        for item, on in resources:
            if _names(item, kind)[rule] == text:
                return kind, item, on
    there = ", ".join(item.rel for item, _ in resources) or "none"
    raise UsageError(f"package {package.source.text} has no {text!r}; its {kind}: {there}")


def set_resource_enabled(package: Declared, text: str, on: bool) -> tuple[Resource, bool]:
    """Enable or disable one resource of ``package`` in its settings entry.

    :returns: the resource, and whether its state changed
    """
    kind, resource, before = find_resource(package, text)
    current = package.filters().get(kind)
    filters = [str(item) for item in current] if isinstance(current, list) else None
    set_filters(package.source, package.root, kind, with_override(filters, resource.rel, on))
    return resource, before != on
