"""``PluginHost``: the typed façade over one ``pluggy.PluginManager("knightcode")``.

The host owns the plugins' lifecycle — load in order, validate, register, unload — and is the
only way the rest of knightcode talks to plugins: :attr:`PluginHost.hooks` fires hooks (one typed
method per hook, async, load order, the hook's combination rule) and
:attr:`PluginHost.registrations` holds what plugins registered. It is built by
:func:`knightcode._plugins.planning.create_plugin_host`; there are no module globals, so every
test gets a fresh host.

pluggy features: ``tryfirst``/``trylast`` order the handlers (before and after the load order),
``specname`` implements a hook under another function name, and ``optionalhook`` lets a plugin
implement a hook this version does not have without failing to load. Wrappers
(``wrapper=True``, ``hookwrapper=True``) have no place in knightcode's combination rules, so a
plugin declaring one fails to load with a message saying so — it would otherwise run in a way
its author did not write it for.
"""

from __future__ import annotations

import difflib
import inspect
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pluggy

from knightcode import _hookspecs as hookspecs
from knightcode._markers import PROJECT_NAME
from knightcode._plugins.combine import HookRule, rule_of
from knightcode._plugins.discovery import Candidate
from knightcode._plugins.dispatch import Handler
from knightcode._plugins.hooks import Hooks
from knightcode._plugins.loader import (
    LoadInterrupted,
    describe_exception,
    forget_extension_modules,
    load_candidate,
    source_stamp,
    user_interrupted,
)
from knightcode._plugins.records import PluginKind, PluginRecord, PluginStatus
from knightcode._plugins.registry import Registrations, build_definition

if TYPE_CHECKING:
    from knightcode._plugins.context import FlagValue, HookContext
    from knightcode._plugins.definitions import Definition
    from knightcode._plugins.planning import HostOptions

DEFAULT_HOOK_TIMEOUT = 60.0
"""``hookTimeoutMs``'s default, in seconds."""

REGISTRATION_HOOKS = (
    "register_tools",
    "register_commands",
    "register_providers",
    "register_flags",
    "register_shortcuts",
)


@dataclass(frozen=True)
class PluginFailure:
    """A plugin that failed to load or whose handler raised.

    :param plugin: the plugin's name
    :param source: its file or entry point
    :param event: the hook being run, or ``"load"``
    :param error: one line: the exception type, message and location
    """

    plugin: str
    source: str
    event: str
    error: str


def _print_failure(failure: PluginFailure) -> None:
    if failure.event == "load":
        print(f"knightcode: plugin {failure.plugin} not loaded: {failure.error}", file=sys.stderr)
    else:
        print(
            f"knightcode: plugin {failure.plugin} failed in {failure.event}: {failure.error}",
            file=sys.stderr,
        )


def trace_enabled(environ: os._Environ[str] | dict[str, str] | None = None) -> bool:
    """Whether ``KNIGHTCODE_TRACE_PLUGINS`` asks for hook tracing on stderr."""
    value = (environ if environ is not None else os.environ).get("KNIGHTCODE_TRACE_PLUGINS", "")
    return value not in ("", "0", "false", "no")


class PluginHost:
    """Loads plugins, keeps their records and registrations, and dispatches hooks to them."""

    def __init__(self, *, trace: bool = False) -> None:
        self._pm = pluggy.PluginManager(PROJECT_NAME)
        self._pm.add_hookspecs(hookspecs)
        self._spec_names = frozenset(hookspecs.all_hook_names())
        self._rules: dict[str, HookRule] = {
            name: rule_of(getattr(hookspecs, name)) for name in self._spec_names
        }
        self.trace = trace
        self.hook_timeout: float | None = DEFAULT_HOOK_TIMEOUT
        """Seconds a plugin's handler may take (None: no limit); ``hookTimeoutMs``."""
        self.records: list[PluginRecord] = []
        self.warnings: list[str] = []
        self.context: HookContext | None = None
        """The ``ctx`` handlers receive (set by ``create_plugin_host``)."""
        self.options: HostOptions | None = None
        self.flag_values: dict[str, FlagValue] = {}
        """Values of plugin flags given on the command line (by flag name)."""
        self.model_patterns: list[str] | None = None
        """``--models``: the model scope of this run, over settings ``enabledModels``
        (:mod:`knightcode._modes.model_scope`); None when not given."""
        self.hooks = Hooks(self)
        """Fires hooks: one typed method per hook."""
        self._staged: dict[str, list[Definition]] = {}
        self._handlers: dict[str, tuple[Handler, ...]] = {}
        self._registrations: Registrations | None = None
        self._listeners: list[Callable[[PluginFailure], None]] = []

    # --- failures -------------------------------------------------------------------------

    def on_failure(self, listener: Callable[[PluginFailure], None]) -> Callable[[], None]:
        """Receive plugin failures (stderr printing is the default when nobody listens).

        :returns: a function that removes the listener
        """
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _report(self, failure: PluginFailure) -> None:
        for listener in list(self._listeners) or [_print_failure]:
            listener(failure)

    def report_handler_error(self, plugin_name: str, hook: str, error: BaseException) -> None:
        """Report that ``plugin_name``'s handler of ``hook`` raised or returned a wrong shape."""
        record = self.record(plugin_name)
        source = record.source if record else plugin_name
        self._report(
            PluginFailure(
                plugin_name,
                source,
                hook,
                describe_exception(error, record.path if record else None),
            )
        )

    # --- loading --------------------------------------------------------------------------

    def record(self, name: str) -> PluginRecord | None:
        """The record of the plugin called ``name``."""
        for record in self.records:
            if record.name == name:
                return record
        return None

    def load(self, candidates: Iterable[Candidate]) -> None:
        """Import and register each candidate in order; failures are reported and skipped."""
        for candidate in candidates:
            self.load_candidate(candidate)

    def add_record(self, record: PluginRecord) -> PluginRecord:
        """Keep a record that is not loaded (blocked or missing) so listings can show it."""
        record.order = len(self.records)
        self.records.append(record)
        return record

    def load_candidate(self, candidate: Candidate, order: int | None = None) -> PluginRecord:
        """Import one candidate and register it; on failure the record says why."""
        record = PluginRecord(
            candidate.name,
            candidate.kind,
            candidate.source,
            order=len(self.records),
            path=candidate.path,
        )
        if order is not None:
            record.order = order
        self.records.append(record)
        if self.trace:
            print(f"knightcode trace: loading {record.name} from {record.source}", file=sys.stderr)
        if candidate.error:
            return self._fail(record, candidate.error)
        if candidate.path is not None:
            record.stamp = source_stamp(candidate.path)
        try:
            plugin = load_candidate(candidate)
        except BaseException as error:
            if isinstance(error, KeyboardInterrupt) and user_interrupted():
                raise LoadInterrupted(record.name) from None  # Ctrl-C, not the plugin's raise
            return self._fail(record, describe_exception(error, candidate.path))
        self._register(record, plugin)
        return record

    def add_plugin(
        self,
        plugin: object,
        name: str,
        *,
        kind: PluginKind = PluginKind.CLI,
        source: str | None = None,
    ) -> PluginRecord:
        """Register an already-imported plugin object (for embedding knightcode and for tests)."""
        record = PluginRecord(name, kind, source or name, order=len(self.records))
        self.records.append(record)
        self._register(record, plugin)
        return record

    def _fail(self, record: PluginRecord, reason: str) -> PluginRecord:
        record.status = PluginStatus.FAILED
        record.error = reason
        record.plugin = None
        self._report(PluginFailure(record.name, record.source, "load", reason))
        return record

    def _refusal(self, plugin: object) -> str | None:
        """Why ``plugin`` cannot be registered: a hook implementation named like no hook, or a
        pluggy wrapper (see the module docstring); None when it can.
        """
        unknown: list[str] = []
        for attr in dir(plugin):
            try:
                opts = self._pm.parse_hookimpl_opts(plugin, attr)
            except Exception:
                continue
            if opts is None:
                continue
            name = opts.get("specname") or attr
            if opts.get("wrapper") or opts.get("hookwrapper"):
                kind = "wrapper=True" if opts.get("wrapper") else "hookwrapper=True"
                return (
                    f"hook {name!r} is marked {kind}: knightcode runs every implementation of a "
                    "hook in load order and combines their results by the hook's rule, so pluggy "
                    "wrappers are not supported; return a result instead (docs/plugin-hooks.md)"
                )
            if name not in self._spec_names and not opts.get("optionalhook"):
                close = difflib.get_close_matches(name, self._spec_names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                unknown.append(f"{name!r}{hint}")
        return f"implements unknown hook {', '.join(unknown)}" if unknown else None

    def _register(self, record: PluginRecord, plugin: object) -> None:
        refusal = self._refusal(plugin)
        if refusal is not None:
            self._fail(record, refusal)
            return
        try:
            self._pm.register(plugin, name=record.name)
        except pluggy.PluginValidationError as error:
            self._fail(record, _validation_reason(error))
            return
        except Exception as error:
            self._fail(record, describe_exception(error, record.path))
            return
        try:
            staged = self._run_registration(record.name)
        except Exception as error:
            self._pm.unregister(name=record.name)
            self._fail(record, f"registration failed: {describe_exception(error, record.path)}")
            return
        record.plugin = plugin
        record.status = PluginStatus.LOADED
        record.error = None
        self._staged[record.name] = staged
        self._changed()

    def _run_registration(self, plugin_name: str) -> list[Definition]:
        """Call the plugin's registration hooks, collecting what it registers."""
        staged: list[Definition] = []
        for hook in REGISTRATION_HOOKS:
            for impl in getattr(self._pm.hook, hook).get_hookimpls():
                if impl.plugin_name != plugin_name:
                    continue

                def register(*args: object, _hook: str = hook, **kwargs: object) -> None:
                    staged.append(build_definition(_hook, args, kwargs))

                result = impl.function(*[register for _ in impl.argnames])
                if inspect.isawaitable(result):
                    if inspect.iscoroutine(result):
                        result.close()
                    raise TypeError(f"{hook} must be a plain function, not async")
        return staged

    def unload(self, name: str) -> None:
        """Unregister a plugin and forget its modules; its record is removed."""
        record = self.record(name)
        if record is None:
            return
        if self._pm.has_plugin(name):
            self._pm.unregister(name=name)
        if record.path is not None and record.kind.is_extension:
            forget_extension_modules(record.path)
        self._staged.pop(name, None)
        self.records.remove(record)
        self._changed()

    def _changed(self) -> None:
        self._handlers.clear()
        self._registrations = None

    def sort_records(self, order: Sequence[str]) -> None:
        """Put records in the given name order (after a reload re-ran discovery)."""
        position = {name: index for index, name in enumerate(order)}
        self.records.sort(key=lambda record: position.get(record.name, len(position)))
        for index, record in enumerate(self.records):
            record.order = index
        self._changed()

    # --- registrations --------------------------------------------------------------------

    @property
    def registrations(self) -> Registrations:
        """Tools, commands, providers, flags and shortcuts of the loaded plugins, first wins."""
        if self._registrations is None:
            registrations = Registrations()
            for record in self.records:
                for definition in self._staged.get(record.name, ()):
                    conflict = registrations.add(definition, record.name)
                    if conflict:
                        registrations.conflicts.append(conflict)
            self._registrations = registrations
        return self._registrations

    def flag_defaults(self) -> dict[str, FlagValue]:
        """Every registered plugin flag with its default."""
        return {item.definition.name: item.definition.default for item in self.registrations.flags}

    # --- dispatch -------------------------------------------------------------------------

    def handlers(self, hook: str) -> tuple[Handler, ...]:
        """The implementations of ``hook`` in call order: load order, ``tryfirst`` before the
        rest and ``trylast`` after (pluggy's own order is last-registered-first).
        """
        cached = self._handlers.get(hook)
        if cached is not None:
            return cached
        order = {record.name: record.order for record in self.records}
        impls = getattr(self._pm.hook, hook).get_hookimpls()
        ranked = sorted(
            impls,
            key=lambda impl: (
                0 if impl.tryfirst else 2 if impl.trylast else 1,
                order.get(impl.plugin_name or "", 1 << 30),
            ),
        )
        builtin = {record.name for record in self.records if record.kind is PluginKind.BUILTIN}
        handlers = tuple(
            Handler(
                impl.plugin_name or "?",
                impl.function,
                tuple(impl.argnames),
                bounded=impl.plugin_name not in builtin,
            )
            for impl in ranked
        )
        self._handlers[hook] = handlers
        return handlers

    def rule(self, hook: str) -> HookRule:
        """The combination rule of ``hook``."""
        return self._rules[hook]

    def has_handlers(self, hook: str) -> bool:
        """Whether any plugin implements ``hook`` (lets hot paths skip building arguments)."""
        return bool(self.handlers(hook))


def _validation_reason(error: pluggy.PluginValidationError) -> str:
    """Pluggy's multi-line validation message as one line: which hook, and what is wrong."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    definition = next(
        (
            line.split(":", 1)[1].strip()
            for line in lines
            if line.startswith("hookimpl definition:")
        ),
        "",
    )
    detail = lines[-1] if lines else "invalid hook implementation"
    return f"invalid hook implementation {definition}: {detail}" if definition else detail
