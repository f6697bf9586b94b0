"""``PluginHost``: the typed façade over one ``pluggy.PluginManager("knightcode")``.

The host owns the plugins' lifecycle — load in order, validate, register, unload — and is the
only way the rest of knightcode talks to plugins: :meth:`PluginHost.emit` for events (async,
load order, per-hook combination rule) and :attr:`PluginHost.registrations` for what plugins
registered. It is built by :func:`knightcode._plugins.planning.create_plugin_host`; there are no
module globals, so every test gets a fresh host.
"""

from __future__ import annotations

import difflib
import inspect
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pluggy

from knightcode import _hookspecs as hookspecs
from knightcode._markers import PROJECT_NAME
from knightcode._plugins.combine import HookRule, Rule, rule_of
from knightcode._plugins.context import ExtensionContext
from knightcode._plugins.discovery import Candidate
from knightcode._plugins.dispatch import Handler, dispatch
from knightcode._plugins.loader import (
    describe_exception,
    forget_extension_modules,
    load_candidate,
    source_stamp,
)
from knightcode._plugins.records import PluginKind, PluginRecord, PluginStatus
from knightcode._plugins.registry import Registrations, build_definition

if TYPE_CHECKING:
    from knightcode._plugins.planning import HostOptions

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
        self.records: list[PluginRecord] = []
        self.warnings: list[str] = []
        self.context: ExtensionContext | None = None
        self.options: HostOptions | None = None
        self.flag_values: dict[str, Any] = {}
        self._staged: dict[str, list[tuple[str, Any]]] = {}
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

    def _report_handler_error(self, plugin_name: str, hook: str, error: BaseException) -> None:
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
            if isinstance(error, KeyboardInterrupt):
                raise
            return self._fail(record, describe_exception(error, candidate.path))
        self._register(record, plugin)
        return record

    def add_plugin(
        self,
        plugin: Any,
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

    def _unknown_hooks(self, plugin: Any) -> list[str]:
        """Hook implementations in ``plugin`` whose names match no hookspec."""
        unknown = []
        for attr in dir(plugin):
            try:
                opts = self._pm.parse_hookimpl_opts(plugin, attr)
            except Exception:
                continue
            if opts is not None and attr not in self._spec_names:
                close = difflib.get_close_matches(attr, self._spec_names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                unknown.append(f"{attr!r}{hint}")
        return unknown

    def _register(self, record: PluginRecord, plugin: Any) -> None:
        unknown = self._unknown_hooks(plugin)
        if unknown:
            self._fail(record, f"implements unknown hook {', '.join(unknown)}")
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

    def _run_registration(self, plugin_name: str) -> list[tuple[str, Any]]:
        """Call the plugin's registration hooks, collecting what it registers."""
        staged: list[tuple[str, Any]] = []
        for hook in REGISTRATION_HOOKS:
            for impl in getattr(self._pm.hook, hook).get_hookimpls():
                if impl.plugin_name != plugin_name:
                    continue

                def register(*args: Any, _hook: str = hook, **kwargs: Any) -> None:
                    staged.append((_hook, build_definition(_hook, args, kwargs)))

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
                for hook, definition in self._staged.get(record.name, ()):
                    conflict = registrations.by_hook(hook).add(definition, record.name)
                    if conflict:
                        registrations.conflicts.append(conflict)
            self._registrations = registrations
        return self._registrations

    def flag_value(self, name: str) -> Any:
        """The value of a plugin flag on this command line (its default when not given)."""
        if name in self.flag_values:
            return self.flag_values[name]
        flag = self.registrations.flags.get(name)
        return flag.default if flag else None

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
        handlers = tuple(
            Handler(impl.plugin_name or "?", impl.function, tuple(impl.argnames)) for impl in ranked
        )
        self._handlers[hook] = handlers
        return handlers

    def rule(self, hook: str) -> HookRule:
        """The combination rule of ``hook``."""
        return self._rules[hook]

    async def emit(self, hook: str, /, **kwargs: Any) -> Any:
        """Fire ``hook`` with keyword arguments and return the combined result.

        ``ctx`` is supplied from :attr:`context` when the caller does not pass it.
        """
        if hook not in self._spec_names:
            raise KeyError(f"unknown hook {hook!r}")
        handlers = self.handlers(hook)
        if not handlers:
            return _empty_result(self._rules[hook], kwargs)
        kwargs.setdefault("ctx", self.context)
        return await dispatch(
            hook, self._rules[hook], handlers, kwargs, self._report_handler_error, self.trace
        )

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


def _empty_result(rule: HookRule, kwargs: dict[str, Any]) -> Any:
    """What a hook returns when nobody implements it (the same as all handlers passing)."""
    if rule.rule is Rule.TRANSFORM_CHAIN and rule.chained:
        return kwargs.get(rule.chained)
    if rule.rule is Rule.COLLECT_AND_CHAIN:
        chained = rule.chained or "system_prompt"
        return {"messages": [], chained: kwargs.get(chained)}
    if rule.rule is Rule.INPUT_CHAIN:
        return {"action": "continue", "text": kwargs.get("text"), "images": kwargs.get("images")}
    if rule.rule is Rule.COLLECT:
        return {}
    return None
