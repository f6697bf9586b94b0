"""The documented hook contract against what the kernel actually passes and accepts.

A recording plugin implements every non-registration hook of ``knightcode._hookspecs`` with the
hookspec's exact parameters, and checks each argument of each call, as the kernel passes it,
against the hookspec's annotation (:mod:`tests.typecheck`: ``TypedDict`` shapes without
undeclared keys, literals, unions, protocols …). One real session, built the way the command line
builds it with every built-in plugin, is driven through everything that fires a hook: prompts
with tool calls, a user ``!`` command, model and thinking changes, compactions (one succeeding,
one failing), tree navigation with a summary, and new/resume/fork/clone. Every hook must have
fired and every argument must conform.

The second part answers each hook that takes an answer with each documented result — the typed
object and the reference's dict form — and checks that no extension error is reported and that
the answer took effect (a ``Block`` blocks, ``Transform`` rewrites what the server receives …).
"""

from __future__ import annotations

import asyncio
import base64
import functools
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import pytest

from knightcode import (
    AbortSignal,
    AgentMessage,
    AgentStartChanges,
    AssistantMessage,
    BashAnswer,
    Block,
    BranchSummary,
    Cancel,
    CompactionEntry,
    CompactionOverride,
    CompactionPreparation,
    CompactionVerdict,
    ExecResult,
    ForkOptions,
    Handled,
    HookContext,
    PluginMessage,
    Resources,
    RunInBackend,
    SessionView,
    ToolResultPatch,
    Transform,
    TreeNavigationOptions,
    TreePreparation,
    _hookspecs as hookspecs,
    hookimpl,
)
from knightcode._agent.user_bash import record_bash_execution, run_user_bash
from knightcode._tools.backend import OutputCallback
from knightcode._tools.local_backend import LocalBackend
from knightcode.testing import (
    error_reply,
    reply,
    stream_error_reply,
    text_reply,
    tool_call,
    tool_call_reply,
    usage,
)
from knightcode_builtins.compaction.prompts import BRANCH_SUMMARY_PROMPT
from tests.harness import (
    ANTHROPIC,
    LARGE,
    PROVIDER,
    REASONING,
    SMALL,
    Builder,
    Run,
    bounded,
    make_tool,
    summary_reply,
    text_of,
)
from tests.typecheck import hints, problems, property_problems

HOOKS = [name for name in hookspecs.all_hook_names() if not name.startswith("register_")]
"""Every hook a session fires (registration hooks run once, at load, with a callback)."""

NOT_FIRED_BY_THE_KERNEL: set[str] = set()
"""Hooks the kernel does not fire yet (none since ``resources_discover`` fires at start-up)."""

Answer = Callable[[dict[str, object]], object]
"""How a test answers a hook: from the arguments of the call to the handler's result."""

SETTINGS: dict[str, object] = {"compaction": {"reserveTokens": 2000, "keepRecentTokens": 50}}
"""No threshold compaction in these short sessions (the SMALL model's window is 10 000); a
50-token budget keeps little, so a compaction always has something to summarize."""

OVERFLOW = "prompt is too long: 12000 tokens > 10000 maximum"

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
    "hQGAhKmMIQAAAABJRU5ErkJggg=="
)
"""A 1x1 PNG, base64."""


class Recorder:
    """A plugin implementing every hook with the hookspec's exact parameters: it records each
    call's arguments, checks them against the hookspec's annotations at the moment of the call
    (a streamed message is still growing), and answers from ``answers`` (None otherwise).
    """

    plugin_name = "recorder"

    def __init__(self, answers: Mapping[str, Answer] | None = None) -> None:
        self.answers = dict(answers or {})
        self.calls: dict[str, list[dict[str, object]]] = {name: [] for name in HOOKS}
        self.problems: list[str] = []
        for name in HOOKS:
            setattr(self, name, self._handler(name))

    def _handler(self, hook: str) -> Callable[..., object]:
        # pluggy reads the parameter names from the function's code object, so the handler is
        # generated as source with the hookspec's exact parameters.
        names = list(inspect.signature(getattr(hookspecs, hook)).parameters)
        source = (
            f"def {hook}({', '.join(names)}):\n"
            f"    return record({', '.join(f'{name}={name}' for name in names)})\n"
        )
        namespace: dict[str, object] = {"record": functools.partial(self._record, hook)}
        exec(source, namespace)
        handler = namespace[hook]
        assert callable(handler)
        # First in line: it sees what the kernel passes before any other plugin answers (a
        # first-result hook stops at the built-in compaction plugin's answer), and its own
        # answers win over theirs.
        return hookimpl(tryfirst=True)(handler)

    def _record(self, hook: str, **arguments: object) -> object:
        self.calls[hook].append(arguments)
        declared = hints(getattr(hookspecs, hook))
        try:
            for name, value in arguments.items():
                self.problems += [
                    f"{hook}, argument {problem}"
                    for problem in problems(value, declared[name], name)
                ]
            if len(self.calls[hook]) == 1:  # ctx is one object: its properties once per hook
                self.problems += [
                    f"{hook}, argument {problem}"
                    for problem in property_problems(arguments["ctx"], HookContext, "ctx")
                ]
        except Exception as error:  # an unknown annotation: say so instead of blocking a tool
            self.problems.append(f"{hook}: the check failed: {error!r}")
        answer = self.answers.get(hook)
        return None if answer is None else answer(arguments)

    def fired(self, hook: str) -> list[dict[str, object]]:
        """The arguments of every call of ``hook``, in order."""
        return self.calls[hook]


def ok(text: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": text}], "details": {"text": text}}


async def _echo(
    call_id: str, args: dict[str, object], ctx: object, on_update: Callable[[object], None]
) -> dict[str, object]:
    on_update(ok("working"))
    return ok(f"echo:{args.get('value')}")


ECHO = make_tool("echo", _echo)
"""A plugin tool that reports a partial result (``tool_execution_update``)."""


def entry_ids(run: Run, role: str) -> list[str]:
    """The ids of the message entries of ``role`` on the current branch, in order."""
    return [
        entry["id"]
        for entry in run.agent.session.get_branch()
        if entry["type"] == "message" and entry["message"]["role"] == role
    ]


# --- what the kernel passes ---------------------------------------------------------------


async def drive_every_hook(run: Run, project: Path, recorder: Recorder) -> None:
    """Everything that fires a hook, once or more, through the production paths."""
    agent = run.agent
    (project / "a.txt").write_text("alpha\n")
    (project / "pixel.png").write_bytes(base64.b64decode(PNG))
    # A prompt with an image, thinking, text and tool calls (built-in read of a text file, of an
    # image and of a missing file, bash, and a plugin tool with a partial result), then the
    # answer.
    run.server.add(
        tool_call_reply(
            [
                tool_call("c1", "read", {"path": "a.txt"}),
                tool_call("c2", "bash", {"command": "echo from-bash"}, split=3),
                tool_call("c3", "echo", {"value": "v"}),
                tool_call("c4", "read", {"path": "pixel.png"}),
                tool_call("c5", "read", {"path": "missing.txt"}),
            ],
            text="Let me look.",
            thinking="I should read it.",
            usage=usage(input=120, output=10),
        ),
        text_reply("It says ", "alpha.", usage=usage(input=200, output=4)),
    )
    image = {"type": "image", "data": PNG, "mimeType": "image/png"}
    await bounded(agent.prompt("what is in a.txt?", [image]))  # type: ignore[list-item]
    results = {c["tool_call_id"]: c for c in recorder.fired("tool_result")}
    assert results["c5"]["is_error"] is True
    image_result = results["c4"]["content"]
    assert isinstance(image_result, list)
    assert [block["type"] for block in image_result] == ["text", "image"]
    # The user runs a command with ``!``.
    message = await bounded(run_user_bash(agent, "echo from-user"))
    await bounded(record_bash_execution(agent, message))
    # Plugin state and a session name: entries every later branch list carries.
    run.ctx.append_entry("contract", {"step": 1})
    run.ctx.set_session_name("contract")
    # Model and thinking level.
    # The level is set on a model that reasons: on one that does not, it stays off (clamped).
    reasoning = agent.model_registry.find_known(PROVIDER, REASONING)
    assert reasoning is not None
    await agent.set_model(reasoning)
    await agent.set_thinking_level("high")
    large = agent.model_registry.find_known(PROVIDER, LARGE)
    assert large is not None
    await agent.set_model(large)
    # A second exchange; a third that overflows, is compacted ("overflow") and retried; a
    # manual compaction (summarized by the server) with instructions, and one that fails
    # (already compacted).
    run.server.add(text_reply("second answer", usage=usage(input=300, output=3)))
    await bounded(agent.prompt("second question " + "q" * 400))
    run.server.add(error_reply(400, OVERFLOW), summary_reply(), text_reply("fits now"))
    await bounded(agent.prompt("third question"))
    assert [e["reason"] for e in run.of_type("compaction_end")] == ["overflow"]
    run.server.add(text_reply("fourth answer", usage=usage(input=300, output=3)))
    await bounded(agent.prompt("fourth question " + "f" * 400))
    run.server.add(summary_reply())
    assert (await bounded(agent.compact("keep the file names"))).compacted
    assert not (await bounded(agent.compact())).compacted
    # A fifth exchange, then back to the first answer with a summary of the branch left.
    run.server.add(text_reply("fifth answer"))
    await bounded(agent.prompt("fifth question"))
    first_answer = entry_ids(run, "assistant")[0]
    run.server.add(summary_reply("## Goal\nthe branch"))
    fifth_answer = agent.session.leaf_id
    assert fifth_answer is not None
    tree = await bounded(agent.navigate_tree(first_answer, summarize=True, label="here"))
    assert tree.summary_entry is not None
    # And back, summarizing that short branch (its summary and label entries).
    run.server.add(summary_reply("## Goal\nthe detour"))
    tree = await bounded(agent.navigate_tree(fifth_answer, summarize=True, label="back"))
    assert tree.summary_entry is not None
    # Fork before a user message, clone, a new session, and resuming the first file.
    first_file = agent.session.session_file
    assert first_file is not None
    fork = await bounded(agent.fork(entry_ids(run, "user")[0]))
    assert not fork.cancelled and fork.text == "what is in a.txt?"
    assert not await bounded(agent.clone())
    assert not await bounded(agent.new_session())
    assert not await bounded(agent.switch_session(first_file))
    # Entries read back from the file (every kind written above) reach the hooks as well.
    run.server.add(text_reply("resumed answer", usage=usage(input=300, output=3)))
    await bounded(agent.prompt("after resuming " + "r" * 400))
    run.server.add(summary_reply())
    assert (await bounded(agent.compact())).compacted
    written = recorder.fired("session_before_compact")[-1]["branch_entries"]
    assert isinstance(written, list)
    assert {entry["type"] for entry in written} == {
        "message",
        "custom",
        "session_info",
        "model_change",
        "thinking_level_change",
        "compaction",
        "context_edit",
        "branch_summary",
        "label",
    }
    # Fired by the interactive session picker only (tests/interactive/test_e2e_web_tools.py
    # deletes a session there): fired here with a deleted copy of the first file.
    doomed = first_file.with_name("doomed.jsonl")
    doomed.write_bytes(first_file.read_bytes())
    header = json.loads(doomed.read_text(encoding="utf-8").split("\n", 1)[0])
    doomed.unlink()
    await run.host.hooks.session_delete(session_file=doomed, header=header)
    # resources_discover fired when the session was built (start-up); once more as on /reload.
    assert await run.host.hooks.resources_discover(cwd=project, reason="reload") == []


async def test_every_hook_fires_with_the_documented_argument_shapes(
    build: Builder, project_dir: Path
) -> None:
    recorder = Recorder()
    run = await build(builtin=True, tools=[ECHO], plugins=(recorder,), settings=SETTINGS)
    await drive_every_hook(run, project_dir, recorder)

    assert run.failures == []
    for hook in HOOKS:  # the recorder takes exactly the hookspec's arguments
        (handler,) = [h for h in run.host.handlers(hook) if h.plugin_name == "recorder"]
        assert handler.argnames == tuple(inspect.signature(getattr(hookspecs, hook)).parameters)
    silent = [hook for hook in HOOKS if not recorder.fired(hook)]
    assert silent == [], f"hooks that never fired: {silent}"
    assert recorder.problems == [], "\n".join(recorder.problems)


@pytest.mark.parametrize("provider", [PROVIDER, ANTHROPIC])
async def test_failed_aborted_and_streamed_runs_pass_the_documented_shapes(
    build: Builder, provider: str
) -> None:
    """Both provider dialects (thinking signatures, response ids), a stream that fails and is
    retried, an error that is not, and a run aborted mid-stream."""
    recorder = Recorder()
    run = await build(
        provider=provider, model=SMALL, tools=[ECHO], plugins=(recorder,), settings=SETTINGS
    )
    run.server.add(
        stream_error_reply("Overloaded", text=["partial "]),
        tool_call_reply(
            [tool_call("c1", "echo", {"value": "v"}, split=2)], thinking="hmm", text="calling"
        ),
        reply(thinking="done thinking", text="done"),
        error_reply(401, "invalid key"),
    )
    await bounded(run.agent.prompt("first"))
    await bounded(run.agent.prompt("second"))
    assert run.kinds("auto_retry_start", "auto_retry_end") == ["auto_retry_start", "auto_retry_end"]
    assert (
        run.tool_results() and run.of_type("agent_end")[-1]["messages"][-1]["stopReason"] == "error"
    )
    run.server.add(text_reply("slow", " answer", " never", " ends", delay=0.3))
    started = run.when(lambda event: event["type"] == "message_update")
    task = asyncio.ensure_future(run.agent.prompt("third"))
    await bounded(started.wait())
    run.agent.abort()
    await bounded(task)

    assert run.failures == []
    assert recorder.fired("agent_before_settle")[-1]["aborted"] is True
    assert run.of_type("turn_end")[-1]["message"]["stopReason"] == "aborted"
    assert recorder.problems == [], "\n".join(recorder.problems)


def test_only_the_documented_hooks_are_not_fired_by_the_kernel() -> None:
    """``NOT_FIRED_BY_THE_KERNEL`` stays true: when the kernel starts firing one of them, the
    direct calls above should become a real session path."""
    repo = Path(__file__).resolve().parent.parent
    sources = [
        path.read_text(encoding="utf-8")
        for tree in (repo / "core" / "knightcode", repo / "builtin_plugins")
        for path in tree.rglob("*.py")
        if path.name not in ("hooks.py", "_hookspecs.py")
    ]
    fired = {hook for hook in HOOKS if any(f"hooks.{hook}(" in text for text in sources)}
    assert set(HOOKS) - fired == NOT_FIRED_BY_THE_KERNEL


# --- what the kernel does with the documented answers -------------------------------------


class RecordingBackend(LocalBackend):
    """The local backend, remembering the commands it ran."""

    def __init__(self, cwd: Path) -> None:
        super().__init__(cwd)
        self.commands: list[str | None] = []

    async def exec(
        self,
        argv: Sequence[str] | None = None,
        *,
        shell_command: str | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_output: OutputCallback | None = None,
        merge_stderr: bool = True,
    ) -> ExecResult:
        self.commands.append(shell_command)
        return await super().exec(
            argv,
            shell_command=shell_command,
            cwd=cwd,
            env=env,
            timeout=timeout,
            signal=signal,
            on_output=on_output,
            merge_stderr=merge_stderr,
        )


async def answering(
    build: Builder, hook: str, answer: object, **options: object
) -> tuple[Run, Recorder]:
    """A session (every built-in plugin) whose recorder answers ``hook`` with ``answer``."""
    recorder = Recorder({hook: lambda arguments: answer})
    run = await build(plugins=(recorder,), settings=SETTINGS, **options)  # type: ignore[arg-type]
    return run, recorder


def accepted(run: Run, recorder: Recorder) -> None:
    """No extension error was reported (the answer's shape was accepted), and every argument
    the recorder saw conformed."""
    assert run.failures == []
    assert recorder.problems == [], "\n".join(recorder.problems)


def texts(run: Run, index: int, role: str) -> list[str]:
    """The texts of the ``role`` messages of model request ``index`` (OpenAI wire shape)."""
    return [text_of(m) for m in run.sent(index) if m["role"] == role]


async def two_exchanges(run: Run) -> None:
    run.server.add(text_reply("answer one", usage=usage(input=100)))
    await bounded(run.agent.prompt("question one"))
    run.server.add(text_reply("answer two", usage=usage(input=200)))
    await bounded(run.agent.prompt("question two " + "b" * 400))


EXECUTED: list[dict[str, object]] = []


async def _guarded(
    call_id: str, args: dict[str, object], ctx: object, on_update: Callable[[object], None]
) -> dict[str, object]:
    EXECUTED.append(args)
    return ok(f"ran:{args.get('value')}")


GUARDED = make_tool("guarded", _guarded)


async def one_tool_call(run: Run) -> None:
    EXECUTED.clear()
    run.server.add(
        tool_call_reply([tool_call("c1", "guarded", {"value": "v"})]), text_reply("done")
    )
    await bounded(run.agent.prompt("call the tool"))


@pytest.mark.parametrize(
    "answer", [Block("not here"), {"block": True, "reason": "not here"}], ids=["typed", "dict"]
)
async def test_tool_call_block_blocks_the_call(build: Builder, answer: object) -> None:
    run, recorder = await answering(build, "tool_call", answer, tools=[GUARDED])
    await one_tool_call(run)
    accepted(run, recorder)
    assert EXECUTED == []
    (result,) = run.tool_results()
    assert result["isError"] is True and text_of(result) == "not here"
    assert texts(run, 1, "tool") == ["not here"]


@pytest.mark.parametrize(
    "answer",
    [
        ToolResultPatch(
            content=[{"type": "text", "text": "patched"}], details={"patched": True}, is_error=True
        ),
        {
            "content": [{"type": "text", "text": "patched"}],
            "details": {"patched": True},
            "is_error": True,
        },
    ],
    ids=["typed", "dict"],
)
async def test_tool_result_patch_changes_what_the_model_sees(
    build: Builder, answer: object
) -> None:
    run, recorder = await answering(build, "tool_result", answer, tools=[GUARDED])
    await one_tool_call(run)
    accepted(run, recorder)
    assert EXECUTED == [{"value": "v"}]
    (result,) = run.tool_results()
    assert text_of(result) == "patched" and result["details"] == {"patched": True}
    assert result["isError"] is True
    assert texts(run, 1, "tool") == ["patched"]


IMAGE: dict[str, object] = {"type": "image", "data": PNG, "mimeType": "image/png"}


@pytest.mark.parametrize(
    "answer",
    [
        Transform("rewritten", images=[IMAGE]),  # type: ignore[list-item]
        {"action": "transform", "text": "rewritten", "images": [IMAGE]},
    ],
    ids=["typed", "dict"],
)
async def test_input_transform_rewrites_the_prompt_the_server_receives(
    build: Builder, answer: object
) -> None:
    run, recorder = await answering(build, "input", answer)
    run.server.add(text_reply("ok"))
    await bounded(run.agent.prompt("original"))
    accepted(run, recorder)
    assert texts(run, 0, "user") == ["rewritten"]
    started = recorder.fired("before_agent_start")[0]
    assert started["prompt"] == "rewritten" and started["images"] == [IMAGE]
    (prompt,) = run.entries("message")[:1]
    assert prompt["message"]["content"] == [{"type": "text", "text": "rewritten"}, IMAGE]


@pytest.mark.parametrize("answer", [Handled(), {"action": "handled"}], ids=["typed", "dict"])
async def test_input_handled_stops_the_prompt(build: Builder, answer: object) -> None:
    run, recorder = await answering(build, "input", answer)
    await bounded(run.agent.prompt("original"))
    accepted(run, recorder)
    assert run.requests == [] and run.agent.messages == []
    assert recorder.fired("before_agent_start") == []


@pytest.mark.parametrize(
    "answer",
    [
        AgentStartChanges(
            message=PluginMessage("note", "remember the tests"), system_prompt="Plugin prompt."
        ),
        {
            "message": {"custom_type": "note", "content": "remember the tests"},
            "system_prompt": "Plugin prompt.",
        },
    ],
    ids=["typed", "dict"],
)
async def test_before_agent_start_changes_reach_the_request(build: Builder, answer: object) -> None:
    run, recorder = await answering(build, "before_agent_start", answer)
    run.server.add(text_reply("ok"))
    await bounded(run.agent.prompt("question"))
    accepted(run, recorder)
    assert texts(run, 0, "system") == ["Plugin prompt."]
    assert texts(run, 0, "user") == ["question", "remember the tests"]
    custom = [m for m in run.agent.messages if m["role"] == "custom"]
    assert [(m["customType"], m["content"]) for m in custom] == [("note", "remember the tests")]


async def test_context_replaces_the_messages_of_the_request_only(build: Builder) -> None:
    def answer(arguments: dict[str, object]) -> object:
        messages = arguments["messages"]
        assert isinstance(messages, list)
        return [*messages, {"role": "user", "content": "added by a plugin", "timestamp": 1}]

    recorder = Recorder({"context": answer})
    run = await build(plugins=(recorder,), settings=SETTINGS)
    run.server.add(text_reply("ok"))
    await bounded(run.agent.prompt("question"))
    accepted(run, recorder)
    assert texts(run, 0, "user") == ["question", "added by a plugin"]
    assert [m["role"] for m in run.agent.messages] == ["user", "assistant"]  # the session: not


async def test_before_provider_request_replaces_the_body(build: Builder) -> None:
    def answer(arguments: dict[str, object]) -> object:
        payload = arguments["payload"]
        assert isinstance(payload, dict)
        return {**payload, "temperature": 0.25}

    recorder = Recorder({"before_provider_request": answer})
    run = await build(plugins=(recorder,), settings=SETTINGS)
    run.server.add(text_reply("ok"))
    await bounded(run.agent.prompt("question"))
    accepted(run, recorder)
    assert run.requests[0].body["temperature"] == 0.25


@pytest.mark.parametrize("answer", [Cancel(), {"cancel": True}], ids=["typed", "dict"])
async def test_session_before_switch_cancel_keeps_the_session(
    build: Builder, answer: object
) -> None:
    run, recorder = await answering(build, "session_before_switch", answer)
    run.server.add(text_reply("ok"))
    await bounded(run.agent.prompt("question"))
    before = run.agent.session.session_file
    assert before is not None
    other = build.agent_dir / "other.jsonl"
    other.write_bytes(before.read_bytes())
    assert await bounded(run.agent.new_session()) is True
    assert await bounded(run.agent.switch_session(other)) is True
    accepted(run, recorder)
    assert run.agent.session.session_file == before
    assert recorder.fired("session_shutdown") == recorder.fired("session_start") == []


@pytest.mark.parametrize("answer", [Cancel(), {"cancel": True}], ids=["typed", "dict"])
async def test_session_before_fork_cancel_stops_fork_and_clone(
    build: Builder, answer: object
) -> None:
    run, recorder = await answering(build, "session_before_fork", answer)
    await two_exchanges(run)
    before = run.agent.session.session_file
    outcome = await bounded(run.agent.fork(entry_ids(run, "user")[1]))
    assert outcome.cancelled is True
    assert await bounded(run.agent.clone()) is True
    accepted(run, recorder)
    assert run.agent.session.session_file == before
    assert recorder.fired("session_shutdown") == []


@pytest.mark.parametrize(
    "answer",
    [ForkOptions(skip_conversation_restore=True), {"skip_conversation_restore": True}],
    ids=["typed", "dict"],
)
async def test_session_before_fork_options_keep_the_conversation(
    build: Builder, answer: object
) -> None:
    run, recorder = await answering(build, "session_before_fork", answer)
    await two_exchanges(run)
    kept = list(run.agent.messages)
    before = run.agent.session.session_file
    outcome = await bounded(run.agent.fork(entry_ids(run, "user")[1]))
    accepted(run, recorder)
    assert outcome.cancelled is False and run.agent.session.session_file != before
    assert run.agent.messages == kept  # not the forked branch (one exchange)
    assert len(run.agent.session.build_context().messages) == 2


@pytest.mark.parametrize("answer", [Cancel(), {"cancel": True}], ids=["typed", "dict"])
async def test_session_before_compact_cancel_cancels_it(build: Builder, answer: object) -> None:
    run, recorder = await answering(build, "session_before_compact", answer)
    await two_exchanges(run)
    verdict = await bounded(run.agent.compact())
    accepted(run, recorder)
    assert verdict.compacted is False and verdict.aborted is True
    assert run.entries("compaction") == [] and len(run.requests) == 2
    (failed,) = recorder.fired("session_compact_failed")
    assert failed["aborted"] is True and failed["reason"] == "manual"


def _override(form: str) -> Answer:
    """A plugin compaction keeping the second user message, typed or as the reference's dict."""

    def answer(arguments: dict[str, object]) -> object:
        preparation = arguments["preparation"]
        assert isinstance(preparation, CompactionPreparation)
        first = preparation.first_kept_entry_id
        if form == "typed":
            return CompactionOverride("plugin summary", first, 1234, details={"by": "plugin"})
        return {
            "compaction": {
                "summary": "plugin summary",
                "firstKeptEntryId": first,
                "tokensBefore": 1234,
                "details": {"by": "plugin"},
            }
        }

    return answer


@pytest.mark.parametrize("form", ["typed", "dict"])
async def test_compaction_override_writes_that_summary(build: Builder, form: str) -> None:
    recorder = Recorder({"session_before_compact": _override(form)})
    run = await build(plugins=(recorder,), settings=SETTINGS)
    await two_exchanges(run)
    verdict = await bounded(run.agent.compact())
    accepted(run, recorder)
    assert verdict.compacted is True and len(run.requests) == 2  # no summary request
    (entry,) = run.entries("compaction")
    assert entry["summary"] == "plugin summary" and entry["details"] == {"by": "plugin"}
    assert entry["fromHook"] is True
    (compacted,) = recorder.fired("session_compact")
    assert compacted["compaction_entry"] == entry and compacted["from_extension"] is True
    assert run.agent.messages[0] == {
        "role": "compactionSummary",
        "summary": "plugin summary",
        "tokensBefore": entry["tokensBefore"],
        "timestamp": run.agent.messages[0]["timestamp"],
    }


RESULT: dict[str, object] = {
    "summary": "done elsewhere",
    "firstKeptEntryId": "x",
    "tokensBefore": 10,
    "estimatedTokensAfter": 2,
}


@pytest.mark.parametrize(
    "answer",
    [
        CompactionVerdict(compacted=True, result=RESULT),  # type: ignore[arg-type]
        {"compacted": True, "result": RESULT},
    ],
    ids=["typed", "dict"],
)
async def test_session_check_compaction_verdict_is_the_answer(
    build: Builder, answer: object
) -> None:
    run, recorder = await answering(build, "session_check_compaction", answer)
    await two_exchanges(run)
    verdict = await bounded(run.agent.compact("focus"))
    accepted(run, recorder)
    assert verdict == CompactionVerdict(compacted=True, result=RESULT)  # type: ignore[arg-type]
    # The recorder answered first: the built-in compaction plugin was not asked.
    assert recorder.fired("session_before_compact") == [] and len(run.requests) == 2
    assert recorder.fired("session_check_compaction")[-1]["custom_instructions"] == "focus"


@pytest.mark.parametrize("answer", [Cancel(), {"cancel": True}], ids=["typed", "dict"])
async def test_session_before_tree_cancel_stays(build: Builder, answer: object) -> None:
    run, recorder = await answering(build, "session_before_tree", answer)
    await two_exchanges(run)
    leaf = run.agent.session.leaf_id
    outcome = await bounded(run.agent.navigate_tree(entry_ids(run, "assistant")[0], summarize=True))
    accepted(run, recorder)
    assert outcome.cancelled is True and run.agent.session.leaf_id == leaf
    assert recorder.fired("session_tree") == [] and len(run.requests) == 2


@pytest.mark.parametrize(
    "answer", [TreeNavigationOptions(label="marked"), {"label": "marked"}], ids=["typed", "dict"]
)
async def test_tree_navigation_options_label(build: Builder, answer: object) -> None:
    run, recorder = await answering(build, "session_before_tree", answer)
    await two_exchanges(run)
    target = entry_ids(run, "assistant")[0]
    outcome = await bounded(run.agent.navigate_tree(target, label="asked"))
    accepted(run, recorder)
    assert outcome.cancelled is False
    assert run.agent.session.get_label(target) == "marked"  # the plugin's, not the user's
    assert [e["id"] for e in run.agent.session.get_branch()][-2] == target  # then the label


@pytest.mark.parametrize(
    "answer",
    [
        TreeNavigationOptions(
            custom_instructions="Only the file names.", replace_instructions=True
        ),
        {"custom_instructions": "Only the file names.", "replace_instructions": True},
    ],
    ids=["typed", "dict"],
)
async def test_tree_navigation_options_instructions(build: Builder, answer: object) -> None:
    run, recorder = await answering(build, "session_before_tree", answer)
    await two_exchanges(run)
    run.server.add(summary_reply("## Goal\nnames"))
    outcome = await bounded(run.agent.navigate_tree(entry_ids(run, "assistant")[0], summarize=True))
    accepted(run, recorder)
    assert outcome.summary_entry is not None and run.is_summary_request(2)
    prompt = run.prompt_text(2)
    assert "Only the file names." in prompt and BRANCH_SUMMARY_PROMPT not in prompt
    (moved,) = recorder.fired("session_tree")
    assert moved["from_extension"] is False  # the default summarizer wrote it


@pytest.mark.parametrize(
    "answer",
    [
        TreeNavigationOptions(summary=BranchSummary("plugin branch summary", {"by": "plugin"})),
        {"summary": {"summary": "plugin branch summary", "details": {"by": "plugin"}}},
    ],
    ids=["typed", "dict"],
)
async def test_tree_navigation_options_summary(build: Builder, answer: object) -> None:
    run, recorder = await answering(build, "session_before_tree", answer)
    await two_exchanges(run)
    outcome = await bounded(run.agent.navigate_tree(entry_ids(run, "assistant")[0], summarize=True))
    accepted(run, recorder)
    entry = outcome.summary_entry
    assert entry is not None and len(run.requests) == 2  # no summary request
    assert entry["summary"] == "plugin branch summary" and entry["details"] == {"by": "plugin"}
    assert entry["fromHook"] is True
    (moved,) = recorder.fired("session_tree")
    assert moved["summary_entry"] == entry and moved["from_extension"] is True


@pytest.mark.parametrize(
    "answer",
    [BashAnswer("answered", exit_code=3), {"result": {"output": "answered", "exit_code": 3}}],
    ids=["typed", "dict"],
)
async def test_bash_answer_answers_the_command(build: Builder, answer: object) -> None:
    run, recorder = await answering(build, "user_bash", answer)
    message = await bounded(run_user_bash(run.agent, "echo never-run"))
    accepted(run, recorder)
    assert (message["output"], message["exitCode"], message["cancelled"]) == ("answered", 3, False)


@pytest.mark.parametrize("form", ["typed", "dict"])
async def test_run_in_backend_runs_the_command_there(
    build: Builder, project_dir: Path, form: str
) -> None:
    backend = RecordingBackend(project_dir)
    answer = RunInBackend(backend) if form == "typed" else {"operations": backend}
    run, recorder = await answering(build, "user_bash", answer)
    message = await bounded(run_user_bash(run.agent, "echo elsewhere"))
    accepted(run, recorder)
    assert backend.commands == ["echo elsewhere"]
    assert message["output"] == "elsewhere\n" and message["exitCode"] == 0


async def test_execution_backend_is_the_backend_of_every_tool(
    build: Builder, project_dir: Path
) -> None:
    backend = RecordingBackend(project_dir)
    run, recorder = await answering(build, "execution_backend", backend, builtin=True)
    run.server.add(
        tool_call_reply([tool_call("c1", "bash", {"command": "echo via-plugin"})]),
        text_reply("done"),
    )
    await bounded(run.agent.prompt("run it"))
    accepted(run, recorder)
    assert run.ctx.backend is backend
    assert [c for c in backend.commands if c and "via-plugin" in c]
    assert "via-plugin" in text_of(run.tool_results()[0])


@pytest.mark.parametrize(
    "answer",
    [
        Resources(skill_paths=("skills",), prompt_paths=(Path("prompts"),)),
        {"skill_paths": ["skills"], "prompt_paths": [Path("prompts")]},
    ],
    ids=["typed", "dict"],
)
async def test_resources_are_collected(build: Builder, project_dir: Path, answer: object) -> None:
    run, recorder = await answering(build, "resources_discover", answer)
    # Fired directly, through the typed façade the kernel uses at start-up and on /reload.
    found = await run.host.hooks.resources_discover(cwd=project_dir, reason="reload")
    accepted(run, recorder)
    assert found == [Resources(skill_paths=("skills",), prompt_paths=(Path("prompts"),))]


# --- the checker itself -----------------------------------------------------------------------


def test_the_checker_reports_a_renamed_key_of_a_typeddict() -> None:
    entry = {
        "type": "compaction",
        "id": "c1",
        "parentId": "m1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "summary": "s",
        "first_kept_entry_id": "m1",
        "tokensBefore": 10,
    }
    assert problems(entry, CompactionEntry, "compaction_entry") == [
        "compaction_entry: CompactionEntry requires the key 'firstKeptEntryId', missing",
        "compaction_entry: 'first_kept_entry_id' not declared by CompactionEntry (declared: "
        "type, id, parentId, timestamp, summary, firstKeptEntryId, tokensBefore, usage, details, "
        "fromHook)",
    ]
    entry["firstKeptEntryId"] = entry.pop("first_kept_entry_id")
    assert problems(entry, CompactionEntry) == []  # NotRequired keys may be absent
    entry["usage"] = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": True}
    assert problems(entry, CompactionEntry, "e") == [
        "e['usage']['totalTokens']: expected int, got bool True"
    ]


def test_the_checker_resolves_unions_by_their_discriminator() -> None:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "txt": "hi"}],
        "api": "openai-completions",
        "provider": "p",
        "model": "m",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "stop",
        "timestamp": 1,
    }
    assert problems(message, AgentMessage, "message") == [
        "message['content'][0]: TextContent requires the key 'text', missing",
        "message['content'][0]: 'txt' not declared by TextContent "
        "(declared: type, text, textSignature)",
    ]
    assert problems({"role": "robot"}, AgentMessage, "m") == [
        "m: {'role': 'robot'} matches none of UserMessage, AssistantMessage, ToolResultMessage, "
        "BashExecutionMessage, CustomMessage, BranchSummaryMessage, CompactionSummaryMessage"
    ]
    assert problems(None, AssistantMessage | None) == []


def test_the_checker_knows_scalars_literals_containers_and_classes() -> None:
    assert problems(1, bool, "x") == ["x: expected bool, got int 1"]
    assert problems(True, int, "x") == ["x: expected int, got bool True"]
    assert problems(1, float) == [] and problems("1", float) != []
    assert problems("later", Literal["new", "resume"], "reason") == [
        "reason: expected Literal['new', 'resume'], got str 'later'"
    ]
    assert problems("a", Path, "cwd") == ["cwd: expected Path, got str 'a'"]
    assert problems({"a": 1}, dict[str, str], "h") == ["h['a']: expected str, got int 1"]
    assert problems(["a"], Sequence[str]) == [] and problems("a", Sequence[str]) != []
    assert problems(print, Callable[..., None]) == [] and problems(1, Callable[..., None]) != []
    assert problems(object(), object) == []
    with pytest.raises(TypeError, match="does not know the annotation"):
        problems(1, "int")


def test_the_checker_checks_protocol_members_and_dataclass_fields() -> None:
    assert (
        problems(object(), SessionView, "session")[0]
        == "session: object lacks SessionView.build_context"
    )
    preparation = TreePreparation("t", None, None, [{"type": "label"}], True)  # type: ignore[list-item]
    found = problems(preparation, TreePreparation, "preparation")
    assert found[0] == (
        "preparation.entries_to_summarize[0]: LabelEntry requires the key 'id', missing"
    )


class _Holder:
    """A class whose properties promise protocol-typed values."""

    @property
    def session(self) -> SessionView | None:
        return object()  # type: ignore[return-value]

    @property
    def name(self) -> str:
        return "fine"


def test_the_checker_reads_properties_against_their_annotations() -> None:
    found = property_problems(_Holder(), _Holder, "ctx")
    assert found and all(problem.startswith("ctx.session: ") for problem in found)
    assert found[0] == "ctx.session: object lacks SessionView.build_context"
