"""Firing hooks through the typed façade (``host.hooks``): load order, awaiting, every
combination rule, result shapes (typed results and the reference's dict forms; a wrong shape is
an extension error naming the plugin and the hook), and which pluggy features work."""

from __future__ import annotations

import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knightcode import (
    AgentStartChanges,
    BashAnswer,
    Block,
    Cancel,
    Handled,
    HookContext,
    PluginMessage,
    Resources,
    ToolResultPatch,
    Transform,
    hookimpl,
)
from knightcode._plugins.host import PluginFailure, PluginHost
from knightcode._tools.local_backend import LocalBackend


def plugin(**hooks: Any) -> types.SimpleNamespace:
    """A plugin object whose attributes are the given hook implementations."""
    return types.SimpleNamespace(**{name: hookimpl(function) for name, function in hooks.items()})


@pytest.fixture
def host(make_host: Callable[..., PluginHost]) -> PluginHost:
    """A host with a real hook context and no plugins (see ``no_installed_plugins``)."""
    return make_host()


async def test_notify_runs_every_handler_in_load_order_and_awaits_async(host: PluginHost) -> None:
    calls: list[str] = []

    async def second(ctx: HookContext) -> None:
        calls.append("second")

    host.add_plugin(plugin(agent_start=lambda ctx: calls.append("first") and None), "one")
    host.add_plugin(plugin(agent_start=second), "two")
    host.add_plugin(plugin(agent_start=lambda: calls.append("third") and None), "three")
    assert await host.hooks.agent_start() is None
    assert calls == ["first", "second", "third"]


async def test_every_handler_gets_the_real_context(host: PluginHost, project_dir: Path) -> None:
    seen: list[Any] = []
    host.add_plugin(plugin(agent_start=lambda ctx: seen.append(ctx) and None), "a")
    await host.hooks.agent_start()
    (ctx,) = seen
    assert isinstance(ctx, HookContext) and ctx is host.context
    assert ctx.cwd == project_dir and ctx.agent is None and ctx.settings is not None


async def test_tryfirst_and_trylast_reorder_within_load_order(host: PluginHost) -> None:
    calls: list[str] = []
    late = types.SimpleNamespace(
        agent_start=hookimpl(trylast=True)(lambda: calls.append("late") and None)
    )
    early = types.SimpleNamespace(
        agent_start=hookimpl(tryfirst=True)(lambda: calls.append("early") and None)
    )
    host.add_plugin(late, "late")
    host.add_plugin(plugin(agent_start=lambda: calls.append("plain") and None), "plain")
    host.add_plugin(early, "early")
    await host.hooks.agent_start()
    assert calls == ["early", "plain", "late"]


async def test_a_raising_observer_is_reported_and_the_rest_still_run(
    host: PluginHost, failures: list[PluginFailure]
) -> None:
    calls: list[str] = []

    def boom() -> None:
        raise RuntimeError("kaput")

    host.add_plugin(plugin(agent_start=boom), "bad")
    host.add_plugin(plugin(agent_start=lambda: calls.append("ok") and None), "good")
    await host.hooks.agent_start()
    assert calls == ["ok"]
    assert [(f.plugin, f.event) for f in failures] == [("bad", "agent_start")]
    assert failures[0].error.startswith("RuntimeError: kaput")


async def test_cancel_short_circuits_and_otherwise_the_last_result_wins(host: PluginHost) -> None:
    calls: list[str] = []

    def first(position: str) -> dict[str, Any]:
        calls.append("first")
        return {"cancel": False}

    host.add_plugin(plugin(session_before_fork=first), "a")
    host.add_plugin(plugin(session_before_fork=lambda: {"skip_conversation_restore": True}), "b")
    verdict = await host.hooks.session_before_fork(entry_id="e", position="at")
    assert verdict is not None and not isinstance(verdict, Cancel)
    assert verdict.skip_conversation_restore is True

    host.add_plugin(plugin(session_before_fork=lambda: Cancel()), "canceller")
    host.add_plugin(plugin(session_before_fork=lambda: calls.append("never")), "after")
    calls.clear()
    assert await host.hooks.session_before_fork(entry_id="e", position="at") == Cancel()
    assert calls == ["first"]
    assert await host.hooks.session_before_switch(reason="new", target_session_file=None) is None


async def test_tool_call_first_block_wins_and_exceptions_propagate(
    host: PluginHost, failures: list[PluginFailure]
) -> None:
    seen: list[str] = []
    host.add_plugin(plugin(tool_call=lambda tool_name: seen.append(tool_name)), "watcher")
    host.add_plugin(
        plugin(tool_call=lambda tool_name: {"block": tool_name == "bash", "reason": "no shell"}),
        "guard",
    )
    host.add_plugin(plugin(tool_call=lambda: seen.append("after-guard")), "late")
    assert await host.hooks.tool_call(tool_call_id="1", tool_name="bash", input={}) == Block(
        "no shell"
    )
    assert seen == ["bash"]
    assert await host.hooks.tool_call(tool_call_id="1", tool_name="read", input={}) is None
    assert seen == ["bash", "read", "after-guard"]

    def crash() -> None:
        raise PermissionError("policy engine down")

    host.add_plugin(plugin(tool_call=crash), "crasher")
    with pytest.raises(PermissionError, match="policy engine down"):
        await host.hooks.tool_call(tool_call_id="1", tool_name="read", input={})
    assert failures == []  # raising is how a guard blocks (the reference's way): not a failure


async def test_a_guard_returning_a_wrong_shape_blocks_the_call_and_is_reported(
    host: PluginHost, failures: list[PluginFailure]
) -> None:
    host.add_plugin(plugin(tool_call=lambda: {"blok": True}), "typo")
    with pytest.raises(Exception, match=r"unknown key 'blok'; expected Block\(reason\) or None"):
        await host.hooks.tool_call(tool_call_id="1", tool_name="bash", input={})
    (failure,) = failures
    assert (failure.plugin, failure.event) == ("typo", "tool_call")
    assert "returned {'blok': True}: unknown key 'blok'" in failure.error


async def test_tool_result_patches_chain_field_by_field(host: PluginHost) -> None:
    seen: list[Any] = []

    def add_details(content: Any) -> ToolResultPatch:
        return ToolResultPatch(details={"seen": content})

    def redact(content: Any, details: Any) -> dict[str, Any]:
        seen.append(details)
        return {"content": [{"type": "text", "text": "[redacted]"}]}

    host.add_plugin(plugin(tool_result=add_details), "a")
    host.add_plugin(plugin(tool_result=redact), "b")
    host.add_plugin(plugin(tool_result=lambda content: seen.append(content)), "c")
    patch = await host.hooks.tool_result(
        tool_call_id="1",
        tool_name="read",
        input={},
        content=[{"type": "text", "text": "secret"}],
        details=None,
        is_error=False,
    )
    assert patch == ToolResultPatch(
        content=[{"type": "text", "text": "[redacted]"}],
        details={"seen": [{"type": "text", "text": "secret"}]},
        is_error=False,
    )
    assert seen == [
        {"seen": [{"type": "text", "text": "secret"}]},
        [{"type": "text", "text": "[redacted]"}],
    ]


async def test_context_and_provider_request_chain(host: PluginHost) -> None:
    def add(text: str) -> Callable[[list[Any]], list[Any]]:
        return lambda messages: [*messages, {"role": "user", "content": text, "timestamp": 0}]

    host.add_plugin(plugin(context=add("a")), "a")
    host.add_plugin(plugin(context=lambda messages: None), "skip")
    host.add_plugin(plugin(context=add("b")), "b")
    first: Any = {"role": "user", "content": "m", "timestamp": 0}
    result = await host.hooks.context(messages=[first])
    assert [m["content"] for m in result] == ["m", "a", "b"]
    assert first == {"role": "user", "content": "m", "timestamp": 0}  # handlers got a copy
    host.add_plugin(
        plugin(before_provider_request=lambda payload: {**payload, "temperature": 0}), "p"
    )
    assert await host.hooks.before_provider_request(payload={"model": "x"}) == {
        "model": "x",
        "temperature": 0,
    }


async def test_before_agent_start_collects_messages_and_chains_the_system_prompt(
    host: PluginHost,
) -> None:
    host.add_plugin(
        plugin(
            before_agent_start=lambda system_prompt: {
                "system_prompt": system_prompt + " A",
                "message": {"custom_type": "n1", "content": "one"},
            }
        ),
        "a",
    )
    host.add_plugin(
        plugin(
            before_agent_start=lambda system_prompt: AgentStartChanges(
                system_prompt=system_prompt + " B"
            )
        ),
        "b",
    )
    host.add_plugin(
        plugin(before_agent_start=lambda: AgentStartChanges(PluginMessage("n2", "two", False))),
        "c",
    )
    outcome = await host.hooks.before_agent_start(prompt="hi", images=[], system_prompt="S")
    assert outcome.system_prompt == "S A B"
    assert outcome.messages == [PluginMessage("n1", "one"), PluginMessage("n2", "two", False)]


async def test_input_transforms_chain_and_handled_stops(host: PluginHost) -> None:
    calls: list[str] = []
    host.add_plugin(
        plugin(input=lambda text: {"action": "transform", "text": text.upper()}), "upper"
    )
    host.add_plugin(plugin(input=lambda text: {"action": "continue"}), "pass")
    host.add_plugin(plugin(input=lambda text: Transform(text + "!")), "bang")
    outcome = await host.hooks.input(text="hi", images=[], source="rpc")
    assert (outcome.handled, outcome.text, outcome.images) == (False, "HI!", [])

    def handle(text: str) -> Handled | None:
        calls.append(text)
        return Handled() if text.startswith("HI") else None

    host.add_plugin(plugin(input=handle), "handler")
    host.add_plugin(plugin(input=lambda: calls.append("never")), "late")
    assert (await host.hooks.input(text="hi", images=[], source="rpc")).handled is True
    assert calls == ["HI!"]


async def test_user_bash_first_result_wins(host: PluginHost) -> None:
    host.add_plugin(plugin(user_bash=lambda: None), "none")
    host.add_plugin(plugin(user_bash=lambda command: {"result": {"output": command}}), "first")
    host.add_plugin(plugin(user_bash=lambda: BashAnswer("second")), "second")
    answer = await host.hooks.user_bash(command="ls", exclude_from_context=False, cwd=Path("/"))
    assert answer == BashAnswer("ls", exit_code=None)


async def test_resources_discover_collects_every_answer(host: PluginHost) -> None:
    host.add_plugin(
        plugin(resources_discover=lambda: {"skill_paths": ["a"], "prompt_paths": ["p"]}), "a"
    )
    host.add_plugin(plugin(resources_discover=lambda: Resources(skill_paths=("b", "c"))), "b")
    found = await host.hooks.resources_discover(cwd=Path("/"), reason="startup")
    assert found == [Resources(("a",), ("p",)), Resources(("b", "c"))]


async def test_execution_backend_last_loaded_wins(host: PluginHost, project_dir: Path) -> None:
    builtin, user = LocalBackend(project_dir), LocalBackend(project_dir)
    host.add_plugin(plugin(execution_backend=lambda: builtin), "builtin:gondolin")
    host.add_plugin(plugin(execution_backend=lambda: None), "undecided")
    host.add_plugin(plugin(execution_backend=lambda: user), "ext:user")
    assert await host.hooks.execution_backend() is user


async def test_a_wrong_result_is_an_extension_error_naming_plugin_and_hook(
    host: PluginHost, failures: list[PluginFailure], project_dir: Path
) -> None:
    backend = LocalBackend(project_dir)
    host.add_plugin(plugin(execution_backend=lambda: "not a backend"), "confused")
    host.add_plugin(plugin(session_before_switch=lambda: {"cancel": True, "why": 1}), "typo")
    host.add_plugin(plugin(context=lambda: "not messages"), "stringly")
    host.add_plugin(plugin(agent_start=lambda: {"cancel": True}), "hopeful")
    host.add_plugin(plugin(execution_backend=lambda: backend), "fine")
    assert await host.hooks.execution_backend() is backend
    assert await host.hooks.session_before_switch(reason="new", target_session_file=None) is None
    assert await host.hooks.context(messages=[]) == []
    await host.hooks.agent_start()
    reported = {(f.plugin, f.event): f.error for f in failures}
    assert set(reported) == {
        ("confused", "execution_backend"),
        ("typo", "session_before_switch"),
        ("stringly", "context"),
        ("hopeful", "agent_start"),
    }
    assert (
        "returned 'not a backend': expected an ExecutionBackend"
        in reported[("confused", "execution_backend")]
    )
    assert (
        "unknown key 'why'; expected Cancel() or None"
        in reported[("typo", "session_before_switch")]
    )
    assert "expected None: this hook's result is ignored" in reported[("hopeful", "agent_start")]


async def test_ctx_without_a_context_is_refused() -> None:
    with pytest.raises(RuntimeError, match="no hook context"):
        host = PluginHost()
        host.add_plugin(plugin(agent_start=lambda: None), "a")
        await host.hooks.agent_start()


async def test_trace_goes_to_stderr(host: PluginHost, capsys: pytest.CaptureFixture[str]) -> None:
    host.trace = True
    host.add_plugin(plugin(before_provider_request=lambda payload: {"n": 1}), "tracer")
    await host.hooks.before_provider_request(payload={})
    err = capsys.readouterr().err
    assert "knightcode trace: before_provider_request (1 handler(s), rule transform-chain)" in err
    assert "before_provider_request -> tracer (" in err and "= {'n': 1}" in err


def test_every_hook_has_a_facade_method_with_the_spec_arguments() -> None:
    import inspect

    from knightcode import Hooks, _hookspecs as hookspecs
    from knightcode._plugins.host import REGISTRATION_HOOKS

    for name in hookspecs.all_hook_names():
        if name in REGISTRATION_HOOKS:
            continue
        spec = [p for p in inspect.signature(getattr(hookspecs, name)).parameters if p != "ctx"]
        method = getattr(Hooks, name)
        facade = [p for p in inspect.signature(method).parameters if p != "self"]
        assert facade == spec, name


# --- pluggy features ----------------------------------------------------------------------------


def test_a_wrapper_plugin_is_refused_at_load(
    host: PluginHost, failures: list[PluginFailure]
) -> None:
    def context(messages: Any) -> Any:
        result = yield
        return result

    wrapper = types.SimpleNamespace(context=hookimpl(wrapper=True)(context))
    record = host.add_plugin(wrapper, "wrapping")
    assert record.status.value == "failed"
    assert record.error is not None and "hook 'context' is marked wrapper=True" in record.error
    assert "pluggy wrappers are not supported" in record.error
    assert [(f.plugin, f.event) for f in failures] == [("wrapping", "load")]
    assert not host.has_handlers("context")

    old_style = types.SimpleNamespace(agent_start=hookimpl(hookwrapper=True)(context))
    record = host.add_plugin(old_style, "old-style")
    assert record.error is not None and "hookwrapper=True" in record.error


async def test_specname_implements_a_hook_under_another_name(host: PluginHost) -> None:
    calls: list[str] = []
    named = types.SimpleNamespace(
        on_start=hookimpl(specname="agent_start")(lambda: calls.append("started") and None)
    )
    record = host.add_plugin(named, "named")
    assert record.error is None
    await host.hooks.agent_start()
    assert calls == ["started"]


def test_optionalhook_lets_a_plugin_implement_a_hook_this_version_lacks(
    host: PluginHost,
) -> None:
    newer = types.SimpleNamespace(session_fancy_new_event=hookimpl(optionalhook=True)(lambda: None))
    assert host.add_plugin(newer, "newer").error is None
    typo = types.SimpleNamespace(sesion_start=hookimpl(lambda: None))
    error = host.add_plugin(typo, "typo").error
    assert error == "implements unknown hook 'sesion_start' (did you mean 'session_start'?)"


def test_registrations_dedupe_and_record_owners(host: PluginHost) -> None:
    from knightcode._plugins.definitions import CommandDefinition

    def register_a(register: Any) -> None:
        register(name="hello", description="from a", handler=print)
        register(CommandDefinition(name="only-a", handler=print))

    def register_b(register: Any) -> None:
        register(name="hello", description="from b", handler=print)

    host.add_plugin(plugin(register_commands=register_a), "a")
    host.add_plugin(plugin(register_commands=register_b), "b")
    commands = host.registrations.commands
    assert commands.names() == ["hello", "only-a"]
    assert commands.owner("hello") == "a"
    assert commands.get("hello").description == "from a"  # type: ignore[union-attr]
    assert host.registrations.conflicts == [
        "b registers 'hello', already registered by a; keeping the first"
    ]


def test_async_registration_is_refused(host: PluginHost, failures: list[PluginFailure]) -> None:
    async def register_tools(register: Any) -> None:
        return None

    record = host.add_plugin(plugin(register_tools=register_tools), "async-reg")
    assert not record.enabled
    assert "must be a plain function" in failures[0].error
