"""Plugin hooks through real runs: when each fires, what it receives, and how the results of
several plugins combine (``reference/pi-behaviour.md`` §5.2); overflow surfaced to the
compaction hook (``session_check_compaction``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from knightcode import hookimpl
from knightcode._llm.errors import is_context_overflow
from knightcode.testing import error_reply, reply, text_reply, tool_call, tool_call_reply, usage
from tests.harness import (
    CONTEXT_WINDOW,
    MODEL,
    OTHER_MODEL,
    PROVIDER,
    SYSTEM_PROMPT,
    Builder,
    Scenario,
    bounded,
    make_tool,
    result_text,
    text_of,
)

OVERFLOW = "prompt is too long: 40000 tokens > 32000 maximum"


def ok(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "details": {}}


def recording_tool(executed: list[Any], name: str = "echo") -> Any:
    async def execute(
        call_id: str, args: dict[str, Any], ctx: Any, on_update: Any
    ) -> dict[str, Any]:
        executed.append((call_id, args))
        on_update(ok("partial"))
        return ok(f"{name}:{args.get('value')}")

    return make_tool(name, execute)


# --- observation hooks ------------------------------------------------------------------------


class Observer:
    """Records every observation hook as ``(plugin, hook, detail)`` into a shared log."""

    def __init__(self, name: str, log: list[tuple[str, str, Any]]) -> None:
        self.name = name
        self.log = log

    def _add(self, hook: str, detail: Any = None) -> None:
        self.log.append((self.name, hook, detail))

    @hookimpl
    def agent_start(self) -> None:
        self._add("agent_start")

    @hookimpl
    def turn_start(self, turn_index: int, timestamp: int) -> None:
        assert isinstance(timestamp, int) and timestamp > 0
        self._add("turn_start", turn_index)

    @hookimpl
    def turn_end(self, turn_index: int, message: Any, tool_results: list[Any]) -> None:
        self._add(
            "turn_end", (turn_index, message["stopReason"], [r["toolCallId"] for r in tool_results])
        )

    @hookimpl
    def message_start(self, message: Any) -> None:
        self._add("message_start", message["role"])

    @hookimpl
    def message_update(self, message: Any, assistant_message_event: dict[str, Any]) -> None:
        self._add("message_update", assistant_message_event["type"])

    @hookimpl
    def message_end(self, message: Any) -> None:
        self._add("message_end", message["role"])

    @hookimpl
    def tool_execution_start(self, tool_call_id: str, tool_name: str, args: dict[str, Any]) -> None:
        self._add("tool_execution_start", (tool_call_id, tool_name, args))

    @hookimpl
    def tool_execution_update(self, tool_call_id: str, partial_result: Any) -> None:
        self._add("tool_execution_update", tool_call_id)

    @hookimpl
    def tool_execution_end(self, tool_call_id: str, result: Any, is_error: bool) -> None:
        self._add("tool_execution_end", (tool_call_id, is_error))

    @hookimpl
    def agent_end(self, messages: list[Any], will_retry: bool) -> None:
        self._add("agent_end", ([m["role"] for m in messages], will_retry))

    @hookimpl
    def agent_before_settle(self, aborted: bool) -> None:
        self._add("agent_before_settle", aborted)


EXPECTED_ROUND_TRIP = [
    ("agent_start", None),
    ("turn_start", 0),
    ("message_start", "user"),
    ("message_end", "user"),
    ("message_start", "assistant"),
    ("message_update", "toolcall_start"),
    ("message_update", "toolcall_delta"),
    ("message_update", "toolcall_end"),
    ("message_end", "assistant"),
    ("tool_execution_start", ("c1", "echo", {"value": "v"})),
    ("tool_execution_update", "c1"),
    ("tool_execution_end", ("c1", False)),
    ("message_start", "toolResult"),
    ("message_end", "toolResult"),
    ("turn_end", (0, "toolUse", ["c1"])),
    ("turn_start", 1),
    ("message_start", "assistant"),
    ("message_update", "text_start"),
    ("message_update", "text_delta"),
    ("message_update", "text_end"),
    ("message_end", "assistant"),
    ("turn_end", (1, "stop", [])),
    ("agent_end", (["user", "assistant", "toolResult", "assistant"], False)),
    ("agent_before_settle", False),
]


async def test_observation_hooks_fire_in_load_order_with_their_arguments(scenario: Builder) -> None:
    log: list[tuple[str, str, Any]] = []
    s = await scenario(tools=[recording_tool([])], plugins=[Observer("A", log), Observer("B", log)])
    s.server.add(tool_call_reply([tool_call("c1", "echo", {"value": "v"})]), text_reply("done"))
    await bounded(s.agent.prompt("go"))
    assert [(hook, detail) for name, hook, detail in log if name == "A"] == EXPECTED_ROUND_TRIP
    # Each event reaches A, then B, before the next event.
    assert [name for name, _, _ in log] == ["A", "B"] * len(EXPECTED_ROUND_TRIP)
    assert log[0::2] == [("A", h, d) for h, d in EXPECTED_ROUND_TRIP]
    assert [(h, d) for _, h, d in log[1::2]] == EXPECTED_ROUND_TRIP
    # The turn index starts again at 0 for the next run.
    log.clear()
    s.server.add(text_reply("again"))
    await bounded(s.agent.prompt("again"))
    assert [d for n, h, d in log if n == "A" and h == "turn_start"] == [0]


class Broken:
    @hookimpl
    def message_end(self, message: Any) -> None:
        raise RuntimeError("observer broke")

    @hookimpl
    def agent_start(self) -> None:
        raise ValueError("start broke")


async def test_a_raising_observation_hook_is_reported_and_the_run_continues(
    scenario: Builder,
) -> None:
    log: list[tuple[str, str, Any]] = []
    s = await scenario(tools=[recording_tool([])], plugins=[Broken(), Observer("after", log)])
    s.server.add(tool_call_reply([tool_call("c1", "echo", {"value": "v"})]), text_reply("done"))
    await bounded(s.agent.prompt("go"))
    assert text_of(s.agent.messages[-1]) == "done" and len(s.requests) == 2
    assert [(h, d) for _, h, d in log] == EXPECTED_ROUND_TRIP  # the later plugin saw everything
    failures = [(f.plugin, f.event) for f in s.failures]
    assert failures == [("p0", "agent_start")] + [("p0", "message_end")] * 4
    assert "observer broke" in s.failures[1].error and "start broke" in s.failures[0].error
    assert s.events[-1] == {"type": "agent_settled", "aborted": False}


# --- input ------------------------------------------------------------------------------------


class Transform:
    def __init__(self, tag: str, seen: list[Any]) -> None:
        self.tag, self.seen = tag, seen

    @hookimpl
    def input(self, text: str, images: list[Any], source: str) -> dict[str, Any]:
        self.seen.append((self.tag, text, source))
        return {"action": "transform", "text": f"{text} [{self.tag}]"}


class Handle:
    def __init__(self, seen: list[Any]) -> None:
        self.seen = seen

    @hookimpl
    def input(self, text: str) -> dict[str, Any]:
        self.seen.append(("handler", text))
        return {"action": "handled"}


class PassThrough:
    @hookimpl
    def input(self, text: str) -> dict[str, Any] | None:
        return {"action": "continue"} if text.startswith("a") else None


async def test_input_transforms_are_chained(scenario: Builder) -> None:
    seen: list[Any] = []
    s = await scenario(plugins=[Transform("one", seen), PassThrough(), Transform("two", seen)])
    s.server.add(text_reply("ok"))
    await bounded(s.agent.prompt("hello", source="interactive"))
    assert seen == [("one", "hello", "interactive"), ("two", "hello [one]", "interactive")]
    assert s.sent_user_texts(0) == ["hello [one] [two]"]
    assert s.agent.messages[0]["content"] == [{"type": "text", "text": "hello [one] [two]"}]


async def test_input_handled_short_circuits_and_nothing_runs(scenario: Builder) -> None:
    seen: list[Any] = []
    s = await scenario(plugins=[Transform("one", seen), Handle(seen), Transform("never", seen)])
    s.server.add(text_reply("unused"))
    await bounded(s.agent.prompt("hello"))
    assert seen == [("one", "hello", "rpc"), ("handler", "hello [one]")]
    assert s.requests == [] and s.events == [] and s.agent.messages == []


# --- before_agent_start -----------------------------------------------------------------------


class Starter:
    def __init__(self, tag: str, seen: list[Any]) -> None:
        self.tag, self.seen = tag, seen

    @hookimpl
    def before_agent_start(
        self, prompt: str, images: list[Any], system_prompt: str
    ) -> dict[str, Any]:
        self.seen.append((self.tag, prompt, images, system_prompt))
        return {
            "message": {
                "custom_type": f"note-{self.tag}",
                "content": f"remember {self.tag}",
                "display": False,
            },
            "system_prompt": f"{system_prompt}\n[{self.tag}]",
        }


async def test_before_agent_start_injects_messages_and_chains_the_system_prompt(
    scenario: Builder,
) -> None:
    seen: list[Any] = []
    s = await scenario(
        tools=[recording_tool([])], plugins=[Starter("a", seen), Starter("b", seen)], persist=True
    )
    s.server.add(tool_call_reply([tool_call("c1", "echo", {"value": "v"})]), text_reply("done"))
    base = s.agent.system_prompt
    assert base.startswith(SYSTEM_PROMPT)
    await bounded(s.agent.prompt("go"))
    assert seen == [("a", "go", [], base), ("b", "go", [], f"{base}\n[a]")]
    for index in (0, 1):  # every request of the run uses the chained prompt
        assert s.sent(index)[0] == {"role": "system", "content": f"{base}\n[a]\n[b]"}
    assert s.sent_user_texts(0) == ["go", "remember a", "remember b"]
    starts = [e["message"] for e in s.of_type("message_start")][:3]
    assert [(m["role"], m.get("customType")) for m in starts] == [
        ("user", None),
        ("custom", "note-a"),
        ("custom", "note-b"),
    ]
    assert starts[1]["display"] is False and starts[1]["content"] == "remember a"
    stored = [e["message"] for e in s.session_lines() if e["type"] == "message"]
    assert [m["role"] for m in stored] == [
        "user",
        "custom",
        "custom",
        "assistant",
        "toolResult",
        "assistant",
    ]
    # The agent's own system prompt is untouched for the next prompt's hooks.
    assert s.agent.system_prompt == base


# --- context and before_provider_request ------------------------------------------------------


class Redact:
    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def context(self, messages: list[Any]) -> list[Any]:
        self.calls += 1
        for message in messages:
            if message["role"] == "user" and not isinstance(message["content"], str):
                for block in message["content"]:  # a prompt: [{"type": "text", "text": …}]
                    block["text"] = block["text"].replace("secret", "[redacted]")
        return messages


class AddNote:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def context(self, messages: list[Any]) -> list[Any]:
        self.seen.append(text_of(messages[0]))
        return [*messages, {"role": "user", "content": "extra context", "timestamp": 0}]


class InPlace:
    @hookimpl
    def context(self, messages: list[Any]) -> None:
        # No result, but the (deep-copied) messages were edited in place: as in the reference,
        # the edit applies to this request only.
        messages[-1]["content"][0]["text"] += " (edited)"


async def test_context_hook_transforms_each_request_without_touching_the_session(
    scenario: Builder,
) -> None:
    redact, note = Redact(), AddNote()
    s = await scenario(tools=[recording_tool([])], plugins=[redact, note])
    s.server.add(tool_call_reply([tool_call("c1", "echo", {"value": "v"})]), text_reply("done"))
    await bounded(s.agent.prompt("the secret plan"))
    assert redact.calls == 2 and note.seen == ["the [redacted] plan"] * 2
    assert s.sent_user_texts(0) == ["the [redacted] plan", "extra context"]
    assert [m["role"] for m in s.sent(1)] == ["system", "user", "assistant", "tool", "user"]
    assert text_of(s.agent.messages[0]) == "the secret plan"
    assert [m["role"] for m in s.agent.messages] == ["user", "assistant", "toolResult", "assistant"]


async def test_context_hook_edits_in_place_reach_only_the_request(scenario: Builder) -> None:
    s = await scenario(plugins=[InPlace()])
    s.server.add(text_reply("done"))
    await bounded(s.agent.prompt("keep me"))
    assert s.sent_user_texts(0) == ["keep me (edited)"]
    assert text_of(s.agent.messages[0]) == "keep me"
    assert text_of(s.agent.session.build_context().messages[0]) == "keep me"  # type: ignore[arg-type]


class Payload:
    def __init__(self, tag: str, seen: list[Any]) -> None:
        self.tag, self.seen = tag, seen

    @hookimpl
    def before_provider_request(self, payload: dict[str, Any]) -> dict[str, Any]:
        self.seen.append((self.tag, payload.get("temperature"), payload["model"]))
        if self.tag == "first":
            return {**payload, "temperature": 0.25}
        return {
            **payload,
            "user": f"saw {payload['temperature']}",
            "messages": [*payload["messages"], {"role": "user", "content": "appended"}],
        }


class Responses:
    def __init__(self) -> None:
        self.seen: list[Any] = []

    @hookimpl
    def after_provider_response(self, status: int, headers: dict[str, str]) -> None:
        self.seen.append((status, headers.get("content-type")))


async def test_before_provider_request_replaces_the_payload_in_a_chain(scenario: Builder) -> None:
    seen: list[Any] = []
    responses = Responses()
    s = await scenario(plugins=[Payload("first", seen), Payload("second", seen), responses])
    s.server.add(text_reply("done"))
    await bounded(s.agent.prompt("hi"))
    assert seen == [("first", None, MODEL), ("second", 0.25, MODEL)]
    body = s.requests[0].body
    assert body["temperature"] == 0.25 and body["user"] == "saw 0.25"
    assert body["messages"][-1] == {"role": "user", "content": "appended"}
    assert responses.seen == [(200, "text/event-stream")]


# --- tool_call and tool_result ----------------------------------------------------------------


class Guard:
    def __init__(
        self, tag: str, log: list[Any], verdict: Any = None, raises: str | None = None
    ) -> None:
        self.tag, self.log, self.verdict, self.raises = tag, log, verdict, raises

    @hookimpl
    def tool_call(self, tool_call_id: str, tool_name: str, input: dict[str, Any]) -> Any:
        self.log.append((self.tag, tool_call_id, tool_name, dict(input)))
        if self.raises and tool_call_id == "a":
            raise RuntimeError(self.raises)
        return self.verdict(tool_call_id) if callable(self.verdict) else self.verdict


async def test_tool_call_first_block_wins(scenario: Builder) -> None:
    log: list[Any] = []
    executed: list[Any] = []

    def block_a(call_id: str) -> dict[str, Any] | None:
        return {"block": True, "reason": "Blocked by policy"} if call_id == "a" else None

    plugins = [
        Guard("g0", log),
        Guard("g1", log, block_a),
        Guard("g2", log, {"block": True, "reason": "g2 blocks everything"}),
    ]
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}

    def count(call_id: str, args: dict[str, Any], ctx: Any, on_update: Any) -> dict[str, Any]:
        executed.append(call_id)  # a plain (not async) execute works too
        return ok("ran")

    s = await scenario(tools=[make_tool("count", count, parameters=schema)], plugins=plugins)
    s.server.add(
        tool_call_reply([tool_call("a", "count", {"n": "1"}), tool_call("b", "count", {"n": 2})]),
        text_reply("done"),
    )
    await bounded(s.agent.prompt("go"))
    assert executed == []
    # The hook sees validated (coerced) arguments; g2 never sees "a" because g1 blocked it first.
    assert log == [
        ("g0", "a", "count", {"n": 1}),
        ("g1", "a", "count", {"n": 1}),
        ("g0", "b", "count", {"n": 2}),
        ("g1", "b", "count", {"n": 2}),
        ("g2", "b", "count", {"n": 2}),
    ]
    results = {m["toolCallId"]: m for m in s.tool_results()}
    assert result_text(results["a"]) == "Blocked by policy" and results["a"]["isError"] is True
    assert result_text(results["b"]) == "g2 blocks everything" and results["b"]["isError"] is True
    assert all("durationMs" not in e for e in s.of_type("tool_execution_end"))
    assert len(s.requests) == 2  # the model is told and the run goes on


async def test_a_raising_tool_call_hook_blocks_with_its_message(scenario: Builder) -> None:
    log: list[Any] = []
    executed: list[Any] = []
    s = await scenario(
        tools=[recording_tool(executed)],
        plugins=[Guard("g0", log, raises="guard crashed"), Guard("g1", log)],
    )
    s.server.add(
        tool_call_reply(
            [tool_call("a", "echo", {"value": "1"}), tool_call("b", "echo", {"value": "2"})]
        ),
        text_reply("done"),
    )
    await bounded(s.agent.prompt("go"))
    assert [cid for cid, _ in executed] == ["b"]
    assert [(tag, cid) for tag, cid, _, _ in log] == [("g0", "a"), ("g0", "b"), ("g1", "b")]
    results = {m["toolCallId"]: m for m in s.tool_results()}
    assert result_text(results["a"]) == "guard crashed" and results["a"]["isError"] is True
    assert results["b"]["isError"] is False


class Patch:
    def __init__(self, tag: str, log: list[Any], patch: Any) -> None:
        self.tag, self.log, self.patch = tag, log, patch

    @hookimpl
    def tool_result(
        self,
        tool_call_id: str,
        tool_name: str,
        input: dict[str, Any],
        content: list[Any],
        details: Any,
        is_error: bool,
    ) -> Any:
        self.log.append(
            (self.tag, tool_call_id, "".join(c.get("text", "") for c in content), details, is_error)
        )
        return self.patch(tool_call_id, content, details) if callable(self.patch) else self.patch


async def test_tool_result_patches_chain_field_by_field(scenario: Builder) -> None:
    log: list[Any] = []

    async def tool(call_id: str, args: dict[str, Any], ctx: Any, on_update: Any) -> dict[str, Any]:
        return {
            "content": [{"type": "text", "text": f"raw {call_id}"}],
            "details": {"orig": call_id},
        }

    plugins = [
        Patch(
            "p0",
            log,
            lambda cid, content, details: {
                "content": [{"type": "text", "text": f"p0({content[0]['text']})"}]
            },
        ),
        Patch(
            "p1",
            log,
            lambda cid, content, details: {"details": {**details, "p1 saw": content[0]["text"]}},
        ),
        Patch("p2", log, lambda cid, content, details: {"is_error": True} if cid == "y" else None),
    ]
    s = await scenario(tools=[make_tool("t", tool)], plugins=plugins)
    s.server.add(
        tool_call_reply([tool_call("x", "t", {"value": "1"}), tool_call("y", "t", {"value": "2"})]),
        text_reply("done"),
    )
    await bounded(s.agent.prompt("go"))
    results = {m["toolCallId"]: m for m in s.tool_results()}
    assert results["x"]["content"] == [{"type": "text", "text": "p0(raw x)"}]
    assert (
        results["x"]["details"] == {"orig": "x", "p1 saw": "p0(raw x)"}
        and results["x"]["isError"] is False
    )
    assert results["y"]["isError"] is True and result_text(results["y"]) == "p0(raw y)"
    assert [entry for entry in log if entry[1] == "x"] == [
        ("p0", "x", "raw x", {"orig": "x"}, False),
        ("p1", "x", "p0(raw x)", {"orig": "x"}, False),
        ("p2", "x", "p0(raw x)", {"orig": "x", "p1 saw": "p0(raw x)"}, False),
    ]
    # tool_execution_end already carries the patched result.
    ends = {e["toolCallId"]: e for e in s.of_type("tool_execution_end")}
    assert result_text(ends["x"]) == "p0(raw x)" and ends["y"]["isError"] is True
    sent_tools = [m for m in s.sent(1) if m["role"] == "tool"]
    assert "p0(raw x)" in str(sent_tools[0]["content"])


async def test_tool_result_patches_do_not_apply_to_a_failed_tool(scenario: Builder) -> None:
    log: list[Any] = []

    async def boom(call_id: str, args: dict[str, Any], ctx: Any, on_update: Any) -> dict[str, Any]:
        raise RuntimeError("kaboom")

    s = await scenario(
        tools=[make_tool("boom", boom)],
        plugins=[
            Patch("p0", log, {"content": [{"type": "text", "text": "all good"}], "is_error": False})
        ],
    )
    s.server.add(tool_call_reply([tool_call("z", "boom", {"value": "1"})]), text_reply("done"))
    await bounded(s.agent.prompt("go"))
    (result,) = s.tool_results()
    assert result["isError"] is True and result_text(result) == "kaboom"
    assert log == [("p0", "z", "kaboom", {}, True)]  # the hook still saw the failure


# --- model and thinking level hooks ---------------------------------------------------------


class Selections:
    def __init__(self) -> None:
        self.seen: list[Any] = []

    @hookimpl
    def model_select(self, model: Any, previous_model: Any, source: str) -> None:
        self.seen.append(("model", previous_model.id, model.id, source))

    @hookimpl
    def thinking_level_select(self, level: str, previous_level: str | None) -> None:
        self.seen.append(("thinking", previous_level, level))


async def test_model_and_thinking_selection_hooks(scenario: Builder) -> None:
    selections = Selections()
    s = await scenario(plugins=[selections])
    other = await s.agent.model_registry.find(PROVIDER, OTHER_MODEL)
    assert other is not None
    await s.agent.set_model(other, source="cycle")
    await s.agent.set_thinking_level("medium")
    await s.agent.set_thinking_level("medium")
    assert selections.seen == [
        ("model", MODEL, OTHER_MODEL, "cycle"),
        ("thinking", "off", "medium"),
    ]


# --- session_check_compaction ---------------------------------------------------------------


class Compactor:
    """Records every check; on ``overflow`` writes a compaction entry and asks for a retry."""

    def __init__(self, holder: list[Scenario], verdict: Any = "compact") -> None:
        self.holder = holder
        self.verdict = verdict
        self.calls: list[tuple[str, Any, bool]] = []
        self.messages: list[Any] = []

    @hookimpl
    def session_check_compaction(self, trigger: str, message: Any, will_retry: bool) -> Any:
        self.calls.append((trigger, message.get("stopReason") if message else None, will_retry))
        self.messages.append(message)
        if trigger not in ("overflow", "length") or self.verdict is None:
            return None
        if self.verdict == "compact":
            agent = self.holder[0].agent
            user = [
                e
                for e in agent.session.get_entries()
                if e["type"] == "message" and e["message"]["role"] == "user"
            ][-1]
            agent.append_compaction("Earlier talk about numbers.", user["id"], 40000)
            return {"compacted": True, "retry": True}
        return self.verdict


async def test_compaction_checks_fire_before_prompt_between_turns_and_after_run(
    scenario: Builder,
) -> None:
    holder: list[Scenario] = []
    compactor = Compactor(holder)
    s = await scenario(tools=[recording_tool([])], plugins=[compactor])
    holder.append(s)
    s.server.add(
        tool_call_reply([tool_call("c1", "echo", {"value": "v"})]),
        text_reply("done"),
        text_reply("again"),
    )
    before_request: list[int] = []
    s.agent.subscribe(
        lambda e: before_request.append(len(compactor.calls)) if e["type"] == "turn_start" else None
    )
    await bounded(s.agent.prompt("first"))
    assert compactor.calls == [
        ("before_prompt", None, False),
        ("between_turns", "toolUse", False),
        ("after_run", "stop", False),
    ]
    assert before_request == [
        1,
        2,
    ]  # before_prompt before the first turn, between_turns before the second
    assert compactor.messages[1]["content"][0]["type"] == "toolCall"
    await bounded(s.agent.prompt("second"))
    assert compactor.calls[3:] == [("before_prompt", "stop", False), ("after_run", "stop", False)]
    assert text_of(compactor.messages[3]) == "done"


async def test_overflow_is_surfaced_and_recovered_once(scenario: Builder) -> None:
    holder: list[Scenario] = []
    compactor = Compactor(holder)
    s = await scenario(plugins=[compactor], persist=True)
    holder.append(s)
    s.server.add(error_reply(400, OVERFLOW), text_reply("fits now"))
    await bounded(s.agent.prompt("count to a million"))
    assert compactor.calls == [
        ("before_prompt", None, False),
        ("overflow", "error", True),
        ("after_run", "stop", False),
    ]
    failed = compactor.messages[1]
    assert failed["role"] == "assistant" and OVERFLOW in failed["errorMessage"]
    assert is_context_overflow(failed, CONTEXT_WINDOW)
    assert [e["willRetry"] for e in s.of_type("agent_end")] == [True, False]
    assert s.types().count("agent_settled") == 1 and s.events[-1] == {
        "type": "agent_settled",
        "aborted": False,
    }
    assert [e for e in s.events if e["type"].startswith("auto_retry")] == []  # not the retry path
    # The retried request is the compacted context: summary + prompt, without the failed attempt.
    assert len(s.requests) == 2
    sent = s.sent(1)
    assert [m["role"] for m in sent] == ["system", "user", "user"]
    assert (
        "Earlier talk about numbers." in text_of(sent[1])
        and text_of(sent[2]) == "count to a million"
    )
    assert [m["role"] for m in s.agent.messages] == ["compactionSummary", "user", "assistant"]
    assert text_of(s.agent.messages[-1]) == "fits now"
    # The failed attempt stays on record.
    kinds = [(e["type"], e.get("message", {}).get("stopReason")) for e in s.session_lines()[1:]]
    assert kinds[2:] == [
        ("message", None),
        ("message", "error"),
        ("compaction", None),
        ("message", "stop"),
    ]


async def test_a_second_overflow_in_the_same_prompt_does_not_loop(scenario: Builder) -> None:
    holder: list[Scenario] = []
    compactor = Compactor(holder, verdict={"compacted": False, "retry": True})
    s = await scenario(plugins=[compactor])
    holder.append(s)
    s.server.add(error_reply(400, OVERFLOW), error_reply(400, OVERFLOW))
    await bounded(s.agent.prompt("big"))
    assert [c[0] for c in compactor.calls] == ["before_prompt", "overflow", "after_run"]
    assert compactor.calls[2] == ("after_run", "error", False)
    assert len(s.requests) == 2  # a third would have found the script empty (a retryable 500)
    assert [e["willRetry"] for e in s.of_type("agent_end")] == [True, False]
    assert s.agent.messages[-1]["stopReason"] == "error"
    # A new prompt may recover again.
    s.server.add(error_reply(400, OVERFLOW), text_reply("recovered"))
    await bounded(s.agent.prompt("again"))
    assert [c[0] for c in compactor.calls[3:]] == ["before_prompt", "overflow", "after_run"]
    assert text_of(s.agent.messages[-1]) == "recovered"


async def test_overflow_without_a_retry_verdict_stops(scenario: Builder) -> None:
    holder: list[Scenario] = []
    compactor = Compactor(holder, verdict=None)
    s = await scenario(plugins=[compactor])
    holder.append(s)
    s.server.add(error_reply(400, OVERFLOW), text_reply("unused"))
    await bounded(s.agent.prompt("big"))
    assert [c[0] for c in compactor.calls] == ["before_prompt", "overflow"]
    assert len(s.requests) == 1 and s.agent.messages[-1]["stopReason"] == "error"
    assert s.events[-1] == {"type": "agent_settled", "aborted": False}


async def test_silent_overflow_and_length_reach_the_hook(scenario: Builder) -> None:
    holder: list[Scenario] = []
    compactor = Compactor(holder, verdict=None)
    s = await scenario(plugins=[compactor])
    holder.append(s)
    s.server.add(text_reply("too big", usage=usage(input=CONTEXT_WINDOW + 1, output=2)))
    await bounded(s.agent.prompt("one"))
    # A silent overflow reaches the hook, but the complete answer is kept: no retry follows.
    assert compactor.calls[-1] == ("overflow", "stop", False)
    assert s.of_type("agent_end")[-1]["willRetry"] is False
    s.server.add(reply(text="cut off mid", finish="length"))
    await bounded(s.agent.prompt("two"))
    assert compactor.calls[-1] == ("length", "length", True)


async def test_a_length_stop_that_used_the_whole_output_limit_is_not_recovered(
    scenario: Builder,
) -> None:
    holder: list[Scenario] = []
    compactor = Compactor(holder, verdict=None)
    s = await scenario(plugins=[compactor])
    holder.append(s)
    s.server.add(
        reply(text="long", finish="length", usage=usage(input=10, output=4096))
    )  # the model's maxTokens
    await bounded(s.agent.prompt("write a novel"))
    assert [c[0] for c in compactor.calls] == ["before_prompt", "after_run"]
    assert s.of_type("agent_end")[-1]["willRetry"] is False


async def test_without_a_compaction_handler_overflow_stays_an_error(scenario: Builder) -> None:
    log: list[tuple[str, str, Any]] = []
    s = await scenario(plugins=[Observer("A", log)])
    s.server.add(error_reply(400, OVERFLOW), text_reply("unused"))
    await bounded(s.agent.prompt("big"))
    assert len(s.requests) == 1 and s.agent.messages[-1]["stopReason"] == "error"
    assert [d for _, h, d in log if h == "agent_end"] == [(["user", "assistant"], False)]


async def test_observation_hooks_may_be_async(scenario: Builder) -> None:
    order: list[str] = []

    class Slow:
        @hookimpl
        async def message_end(self, message: Any) -> None:
            await asyncio.sleep(0)
            order.append(f"slow:{message['role']}")

    class Fast:
        @hookimpl
        def message_end(self, message: Any) -> None:
            order.append(f"fast:{message['role']}")

    s = await scenario(plugins=[Slow(), Fast()])
    s.server.add(text_reply("done"))
    await bounded(s.agent.prompt("go"))
    assert order == ["slow:user", "fast:user", "slow:assistant", "fast:assistant"]


# --- ordering against the session file (agent-session-concurrent) ----------------------------


class EntrySnapshots:
    """Snapshots of the stored message roles whenever ``tool_call`` fires."""

    def __init__(self, holder: list[Scenario]) -> None:
        self.holder = holder
        self.snapshots: list[list[str]] = []

    @hookimpl
    def tool_call(self, tool_call_id: str) -> None:
        session = self.holder[0].agent.session
        self.snapshots.append(
            [e["message"]["role"] for e in session.get_entries() if e["type"] == "message"]
        )


async def test_tool_call_hook_sees_the_assistant_message_already_stored(scenario: Builder) -> None:
    holder: list[Scenario] = []
    snapshots = EntrySnapshots(holder)
    s = await scenario(tools=[recording_tool([])], plugins=[snapshots])
    holder.append(s)
    s.server.add(
        tool_call_reply(
            [tool_call("x", "echo", {"value": "1"}), tool_call("y", "echo", {"value": "2"})]
        ),
        text_reply("done"),
    )
    await bounded(s.agent.prompt("hi"))
    assert snapshots.snapshots == [["user", "assistant"], ["user", "assistant"]]


async def test_slow_message_end_handlers_keep_the_stored_order(scenario: Builder) -> None:
    class Slow:
        @hookimpl
        async def message_end(self, message: Any) -> None:
            if message["role"] == "assistant":
                for _ in range(20):
                    await asyncio.sleep(0)

    s = await scenario(tools=[recording_tool([])], plugins=[Slow()])
    s.server.add(tool_call_reply([tool_call("x", "echo", {"value": "1"})]), text_reply("done"))
    await bounded(s.agent.prompt("hi"))
    stored = [e["message"]["role"] for e in s.agent.session.get_entries() if e["type"] == "message"]
    assert stored == ["user", "assistant", "toolResult", "assistant"]
    assert stored == [m["role"] for m in s.agent.messages]


async def test_manual_compaction_without_a_compaction_plugin_is_refused(scenario: Builder) -> None:
    from knightcode._agent.session import CompactionUnavailableError

    s = await scenario()
    with pytest.raises(CompactionUnavailableError, match="compaction is disabled"):
        await s.agent.compact()


async def test_manual_compaction_reaches_the_hook_with_instructions(scenario: Builder) -> None:
    seen: list[tuple[str, Any, bool]] = []

    class Manual:
        @hookimpl
        def session_check_compaction(self, trigger: str, custom_instructions: Any, ctx: Any) -> Any:
            seen.append(
                (
                    trigger,
                    custom_instructions,
                    ctx.agent.is_compacting if hasattr(ctx, "agent") else s.agent.is_compacting,
                )
            )
            return (
                {"compacted": False, "retry": False, "result": {"summary": "nothing to do"}}
                if trigger == "manual"
                else None
            )

    s = await scenario(plugins=[Manual()])
    verdict = await bounded(s.agent.compact("focus on the parser"))
    assert verdict.result == {"summary": "nothing to do"}
    assert seen == [("manual", "focus on the parser", True)]
    assert not s.agent.is_compacting and not s.agent.is_streaming
    assert s.types()[-1] == "agent_settled"
