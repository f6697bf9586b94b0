"""The async dispatcher: load order, awaiting, and every combination rule."""

from __future__ import annotations

import types
from typing import Any

import pytest

from knightcode import hookimpl
from knightcode._plugins.host import PluginFailure, PluginHost


def plugin(**hooks: Any) -> types.SimpleNamespace:
    """A plugin object whose attributes are the given hook implementations."""
    return types.SimpleNamespace(**{name: hookimpl(function) for name, function in hooks.items()})


@pytest.fixture
def host() -> PluginHost:
    return PluginHost()


@pytest.fixture
def failures(host: PluginHost) -> list[PluginFailure]:
    collected: list[PluginFailure] = []
    host.on_failure(collected.append)
    return collected


async def test_notify_runs_every_handler_in_load_order_and_awaits_async(host: PluginHost) -> None:
    calls: list[str] = []

    async def second(ctx: Any) -> None:
        calls.append("second")

    host.add_plugin(plugin(agent_start=lambda ctx: calls.append("first")), "one")
    host.add_plugin(plugin(agent_start=second), "two")
    host.add_plugin(
        plugin(agent_start=lambda: calls.append("third")), "three"
    )  # subset of arguments
    assert await host.emit("agent_start") is None
    assert calls == ["first", "second", "third"]


async def test_tryfirst_and_trylast_reorder_within_load_order(host: PluginHost) -> None:
    calls: list[str] = []
    late = types.SimpleNamespace(agent_start=hookimpl(trylast=True)(lambda: calls.append("late")))
    early = types.SimpleNamespace(
        agent_start=hookimpl(tryfirst=True)(lambda: calls.append("early"))
    )
    host.add_plugin(late, "late")
    host.add_plugin(plugin(agent_start=lambda: calls.append("plain")), "plain")
    host.add_plugin(early, "early")
    await host.emit("agent_start")
    assert calls == ["early", "plain", "late"]


async def test_a_raising_observer_is_reported_and_the_rest_still_run(
    host: PluginHost, failures: list[PluginFailure]
) -> None:
    calls: list[str] = []

    def boom() -> None:
        raise RuntimeError("kaput")

    host.add_plugin(plugin(agent_start=boom), "bad")
    host.add_plugin(plugin(agent_start=lambda: calls.append("ok")), "good")
    await host.emit("agent_start")
    assert calls == ["ok"]
    assert [(f.plugin, f.event) for f in failures] == [("bad", "agent_start")]
    assert failures[0].error.startswith("RuntimeError: kaput")


async def test_cancel_short_circuits_and_otherwise_the_last_result_wins(host: PluginHost) -> None:
    calls: list[str] = []

    def first(reason: str) -> dict[str, Any]:
        calls.append("first")
        return {"cancel": False, "note": 1}

    def second() -> None:
        calls.append("second")

    def third() -> dict[str, Any]:
        calls.append("third")
        return {"note": 3}

    host.add_plugin(plugin(session_before_switch=first), "a")
    host.add_plugin(plugin(session_before_switch=second), "b")
    host.add_plugin(plugin(session_before_switch=third), "c")
    assert await host.emit("session_before_switch", reason="new", target_session_file=None) == {
        "note": 3
    }

    host.add_plugin(
        plugin(session_before_switch=lambda: {"cancel": True}),
        "canceller",
    )
    host.add_plugin(plugin(session_before_switch=lambda: calls.append("never")), "after")
    calls.clear()
    assert await host.emit("session_before_switch", reason="new", target_session_file=None) == {
        "cancel": True
    }
    assert "never" not in calls


async def test_tool_call_first_block_wins_and_exceptions_propagate(host: PluginHost) -> None:
    seen: list[str] = []
    host.add_plugin(plugin(tool_call=lambda tool_name: seen.append(tool_name)), "watcher")
    host.add_plugin(
        plugin(tool_call=lambda tool_name: {"block": tool_name == "bash", "reason": "no shell"}),
        "guard",
    )
    host.add_plugin(plugin(tool_call=lambda: seen.append("after-guard")), "late")
    args = dict(tool_call_id="1", input={})
    assert await host.emit("tool_call", tool_name="bash", **args) == {
        "block": True,
        "reason": "no shell",
    }
    assert seen == ["bash"]
    assert await host.emit("tool_call", tool_name="read", **args) is None
    assert seen == ["bash", "read", "after-guard"]

    def crash() -> None:
        raise PermissionError("policy engine down")

    host.add_plugin(plugin(tool_call=crash), "crasher")
    with pytest.raises(PermissionError, match="policy engine down"):
        await host.emit("tool_call", tool_name="read", **args)


async def test_tool_result_patches_chain_field_by_field(host: PluginHost) -> None:
    seen: list[Any] = []

    def add_details(content: Any) -> dict[str, Any]:
        return {"details": {"seen": content}}

    def redact(content: Any, details: Any) -> dict[str, Any]:
        seen.append(details)
        return {"content": [{"type": "text", "text": "[redacted]"}]}

    host.add_plugin(plugin(tool_result=add_details), "a")
    host.add_plugin(plugin(tool_result=redact), "b")
    host.add_plugin(plugin(tool_result=lambda content: seen.append(content)), "c")
    base = dict(
        tool_call_id="1",
        tool_name="read",
        input={},
        content=[{"type": "text", "text": "secret"}],
        details=None,
        is_error=False,
    )
    result = await host.emit("tool_result", **base)
    assert result == {
        "content": [{"type": "text", "text": "[redacted]"}],
        "details": {"seen": [{"type": "text", "text": "secret"}]},
        "is_error": False,
    }
    assert seen == [
        {"seen": [{"type": "text", "text": "secret"}]},
        [{"type": "text", "text": "[redacted]"}],
    ]
    assert await PluginHost().emit("tool_result", **base) is None


async def test_context_and_provider_request_chain(host: PluginHost) -> None:
    host.add_plugin(plugin(context=lambda messages: messages + ["a"]), "a")
    host.add_plugin(plugin(context=lambda messages: None), "skip")
    host.add_plugin(plugin(context=lambda messages: messages + ["b"]), "b")
    assert await host.emit("context", messages=["m"]) == ["m", "a", "b"]
    host.add_plugin(
        plugin(before_provider_request=lambda payload: {**payload, "temperature": 0}), "p"
    )
    assert await host.emit("before_provider_request", payload={"model": "x"}) == {
        "model": "x",
        "temperature": 0,
    }
    assert await PluginHost().emit("context", messages=["m"]) == ["m"]


async def test_before_agent_start_collects_messages_and_chains_the_system_prompt(
    host: PluginHost,
) -> None:
    host.add_plugin(
        plugin(
            before_agent_start=lambda system_prompt: {
                "system_prompt": system_prompt + " A",
                "message": {"n": 1},
            }
        ),
        "a",
    )
    host.add_plugin(
        plugin(before_agent_start=lambda system_prompt: {"system_prompt": system_prompt + " B"}),
        "b",
    )
    host.add_plugin(plugin(before_agent_start=lambda: {"message": {"n": 2}}), "c")
    result = await host.emit("before_agent_start", prompt="hi", images=[], system_prompt="S")
    assert result == {"messages": [{"n": 1}, {"n": 2}], "system_prompt": "S A B"}


async def test_input_transforms_chain_and_handled_stops(host: PluginHost) -> None:
    calls: list[str] = []
    host.add_plugin(
        plugin(input=lambda text: {"action": "transform", "text": text.upper()}), "upper"
    )
    host.add_plugin(plugin(input=lambda text: {"action": "continue"}), "pass")
    host.add_plugin(plugin(input=lambda text: {"action": "transform", "text": text + "!"}), "bang")
    result = await host.emit("input", text="hi", images=[], source="rpc")
    assert result == {"action": "transform", "text": "HI!", "images": []}

    def handle(text: str) -> dict[str, str] | None:
        calls.append(text)
        return {"action": "handled"} if text.startswith("HI") else None

    host.add_plugin(plugin(input=handle), "handler")
    host.add_plugin(plugin(input=lambda: calls.append("never")), "late")
    assert await host.emit("input", text="hi", images=[], source="rpc") == {"action": "handled"}
    assert calls == ["HI!"]
    assert await PluginHost().emit("input", text="x", images=[], source="rpc") == {
        "action": "continue",
        "text": "x",
        "images": [],
    }


async def test_user_bash_first_result_wins(host: PluginHost) -> None:
    host.add_plugin(plugin(user_bash=lambda: None), "none")
    host.add_plugin(plugin(user_bash=lambda command: {"result": {"output": command}}), "first")
    host.add_plugin(plugin(user_bash=lambda: {"result": {"output": "second"}}), "second")
    result = await host.emit("user_bash", command="ls", exclude_from_context=False, cwd="/")
    assert result == {"result": {"output": "ls"}}


async def test_resources_discover_collects_lists(host: PluginHost) -> None:
    host.add_plugin(
        plugin(resources_discover=lambda: {"skill_paths": ["a"], "prompt_paths": ["p"]}), "a"
    )
    host.add_plugin(plugin(resources_discover=lambda: {"skill_paths": ["b", "c"]}), "b")
    result = await host.emit("resources_discover", cwd="/", reason="startup")
    assert result == {"skill_paths": ["a", "b", "c"], "prompt_paths": ["p"]}


async def test_execution_backend_last_loaded_wins(host: PluginHost) -> None:
    host.add_plugin(plugin(execution_backend=lambda: "builtin-sandbox"), "builtin:gondolin")
    host.add_plugin(plugin(execution_backend=lambda: None), "undecided")
    host.add_plugin(plugin(execution_backend=lambda: "user-backend"), "ext:user")
    assert await host.emit("execution_backend") == "user-backend"


async def test_emit_rejects_unknown_hooks(host: PluginHost) -> None:
    with pytest.raises(KeyError):
        await host.emit("no_such_hook")


async def test_ctx_is_supplied(host: PluginHost) -> None:
    from pathlib import Path

    from knightcode._plugins.context import ExtensionContext

    host.context = ExtensionContext(cwd=Path("/somewhere"), agent_dir=Path("/agent"), host=host)
    seen: list[Any] = []
    host.add_plugin(plugin(agent_start=lambda ctx: seen.append(ctx.cwd)), "a")
    await host.emit("agent_start")
    assert seen == [Path("/somewhere")]


async def test_trace_goes_to_stderr(host: PluginHost, capsys: pytest.CaptureFixture[str]) -> None:
    host.trace = True
    host.add_plugin(plugin(context=lambda messages: messages + [1]), "tracer")
    await host.emit("context", messages=[])
    err = capsys.readouterr().err
    assert "knightcode trace: context (1 handler(s), rule transform-chain)" in err
    assert "context -> tracer (" in err and "= [1]" in err


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
