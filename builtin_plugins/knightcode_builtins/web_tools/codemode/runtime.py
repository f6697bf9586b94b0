"""knightcode codemode: the script side. Run as ``python3 -u -B runtime.py CHANNEL_DIR``.

This file is copied into the run's channel directory and executed by the execution backend's
Python (inside the sandbox when one is on), so it uses the standard library only and never
imports knightcode. It defines the tool functions listed in ``functions.json``, ``call_tool``,
``classify`` and ``ToolError``, then runs ``script.py`` as ``__main__``.

The channel: a call writes ``req-N.json`` (to a temporary name, then renamed, so the host never
reads half a request) and waits for ``resp-N.json``, which the host writes the same way. Files
work through every sandbox's workspace mount (bind mounts, containers, a VM share) where pipes
and sockets may not.
"""

from __future__ import annotations

import builtins
import inspect
import itertools
import json
import linecache
import os
import sys
import time
import traceback
from collections.abc import Callable

SCRIPT_NAME = "<script>"
_POLL_FIRST = 0.0002  # seconds; doubled up to _POLL_MAX while waiting for an answer
_POLL_MAX = 0.005


class ToolError(Exception):
    """A tool call failed (or was blocked); ``str(error)`` is the tool's error text.

    :ivar tool: the tool's name (``classify`` for a classification)
    :ivar details: the tool's ``details``, when it gave any
    """

    def __init__(self, message: str, tool: str = "", details: object = None) -> None:
        super().__init__(message)
        self.tool = tool
        self.details = details


class ToolResult(str):
    """A tool's text; ``.details`` holds the tool's structured details (None when it gave none)."""

    details: object = None


class _Channel:
    """Requests to the host and the answers, through files in the channel directory."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._numbers = itertools.count(1)

    def ask(self, request: dict[str, object]) -> dict[str, object]:
        number = next(self._numbers)
        path = os.path.join(self.directory, f"req-{number}.json")
        with open(path + ".tmp", "w", encoding="utf-8") as handle:
            json.dump(request, handle, ensure_ascii=False)
        os.replace(path + ".tmp", path)
        answer = os.path.join(self.directory, f"resp-{number}.json")
        delay = _POLL_FIRST
        while not os.path.exists(answer):
            time.sleep(delay)
            delay = min(delay * 2, _POLL_MAX)
        with open(answer, encoding="utf-8") as handle:
            response: object = json.load(handle)
        os.unlink(answer)
        return response if isinstance(response, dict) else {"error": "a malformed answer"}


_channel: _Channel | None = None


def call_tool(name: str, arguments: dict[str, object] | None = None, **kwargs: object) -> str:
    """Run tool ``name`` with ``arguments`` (and/or keyword arguments); returns its text.

    :raises ToolError: the tool failed, was blocked, or does not exist
    """
    assert _channel is not None, "the codemode runtime is not running"
    merged = {**(arguments or {}), **kwargs}
    response = _channel.ask({"op": "call", "tool": name, "args": merged})
    if not response.get("ok"):
        raise ToolError(str(response.get("error", "")), name, response.get("details"))
    result = ToolResult(response.get("text", ""))
    result.details = response.get("details")
    return result


def classify(
    model: str, state: object, questions: dict[str, object], temperature: float = 1.0
) -> dict[str, object]:
    """Ask classifier ``model`` typed ``questions`` about ``state``; returns the answers by
    question id.

    :raises ToolError: unknown model, invalid questions, or the provider failed
    """
    assert _channel is not None, "the codemode runtime is not running"
    response = _channel.ask(
        {
            "op": "classify",
            "model": model,
            "state": state,
            "questions": questions,
            "temperature": temperature,
        }
    )
    if not response.get("ok"):
        raise ToolError(str(response.get("error", "")), "classify")
    answers = response.get("answers")
    return answers if isinstance(answers, dict) else {}


class _Spec:
    """One entry of ``functions.json`` (``FunctionSpec.to_json``)."""

    def __init__(self, data: dict[str, object]) -> None:
        self.name = str(data["name"])
        self.tool = str(data["tool"])
        self.params = [str(item) for item in _list(data.get("params"))]
        self.required = {str(item) for item in _list(data.get("required"))}
        self.doc = str(data.get("doc") or "") or None


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _function(spec: _Spec) -> Callable[..., str]:
    """The script function of one tool (see ``functions.py``): positional arguments in
    ``params`` order, keywords by name, ``None`` meaning "not given".
    """
    name, tool, params = spec.name, spec.tool, spec.params

    def function(*args: object, **kwargs: object) -> str:
        if len(args) > len(params):
            raise TypeError(f"{name}() takes at most {len(params)} positional arguments")
        arguments = dict(zip(params, args))  # noqa: B905 (the script's Python may be < 3.10)
        for key, value in kwargs.items():
            if key in arguments:
                raise TypeError(f"{name}() got multiple values for argument {key!r}")
            arguments[key] = value
        given = {key: value for key, value in arguments.items() if value is not None}
        return call_tool(tool, given)

    required = spec.required
    function.__name__ = function.__qualname__ = name
    function.__doc__ = spec.doc
    function.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                param,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=inspect.Parameter.empty if param in required else None,
            )
            for param in params
        ]
    )
    return function


def _report(error: BaseException, runtime_file: str) -> None:
    """The traceback of the script's error, without this runtime's own frames."""
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename != runtime_file
    ]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
    lines += traceback.format_exception_only(type(error), error)
    sys.stderr.write("".join(lines))


def main(argv: list[str]) -> int:
    """Run the script of channel ``argv[1]``; the exit status (1 for an uncaught exception)."""
    global _channel
    directory = argv[1]
    _channel = _Channel(directory)
    with open(os.path.join(directory, "functions.json"), encoding="utf-8") as handle:
        specs = [_Spec(item) for item in _list(json.load(handle)) if isinstance(item, dict)]
    with open(os.path.join(directory, "script.py"), encoding="utf-8") as handle:
        source = handle.read()
    functions = {spec.name: _function(spec) for spec in specs}
    namespace: dict[str, object] = {
        "__name__": "__main__",
        "__builtins__": builtins,
        "ToolError": ToolError,
        "call_tool": call_tool,
        "classify": classify,
        "tools": {spec.tool: functions[spec.name] for spec in specs},
        **functions,
    }
    # Tracebacks show the script's lines; imports look in the working directory, not here.
    linecache.cache[SCRIPT_NAME] = (len(source), None, source.splitlines(True), SCRIPT_NAME)
    sys.path[0] = os.getcwd()
    sys.argv = [SCRIPT_NAME]
    try:
        code = compile(source, SCRIPT_NAME, "exec")
        exec(code, namespace)
    except SystemExit:
        raise
    except BaseException as error:
        _report(error, os.path.abspath(__file__))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
