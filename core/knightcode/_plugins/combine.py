"""How the results of several plugins' handlers for one hook combine.

pluggy calls implementations last-registered-first and stops at the first exception, which suits
none of knightcode's events, so the host walks implementations itself in load order and applies
the rule each hookspec declares (see :func:`rule_of`). The rules follow the reference tool's
"result combination" semantics.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., object])

RULE_ATTRIBUTE = "knightcode_rule"


class Rule(enum.Enum):
    """The combination rules; the value is the phrase used in docs and traces."""

    NOTIFY = "notify"
    """Every handler runs; results are ignored; a raising handler is reported and skipped."""

    CANCEL_OR_LAST = "cancel-or-last"
    """The first result with ``cancel`` true stops the walk and wins; otherwise the last non-empty
    result is kept. Raising handlers are reported and skipped."""

    FIRST_BLOCK = "first-block"
    """The first result with ``block`` true stops the walk and wins. A raising handler is *not*
    isolated: the exception propagates and blocks the tool call; so does a handler that does not
    answer within the hook deadline (reported too)."""

    PATCH_CHAIN = "patch-chain"
    """Each handler may return a partial patch (``content``, ``details``, ``is_error``); patches are
    applied field by field and the patched values are what the next handler sees."""

    TRANSFORM_CHAIN = "transform-chain"
    """Each non-None result replaces the chained argument for the next handler; the final value is
    the result. Raising handlers are reported and skipped."""

    COLLECT_AND_CHAIN = "collect-and-chain"
    """``before_agent_start``: ``message`` results are collected from every handler in order, the
    ``system_prompt`` is chained."""

    FIRST_RESULT = "first-result"
    """The first non-None result wins and stops the walk."""

    INPUT_CHAIN = "input-chain"
    """``input``: ``transform`` results are chained (text and images), the first ``handled`` stops
    the walk; ``continue`` or None passes the input on unchanged."""

    COLLECT = "collect"
    """Every handler's result is collected; list fields are concatenated in load order."""

    LAST_RESULT = "last-result"
    """The last non-None result wins, so a later-loaded plugin overrides an earlier one."""

    REGISTER = "register"
    """Registration: each plugin is called once with a ``register`` callback when it is loaded; an
    exception makes that plugin fail to load (reported, skipped)."""


@dataclass(frozen=True)
class HookRule:
    """A hook's rule plus, for chaining rules, the name of the argument that is chained."""

    rule: Rule
    chained: str | None = None


def combine(rule: Rule, chained: str | None = None) -> Callable[[F], F]:
    """Decorator for hookspecs: record the combination rule on the spec function."""

    def mark(function: F) -> F:
        setattr(function, RULE_ATTRIBUTE, HookRule(rule, chained))
        return function

    return mark


def rule_of(spec_function: Callable[..., object]) -> HookRule:
    """The rule declared on a hookspec function (NOTIFY when none was declared)."""
    found = getattr(spec_function, RULE_ATTRIBUTE, None)
    return found if isinstance(found, HookRule) else HookRule(Rule.NOTIFY)
