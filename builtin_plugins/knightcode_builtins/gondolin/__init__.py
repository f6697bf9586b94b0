"""builtin:gondolin — every tool behind an isolation boundary.

With settings ``sandbox.backend`` (or ``--sandbox NAME``) set to ``bwrap``, ``container`` or
``gondolin``, this plugin supplies the session's execution backend: the seven built-in tools,
``!``/``!!`` commands, RPC ``bash`` and plugin tools then all run inside, with the working
folder mounted read-write at ``/workspace``.

* ``setup``: settings → backend (never failing open); ``backend``: the ``ExecutionBackend``
  shared by every runner (paths, host-side files, environment policy, host-side ``rg``);
* runners: ``bwrap`` (Linux namespaces), ``container`` (docker or podman), ``vm`` (a Gondolin
  micro-VM through a Node bridge);
* ``probes``/``doctor``: ``knightcode sandbox doctor``, and the boundary check that refuses a
  leaking session at start.

Switch it off with ``"-builtin:gondolin"`` in settings ``extensions``; settings that still ask
for a sandbox then refuse to run. See ``docs/containerization.md``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from knightcode import hookimpl

if TYPE_CHECKING:
    from pathlib import Path

    from knightcode import ExecutionBackend, HookContext

__all__: list[str] = []


@hookimpl
def register_flags(register: Callable[..., None]) -> None:
    """``--sandbox NAME``."""
    register(
        name="sandbox",
        type="string",
        default=None,
        description=(
            "Run the tools in a sandbox: local, bwrap, container or gondolin "
            "(overrides settings sandbox.backend; see 'knightcode sandbox doctor')."
        ),
    )


@hookimpl
def execution_backend(ctx: HookContext) -> ExecutionBackend | None:
    """The sandbox backend the settings ask for, or None (``local``)."""
    if not ctx.flags.get("sandbox") and ctx.settings.get("sandbox") is None:
        return None  # the common case, without importing the sandbox's modules at start-up
    from knightcode_builtins.gondolin.setup import backend_for

    return backend_for(ctx)


@hookimpl
def session_start(reason: str, previous_session_file: Path | None, ctx: HookContext) -> None:
    """Show the active sandbox in the status bar."""
    if "knightcode_builtins.gondolin.backend" not in sys.modules:
        return  # no sandbox was built (and start-up need not import one)
    from knightcode_builtins.gondolin.backend import SandboxBackend

    backend = ctx.backend
    if isinstance(backend, SandboxBackend):
        ctx.ui.set_status("sandbox", f"sandbox: {backend.name} → /workspace")
