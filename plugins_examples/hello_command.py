"""An example single-file extension: a slash command, a flag and a guard on tool calls.

Load it for one run with ``knightcode -e plugins_examples/hello_command.py``, or copy it into
``~/.knightcode/agent/extensions/`` to load it every time.

- ``/hello [name]`` greets (through the UI, so it works in every mode);
- ``--hello-name NAME`` sets who is greeted when ``/hello`` gets no argument;
- a ``tool_call`` handler blocks ``bash`` commands that would delete from the filesystem root.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from knightcode import Block, HookContext, hookimpl

DANGEROUS = re.compile(r"\brm\s+(-[a-zA-Z]*[rf][a-zA-Z]*\s+)+/(\s|$)")


def greeting(args: str, ctx: HookContext) -> str:
    """The text ``/hello`` shows: the argument, else the ``--hello-name`` flag, else "world"."""
    name = args.strip() or ctx.flags["hello-name"] or "world"
    return f"Hello, {name}!"


async def hello(args: str, ctx: HookContext) -> str:
    """The ``/hello`` command."""
    text = greeting(args, ctx)
    ctx.ui.notify(text)
    return text


@hookimpl
def register_commands(register: Callable[..., None]) -> None:
    """``/hello [name]``."""
    register(name="hello", description="Say hello", handler=hello)


@hookimpl
def register_flags(register: Callable[..., None]) -> None:
    """``--hello-name NAME``."""
    register(
        name="hello-name", type="string", default=None, description="Who /hello greets by default."
    )


@hookimpl
def tool_call(tool_name: str, input: dict[str, object]) -> Block | None:
    """Refuse ``rm -rf /`` and friends; every other call goes ahead."""
    if tool_name == "bash" and DANGEROUS.search(str(input.get("command", ""))):
        return Block("hello_command: refusing to delete from the filesystem root")
    return None
