"""Deciding which plugins to load, in which order, before any of them is imported.

:func:`make_plan` reads the settings (global, and the project's only when trusted), finds every
candidate in DESIGN.md's order — built-ins, installed packages, user extensions, trusted project
extensions, settings paths, ``-e`` paths — and applies ``-NAME`` blocking.
:func:`create_plugin_host` turns a plan into a loaded :class:`~knightcode._plugins.host.PluginHost`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._config.paths import extension_entry_path, project_config_dir
from knightcode._errors import ConfigError
from knightcode._plugins.discovery import (
    BUILTIN_GROUP,
    EXPECTED_BUILTINS,
    KNOWN_BUILTINS,
    PACKAGE_GROUP,
    Candidate,
    allowed_entry_points,
    dedupe,
    entry_point_candidates,
    installed_entry_points,
    matches_block,
    path_candidates,
    scan_extension_dir,
)
from knightcode._plugins.records import PluginKind, PluginRecord, PluginStatus

if TYPE_CHECKING:
    from knightcode._config.loading import Settings
    from knightcode._config.trust import TrustDecision
    from knightcode._plugins.host import PluginFailure, PluginHost


@dataclass(frozen=True)
class HostOptions:
    """What the command line says about plugins.

    :param cwd: the working directory (the project)
    :param agent_dir: the agent directory
    :param extension_paths: ``-e PATH`` values, loaded even with ``no_extensions``
    :param no_extensions: ``--no-extensions``: skip discovered extensions and installed packages
    :param approve: ``--approve``: trust the project for this run only
    :param trace: trace hook calls to stderr (default: ``KNIGHTCODE_TRACE_PLUGINS``)
    """

    cwd: Path
    agent_dir: Path
    extension_paths: tuple[Path, ...] = ()
    no_extensions: bool = False
    approve: bool = False
    trace: bool | None = None


@dataclass
class LoadPlan:
    """The outcome of discovery: what to load, what is blocked, and what to tell the user."""

    found: list[Candidate]
    """Every candidate, in discovery (= load) order."""
    blocked: set[str]
    """Names of the candidates a ``-NAME`` settings entry blocks; they are never imported."""
    missing_builtins: list[str]
    settings: Settings
    trust: TrustDecision
    warnings: list[str] = field(default_factory=list)
    errors: list[ConfigError] = field(default_factory=list)

    @property
    def candidates(self) -> list[Candidate]:
        """The candidates to import, in load order."""
        return [c for c in self.found if c.name not in self.blocked]


def _split_entries(settings: Settings, errors: list[ConfigError]) -> tuple[list[Path], list[str]]:
    """Settings ``extensions`` entries: paths to load and ``-NAME`` names to block."""
    try:
        entries = settings.extension_entries()
    except ConfigError as error:
        errors.append(error)
        return [], []
    paths: list[Path] = []
    blocks: list[str] = []
    for entry, base_dir in entries:
        path = extension_entry_path(entry, base_dir)
        if path is None:
            blocks.append(entry[1:])
        else:
            paths.append(path)
    return paths, blocks


def _package_extensions(settings: Settings, warnings: list[str]) -> list[Candidate]:
    """The ``extensions`` of installed resource packages (settings ``packages``), loaded like
    settings ``extensions`` entries; a declared package that is not installed is a warning.
    """
    from knightcode._packages import declares_packages

    if not declares_packages(settings):
        return []  # nothing declared: don't import the package code on every start
    from knightcode._packages.resources import package_resource_paths

    resources = package_resource_paths(settings)
    warnings.extend(resources.errors)
    warnings.extend(
        f"package {source} is not installed; run 'knightcode install' to fetch it"
        for source in resources.missing
    )
    return path_candidates(resources.paths["extensions"], PluginKind.SETTINGS)


def make_plan(options: HostOptions) -> LoadPlan:
    """Find and order every plugin candidate and apply blocking; imports no plugin code."""
    from knightcode._config.loading import Settings
    from knightcode._config.trust import resolve_trust

    trust = resolve_trust(options.agent_dir, options.cwd, approve=options.approve)
    settings = Settings.load(options.agent_dir, options.cwd, project_trusted=trust.trusted)
    errors: list[ConfigError] = []
    warnings: list[str] = []
    setting_paths, blocks = _split_entries(settings, errors)

    installed = installed_entry_points()  # one scan for both groups
    found: list[Candidate] = entry_point_candidates(
        BUILTIN_GROUP, PluginKind.BUILTIN, "builtin:", installed
    )
    declared = {candidate.name.removeprefix("builtin:") for candidate in found}
    allowed = allowed_entry_points()
    missing = [
        name
        for name in EXPECTED_BUILTINS
        if name not in declared and (allowed is None or f"builtin:{name}" in allowed)
    ]
    if not options.no_extensions:
        found += entry_point_candidates(PACKAGE_GROUP, PluginKind.PACKAGE, "plugin:", installed)
        found += scan_extension_dir(options.agent_dir / "extensions", PluginKind.USER)
        if trust.trusted:
            found += scan_extension_dir(
                project_config_dir(options.cwd) / "extensions", PluginKind.PROJECT
            )
        found += _package_extensions(settings, warnings)
        found += path_candidates(setting_paths, PluginKind.SETTINGS)
    found += path_candidates(options.extension_paths, PluginKind.CLI)
    found = dedupe(found)

    blocked = {c.name for c in found if any(matches_block(c, name) for name in blocks)}
    for name in blocks:
        # A known built-in that is not installed yet is not a typo: blocking it is fine.
        known_builtin = (
            name.startswith("builtin:") and name.removeprefix("builtin:") in KNOWN_BUILTINS
        )
        if not known_builtin and not any(matches_block(c, name) for c in found):
            warnings.append(
                f"settings block an unknown plugin {name!r}; "
                "'knightcode config list' shows the names"
            )
    if trust.notice:
        warnings.append(trust.notice)
    return LoadPlan(found, blocked, missing, settings, trust, warnings, errors)


def create_plugin_host(
    options: HostOptions,
    plan: LoadPlan | None = None,
    on_failure: Callable[[PluginFailure], None] | None = None,
) -> PluginHost:
    """Build a host and load every planned plugin (blocked ones are recorded, never imported).

    :param on_failure: receives plugin failures instead of the default stderr report (the RPC
        mode turns them into ``extension_error`` records)
    """
    from knightcode._plugins.context import FlagValues, HookContext
    from knightcode._plugins.host import PluginHost, trace_enabled

    plan = plan or make_plan(options)
    host = PluginHost(trace=trace_enabled() if options.trace is None else options.trace)
    # The one place the hook context is made; the kernel binds the session and the UI later.
    host.context = HookContext(
        cwd=options.cwd,
        agent_dir=options.agent_dir,
        settings=plan.settings,
        flags=FlagValues(host.flag_defaults, host.flag_values),
        hooks=host.hooks,
        project_trusted=plan.trust.trusted,
    )
    host.options = options
    if on_failure is not None:
        host.on_failure(on_failure)
    apply_plan(host, plan)
    return host


def apply_plan(host: PluginHost, plan: LoadPlan) -> None:
    """Load a plan into an empty host, keeping records of blocked and missing built-ins."""
    for candidate in plan.found:
        if candidate.name in plan.blocked:
            host.add_record(
                PluginRecord(
                    candidate.name,
                    candidate.kind,
                    candidate.source,
                    0,
                    PluginStatus.DISABLED,
                    path=candidate.path,
                )
            )
        else:
            host.load_candidate(candidate)
    for name in plan.missing_builtins:
        host.add_record(
            PluginRecord(
                f"builtin:{name}",
                PluginKind.BUILTIN,
                "(not installed)",
                0,
                PluginStatus.MISSING,
                error=(
                    "declared by knightcode but missing from the installed metadata; "
                    "reinstall knightcode"
                ),
            )
        )
    host.warnings.extend(plan.warnings)
