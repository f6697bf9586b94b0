"""The async event dispatcher: calls hook implementations in load order and combines results.

Each rule of :class:`knightcode._plugins.combine.Rule` is one small function below. A handler may
be a plain function or ``async def``; its result is awaited when it is awaitable. Handlers that
raise are reported through ``report`` and skipped, except under ``FIRST_BLOCK`` (``tool_call``),
where the exception propagates because a failing guard must block the tool, not wave it through.
"""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from knightcode._plugins.combine import HookRule, Rule

Reporter = Callable[[str, str, BaseException], None]
"""``report(plugin_name, hook_name, exception)``"""


@dataclass(frozen=True)
class Handler:
    """One hook implementation, ready to call: which plugin owns it and which arguments it takes."""

    plugin_name: str
    function: Callable[..., Any]
    argnames: tuple[str, ...]


async def _call(handler: Handler, hook: str, kwargs: Mapping[str, Any], trace: bool) -> Any:
    started = time.perf_counter() if trace else 0.0
    result = handler.function(*[kwargs[name] for name in handler.argnames])
    if inspect.isawaitable(result):
        result = await result
    if trace:
        elapsed = (time.perf_counter() - started) * 1000
        shown = repr(result)
        shown = shown if len(shown) <= 120 else shown[:117] + "..."
        print(
            f"knightcode trace: {hook} -> {handler.plugin_name} ({elapsed:.2f} ms) = {shown}",
            file=sys.stderr,
        )
    return result


async def dispatch(
    hook: str,
    rule: HookRule,
    handlers: Sequence[Handler],
    kwargs: dict[str, Any],
    report: Reporter,
    trace: bool = False,
) -> Any:
    """Run ``handlers`` for ``hook`` with ``kwargs`` and combine their results by ``rule``."""
    if trace:
        print(
            f"knightcode trace: {hook} ({len(handlers)} handler(s), rule {rule.rule.value})",
            file=sys.stderr,
        )
    combiner = _COMBINERS[rule.rule]
    return await combiner(hook, rule, handlers, kwargs, report, trace)


async def _isolated(
    handler: Handler, hook: str, kwargs: Mapping[str, Any], report: Reporter, trace: bool
) -> tuple[bool, Any]:
    """Call one handler; a raise is reported and turns into ``(False, None)``."""
    try:
        return True, await _call(handler, hook, kwargs, trace)
    except Exception as error:
        report(handler.plugin_name, hook, error)
        return False, None


async def _notify(
    hook: str,
    rule: HookRule,
    handlers: Sequence[Handler],
    kwargs: dict[str, Any],
    report: Reporter,
    trace: bool,
) -> None:
    for handler in handlers:
        await _isolated(handler, hook, kwargs, report, trace)
    return None


async def _cancel_or_last(
    hook: str,
    rule: HookRule,
    handlers: Sequence[Handler],
    kwargs: dict[str, Any],
    report: Reporter,
    trace: bool,
) -> Any:
    kept = None
    for handler in handlers:
        ok, result = await _isolated(handler, hook, kwargs, report, trace)
        if not ok or not result:
            continue
        if isinstance(result, Mapping) and result.get("cancel"):
            return result
        kept = result
    return kept


async def _first_block(
    hook: str,
    rule: HookRule,
    handlers: Sequence[Handler],
    kwargs: dict[str, Any],
    report: Reporter,
    trace: bool,
) -> Any:
    for handler in handlers:
        result = await _call(handler, hook, kwargs, trace)
        if isinstance(result, Mapping) and result.get("block"):
            return result
    return None


PATCH_FIELDS = ("content", "details", "is_error")


async def _patch_chain(
    hook: str,
    rule: HookRule,
    handlers: Sequence[Handler],
    kwargs: dict[str, Any],
    report: Reporter,
    trace: bool,
) -> dict[str, Any] | None:
    patched = False
    for handler in handlers:
        ok, result = await _isolated(handler, hook, kwargs, report, trace)
        if not ok or not isinstance(result, Mapping):
            continue
        for field in PATCH_FIELDS:
            if field in result:
                kwargs[field] = result[field]
                patched = True
    return {field: kwargs[field] for field in PATCH_FIELDS} if patched else None


async def _transform_chain(
    hook: str,
    rule: HookRule,
    handlers: Sequence[Handler],
    kwargs: dict[str, Any],
    report: Reporter,
    trace: bool,
) -> Any:
    assert rule.chained is not None
    for handler in handlers:
        ok, result = await _isolated(handler, hook, kwargs, report, trace)
        if ok and result is not None:
            kwargs[rule.chained] = result
    return kwargs[rule.chained]


async def _collect_and_chain(
    hook: str,
    rule: HookRule,
    handlers: Sequence[Handler],
    kwargs: dict[str, Any],
    report: Reporter,
    trace: bool,
) -> dict[str, Any]:
    chained = rule.chained or "system_prompt"
    messages: list[Any] = []
    for handler in handlers:
        ok, result = await _isolated(handler, hook, kwargs, report, trace)
        if not ok or not isinstance(result, Mapping):
            continue
        if result.get("message") is not None:
            messages.append(result["message"])
        if result.get(chained) is not None:
            kwargs[chained] = result[chained]
    return {"messages": messages, chained: kwargs[chained]}


async def _first_result(
    hook: str,
    rule: HookRule,
    handlers: Sequence[Handler],
    kwargs: dict[str, Any],
    report: Reporter,
    trace: bool,
) -> Any:
    for handler in handlers:
        ok, result = await _isolated(handler, hook, kwargs, report, trace)
        if ok and result is not None:
            return result
    return None


async def _input_chain(
    hook: str,
    rule: HookRule,
    handlers: Sequence[Handler],
    kwargs: dict[str, Any],
    report: Reporter,
    trace: bool,
) -> dict[str, Any]:
    transformed = False
    for handler in handlers:
        ok, result = await _isolated(handler, hook, kwargs, report, trace)
        if not ok or not isinstance(result, Mapping):
            continue
        action = result.get("action", "continue")
        if action == "handled":
            return {"action": "handled"}
        if action == "transform":
            transformed = True
            kwargs["text"] = result.get("text", kwargs["text"])
            if "images" in result:
                kwargs["images"] = result["images"]
    return {
        "action": "transform" if transformed else "continue",
        "text": kwargs["text"],
        "images": kwargs["images"],
    }


async def _collect(
    hook: str,
    rule: HookRule,
    handlers: Sequence[Handler],
    kwargs: dict[str, Any],
    report: Reporter,
    trace: bool,
) -> dict[str, list[Any]]:
    collected: dict[str, list[Any]] = {}
    for handler in handlers:
        ok, result = await _isolated(handler, hook, kwargs, report, trace)
        if not ok or not isinstance(result, Mapping):
            continue
        for key, value in result.items():
            bucket = collected.setdefault(key, [])
            if isinstance(value, (list, tuple)):
                bucket.extend(value)
            elif value is not None:
                bucket.append(value)
    return collected


async def _last_result(
    hook: str,
    rule: HookRule,
    handlers: Sequence[Handler],
    kwargs: dict[str, Any],
    report: Reporter,
    trace: bool,
) -> Any:
    kept = None
    for handler in handlers:
        ok, result = await _isolated(handler, hook, kwargs, report, trace)
        if ok and result is not None:
            kept = result
    return kept


async def _register(
    hook: str,
    rule: HookRule,
    handlers: Sequence[Handler],
    kwargs: dict[str, Any],
    report: Reporter,
    trace: bool,
) -> None:
    raise TypeError(f"{hook} is a registration hook; the host calls it when a plugin loads")


Combiner = Callable[
    [str, HookRule, Sequence[Handler], dict[str, Any], Reporter, bool], Awaitable[Any]
]

_COMBINERS: dict[Rule, Combiner] = {
    Rule.NOTIFY: _notify,
    Rule.CANCEL_OR_LAST: _cancel_or_last,
    Rule.FIRST_BLOCK: _first_block,
    Rule.PATCH_CHAIN: _patch_chain,
    Rule.TRANSFORM_CHAIN: _transform_chain,
    Rule.COLLECT_AND_CHAIN: _collect_and_chain,
    Rule.FIRST_RESULT: _first_result,
    Rule.INPUT_CHAIN: _input_chain,
    Rule.COLLECT: _collect,
    Rule.LAST_RESULT: _last_result,
    Rule.REGISTER: _register,
}
