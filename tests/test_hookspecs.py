"""The hookspecs module: exact signatures, combination rules, grouping, and pluggy compatibility."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pluggy
import pytest

from knightcode import _hookspecs as hookspecs
from knightcode._markers import PROJECT_NAME
from knightcode._plugins.combine import RULE_ATTRIBUTE, HookRule, Rule, rule_of

SOURCE = Path(hookspecs.__file__).read_text(encoding="utf-8")

# The contract, banner by banner: name -> (arguments, rule, chained argument).
EXPECTED: dict[str, dict[str, tuple[tuple[str, ...], Rule, str | None]]] = {
    "Registration hooks": {
        "register_tools": (("register",), Rule.REGISTER, None),
        "register_commands": (("register",), Rule.REGISTER, None),
        "register_providers": (("register",), Rule.REGISTER, None),
        "register_flags": (("register",), Rule.REGISTER, None),
        "register_shortcuts": (("register",), Rule.REGISTER, None),
        "execution_backend": (("ctx",), Rule.LAST_RESULT, None),
    },
    "Resource hooks": {
        "resources_discover": (("cwd", "reason", "ctx"), Rule.COLLECT, None),
    },
    "Session lifecycle hooks": {
        "session_start": (("reason", "previous_session_file", "ctx"), Rule.NOTIFY, None),
        "session_delete": (("session_file", "header", "ctx"), Rule.NOTIFY, None),
        "session_shutdown": (("reason", "target_session_file", "ctx"), Rule.NOTIFY, None),
        "session_before_switch": (
            ("reason", "target_session_file", "ctx"),
            Rule.CANCEL_OR_LAST,
            None,
        ),
        "session_before_fork": (("entry_id", "position", "ctx"), Rule.CANCEL_OR_LAST, None),
        "session_before_compact": (
            (
                "preparation",
                "branch_entries",
                "custom_instructions",
                "reason",
                "will_retry",
                "signal",
                "ctx",
            ),
            Rule.CANCEL_OR_LAST,
            None,
        ),
        "session_compact": (("compaction_entry", "from_extension", "ctx"), Rule.NOTIFY, None),
        "session_compact_failed": (
            ("reason", "error_message", "aborted", "will_retry", "from_extension", "ctx"),
            Rule.NOTIFY,
            None,
        ),
        "session_check_compaction": (
            ("trigger", "message", "will_retry", "custom_instructions", "ctx"),
            Rule.FIRST_RESULT,
            None,
        ),
        "session_before_tree": (("preparation", "signal", "ctx"), Rule.CANCEL_OR_LAST, None),
        "session_tree": (
            ("new_leaf_id", "old_leaf_id", "summary_entry", "from_extension", "ctx"),
            Rule.NOTIFY,
            None,
        ),
    },
    "Agent and turn hooks": {
        "before_agent_start": (
            ("prompt", "images", "system_prompt", "ctx"),
            Rule.COLLECT_AND_CHAIN,
            "system_prompt",
        ),
        "agent_start": (("ctx",), Rule.NOTIFY, None),
        "agent_end": (("messages", "will_retry", "ctx"), Rule.NOTIFY, None),
        "agent_before_settle": (("aborted", "ctx"), Rule.NOTIFY, None),
        "turn_start": (("turn_index", "timestamp", "ctx"), Rule.NOTIFY, None),
        "turn_end": (("turn_index", "message", "tool_results", "ctx"), Rule.NOTIFY, None),
        "context": (("messages", "ctx"), Rule.TRANSFORM_CHAIN, "messages"),
        "before_provider_request": (("payload", "ctx"), Rule.TRANSFORM_CHAIN, "payload"),
        "after_provider_response": (("status", "headers", "ctx"), Rule.NOTIFY, None),
    },
    "Message and tool execution hooks": {
        "message_start": (("message", "ctx"), Rule.NOTIFY, None),
        "message_update": (("message", "assistant_message_event", "ctx"), Rule.NOTIFY, None),
        "message_end": (("message", "ctx"), Rule.NOTIFY, None),
        "tool_execution_start": (("tool_call_id", "tool_name", "args", "ctx"), Rule.NOTIFY, None),
        "tool_execution_update": (
            ("tool_call_id", "tool_name", "args", "partial_result", "ctx"),
            Rule.NOTIFY,
            None,
        ),
        "tool_execution_end": (
            ("tool_call_id", "tool_name", "result", "is_error", "ctx"),
            Rule.NOTIFY,
            None,
        ),
    },
    "Tool hooks": {
        "tool_call": (("tool_call_id", "tool_name", "input", "ctx"), Rule.FIRST_BLOCK, None),
        "tool_result": (
            ("tool_call_id", "tool_name", "input", "content", "details", "is_error", "ctx"),
            Rule.PATCH_CHAIN,
            None,
        ),
    },
    "Input and model hooks": {
        "input": (("text", "images", "source", "ctx"), Rule.INPUT_CHAIN, None),
        "user_bash": (("command", "exclude_from_context", "cwd", "ctx"), Rule.FIRST_RESULT, None),
        "model_select": (("model", "previous_model", "source", "ctx"), Rule.NOTIFY, None),
        "thinking_level_select": (("level", "previous_level", "ctx"), Rule.NOTIFY, None),
    },
}
ALL_EXPECTED = {name: spec for group in EXPECTED.values() for name, spec in group.items()}
REGISTRATION = [name for name in ALL_EXPECTED if name.startswith("register_")]
CHAINING_RULES = {Rule.TRANSFORM_CHAIN, Rule.COLLECT_AND_CHAIN}


def arguments(name: str) -> tuple[str, ...]:
    return tuple(inspect.signature(getattr(hookspecs, name)).parameters)


def test_all_hook_names_in_file_order() -> None:
    assert hookspecs.all_hook_names() == list(ALL_EXPECTED)


def test_all_hook_names_only_lists_specs() -> None:
    for name in hookspecs.all_hook_names():
        assert getattr(getattr(hookspecs, name), f"{PROJECT_NAME}_spec", None) is not None
    assert "all_hook_names" not in hookspecs.all_hook_names()


@pytest.mark.parametrize("name", list(ALL_EXPECTED))
def test_signature(name: str) -> None:
    assert arguments(name) == ALL_EXPECTED[name][0]


@pytest.mark.parametrize("name", list(ALL_EXPECTED))
def test_rule_is_declared_explicitly(name: str) -> None:
    """rule_of falls back to NOTIFY; every spec must say its rule, NOTIFY included."""
    function = getattr(hookspecs, name)
    declared = getattr(function, RULE_ATTRIBUTE, None)
    assert isinstance(declared, HookRule), f"{name} has no @combine(...)"
    _, rule, chained = ALL_EXPECTED[name]
    assert rule_of(function) == HookRule(rule, chained)


@pytest.mark.parametrize("name", list(ALL_EXPECTED))
def test_chained_argument_exists(name: str) -> None:
    hook_rule = rule_of(getattr(hookspecs, name))
    if hook_rule.rule in CHAINING_RULES:
        assert hook_rule.chained in arguments(name)
    else:
        assert hook_rule.chained is None


def test_banners_group_the_hooks() -> None:
    banners = {
        title: SOURCE.index(f"# --- {title} ---\n") for title in EXPECTED
    }  # ValueError when a banner is missing
    assert list(banners.values()) == sorted(banners.values()), "banners out of order"
    lines = SOURCE.splitlines()
    banner_lines = {title: lines.index(f"# --- {title} ---") + 1 for title in EXPECTED}
    for title, group in EXPECTED.items():
        for name in group:
            line = inspect.getsourcelines(getattr(hookspecs, name))[1]
            owner = max((b for b in banner_lines.items() if b[1] < line), key=lambda b: b[1])[0]
            assert owner == title, f"{name} sits under '{owner}', expected '{title}'"


@pytest.mark.parametrize("name", REGISTRATION)
def test_registration_hooks_take_register(name: str) -> None:
    assert arguments(name) == ("register",)
    assert rule_of(getattr(hookspecs, name)).rule is Rule.REGISTER


@pytest.mark.parametrize("name", [n for n in ALL_EXPECTED if n not in REGISTRATION])
def test_event_hooks_take_ctx_last(name: str) -> None:
    assert arguments(name)[-1] == "ctx"
    assert arguments(name).count("ctx") == 1


@pytest.mark.parametrize("name", list(ALL_EXPECTED))
def test_spec_body_is_only_the_docstring(name: str) -> None:
    source = inspect.getsource(getattr(hookspecs, name))
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    assert len(function.body) == 1 and isinstance(function.body[0], ast.Expr)
    decorators = [ast.unparse(d) for d in function.decorator_list]
    assert decorators[0] == "hookspec", "@hookspec must be outermost"
    assert decorators[1].startswith("combine("), "@combine must sit below @hookspec"


def test_module_imports_only_the_cheap_kernel_modules() -> None:
    """Imports at run time (outside ``if TYPE_CHECKING``) are the markers and the rules only."""
    imported: set[str] = set()
    for node in ast.parse(SOURCE).body:
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
    assert imported == {
        "__future__",
        "typing",
        "knightcode._markers",
        "knightcode._plugins.combine",
    }


class SubsetPlugin:
    """Implements hooks with only some of their arguments, one of them async."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    @pluggy.HookimplMarker(PROJECT_NAME)
    def session_compact_failed(self, reason: str, aborted: bool) -> None:
        self.calls.append(("session_compact_failed", (reason, aborted)))

    @pluggy.HookimplMarker(PROJECT_NAME)
    def tool_call(self, tool_name: str) -> dict[str, object] | None:
        self.calls.append(("tool_call", tool_name))
        return {"block": True, "reason": "no"} if tool_name == "bash" else None

    @pluggy.HookimplMarker(PROJECT_NAME)
    async def agent_start(self) -> None:
        self.calls.append(("agent_start", None))

    @pluggy.HookimplMarker(PROJECT_NAME)
    def register_tools(self, register: object) -> None:
        self.calls.append(("register_tools", register))


def make_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    return manager


def test_pluggy_accepts_all_specs() -> None:
    manager = make_manager()
    for name in hookspecs.all_hook_names():
        caller = getattr(manager.hook, name)
        assert caller.spec is not None
        assert tuple(caller.spec.argnames) == arguments(name)


def test_pluggy_accepts_plugin_with_argument_subset() -> None:
    manager = make_manager()
    plugin = SubsetPlugin()
    manager.register(plugin, name="subset")
    manager.check_pending()

    results = manager.hook.tool_call(tool_call_id="c1", tool_name="bash", input={}, ctx=None)
    assert results == [{"block": True, "reason": "no"}]
    manager.hook.session_compact_failed(
        reason="manual",
        error_message=None,
        aborted=True,
        will_retry=False,
        from_extension=False,
        ctx=None,
    )
    assert ("session_compact_failed", ("manual", True)) in plugin.calls
    # pluggy itself does not await: the host's dispatcher does. Close the coroutine here.
    [coroutine] = manager.hook.agent_start(ctx=None)
    coroutine.close()


def test_pluggy_rejects_unknown_argument() -> None:
    class Bad:
        @pluggy.HookimplMarker(PROJECT_NAME)
        def tool_call(self, tool_name: str, nonsense: int) -> None:
            return None

    manager = make_manager()
    with pytest.raises(pluggy.PluginValidationError):
        manager.register(Bad(), name="bad")
