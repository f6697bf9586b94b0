"""The ``ctx`` every hook handler receives: :class:`HookContext`.

The context is created once, with the plugin host (:func:`create_hook_context`), before any
session exists; the kernel then binds what appears later through two methods only — the running
session (:meth:`HookContext.bind_session`) and the user interface of the mode
(:meth:`HookContext.bind_ui`). Plugins read it; they never assign to it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from knightcode._errors import KnightcodeError

if TYPE_CHECKING:
    from knightcode._abort import AbortSignal
    from knightcode._config.loading import Settings
    from knightcode._llm.registry import ModelRegistry
    from knightcode._plugins.handles import AgentHandle, SessionView
    from knightcode._plugins.hooks import Hooks
    from knightcode._tools.backend import ExecutionBackend

__all__ = [
    "ExtensionUI",
    "FlagValue",
    "FlagValues",
    "HeadlessUI",
    "HookContext",
    "NoSessionError",
    "NotifyLevel",
]

_T = TypeVar("_T")

NotifyLevel = Literal["info", "warning", "error"]
SessionMode = Literal["interactive", "text", "json", "rpc"]
"""How a session runs (:attr:`HookContext.mode`)."""
FlagValue = str | bool | None
"""A plugin flag's value: a switch is a bool, a flag taking a value a string (None: not given
and no default)."""


class ExtensionUI(Protocol):
    """Dialogs and notices a plugin can ask for. Dialogs are awaitable and return their default
    (None, or False for ``confirm``) when nobody can answer or the timeout (seconds) passes.
    """

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None:
        """Pick one of ``options``."""
        ...

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        """Yes or no."""
        ...

    async def input(
        self,
        title: str,
        placeholder: str = "",
        *,
        timeout: float | None = None,
        secret: bool = False,
    ) -> str | None:
        """One line of text; ``secret`` (an API key, a password) asks for it masked: the
        terminal shows dots, an RPC client gets ``"secret": true`` and should do the same.
        """
        ...

    async def editor(self, title: str, prefill: str = "") -> str | None:
        """Several lines of text."""
        ...

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        """A notice; it does not wait for anyone."""
        ...

    def set_status(self, key: str, text: str | None) -> None:
        """A status-line entry under ``key`` (None removes it)."""
        ...

    def set_widget(self, key: str, lines: Sequence[str] | None) -> None:
        """Lines of text shown under ``key`` (None removes them)."""
        ...

    def set_title(self, title: str) -> None:
        """The window or terminal title."""
        ...

    def set_editor_text(self, text: str) -> None:
        """Put ``text`` into the input editor."""
        ...


def _unanswered(kind: str, title: str, answer: str) -> None:
    """One line on stderr: a dialog nobody could see got its default (else a command that asks
    would seem to do nothing at all).
    """
    print(f"knightcode: nobody can answer {title!r} here ({kind}): {answer}", file=sys.stderr)


class HeadlessUI:
    """The UI when nobody can answer (print and JSON modes): dialogs resolve to their defaults at
    once, each saying so in one line on stderr, and notices go to stderr too — stdout belongs to
    the answer or the JSON stream.
    """

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None:
        """No choice: None."""
        _unanswered("select", title, "no choice")
        return None

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        """No confirmation: False."""
        _unanswered("confirm", title, "no")
        return False

    async def input(
        self,
        title: str,
        placeholder: str = "",
        *,
        timeout: float | None = None,
        secret: bool = False,
    ) -> str | None:
        """No text: None."""
        _unanswered("input", title, "no text")
        return None

    async def editor(self, title: str, prefill: str = "") -> str | None:
        """No text: None."""
        _unanswered("editor", title, "no text")
        return None

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        """``<level>: <message>`` on stderr."""
        print(f"{level}: {message}", file=sys.stderr)

    def set_status(self, key: str, text: str | None) -> None:
        """Nothing to show it on."""

    def set_widget(self, key: str, lines: Sequence[str] | None) -> None:
        """Nothing to show it on."""

    def set_title(self, title: str) -> None:
        """Nothing to show it on."""

    def set_editor_text(self, text: str) -> None:
        """There is no editor."""


class _PausingUI:
    """The mode's UI, with dialogs that pause the hook deadline of the handler that opens them
    (the user is thinking; see :mod:`knightcode._plugins.watchdog`).
    """

    def __init__(self, ui: ExtensionUI) -> None:
        self.inner = ui

    async def _dialog(self, opening: Awaitable[_T]) -> _T:
        from knightcode._plugins.watchdog import current

        record = current()
        if record is None:
            return await opening
        record.pause()
        try:
            return await opening
        finally:
            record.resume()

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None:
        """See :meth:`ExtensionUI.select`."""
        return await self._dialog(self.inner.select(title, options, timeout=timeout))

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        """See :meth:`ExtensionUI.confirm`."""
        return await self._dialog(self.inner.confirm(title, message, timeout=timeout))

    async def input(
        self,
        title: str,
        placeholder: str = "",
        *,
        timeout: float | None = None,
        secret: bool = False,
    ) -> str | None:
        """See :meth:`ExtensionUI.input`."""
        if not secret:  # a UI written before ``secret`` existed still works for plain text
            return await self._dialog(self.inner.input(title, placeholder, timeout=timeout))
        return await self._dialog(
            self.inner.input(title, placeholder, timeout=timeout, secret=True)
        )

    async def editor(self, title: str, prefill: str = "") -> str | None:
        """See :meth:`ExtensionUI.editor`."""
        return await self._dialog(self.inner.editor(title, prefill))

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        """See :meth:`ExtensionUI.notify`."""
        self.inner.notify(message, level)

    def set_status(self, key: str, text: str | None) -> None:
        """See :meth:`ExtensionUI.set_status`."""
        self.inner.set_status(key, text)

    def set_widget(self, key: str, lines: Sequence[str] | None) -> None:
        """See :meth:`ExtensionUI.set_widget`."""
        self.inner.set_widget(key, lines)

    def set_title(self, title: str) -> None:
        """See :meth:`ExtensionUI.set_title`."""
        self.inner.set_title(title)

    def set_editor_text(self, text: str) -> None:
        """See :meth:`ExtensionUI.set_editor_text`."""
        self.inner.set_editor_text(text)


class NoSessionError(KnightcodeError):
    """A plugin asked for the session (``ctx.append_entry`` …) while none is running, e.g. from
    ``knightcode config`` or before start-up finished.
    """


class FlagValues(Mapping[str, FlagValue]):
    """The plugin flags of this command line by name (``ctx.flags["plan-mode"]``): the value given,
    else the flag's default. Only registered flags are keys.
    """

    def __init__(
        self,
        registered: Callable[[], Mapping[str, FlagValue]],
        given: Mapping[str, FlagValue],
    ) -> None:
        self._registered = registered  # name -> default, read live (plugins may reload)
        self._given = given

    def __getitem__(self, name: str) -> FlagValue:
        defaults = self._registered()
        if name not in defaults:
            raise KeyError(name)
        return self._given.get(name, defaults[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._registered())

    def __len__(self) -> int:
        return len(self._registered())


class HookContext:
    """What a hook handler can see and use of the running knightcode.

    Always there: :attr:`cwd`, :attr:`agent_dir`, :attr:`settings`, :attr:`flags`,
    :attr:`ui`/:attr:`has_ui`, :attr:`hooks`. From start-up on: :attr:`model_registry`. While a
    session runs (in every mode): :attr:`agent`, :attr:`session`, :attr:`backend`,
    :attr:`signal`; before that they are None.
    """

    def __init__(
        self,
        *,
        cwd: Path,
        agent_dir: Path,
        settings: Settings,
        flags: FlagValues,
        hooks: Hooks,
        project_trusted: bool = False,
    ) -> None:
        self._cwd = cwd
        self._project_trusted = project_trusted
        self._agent_dir = agent_dir
        self._settings = settings
        self._flags = flags
        self._hooks = hooks
        self._ui: ExtensionUI = HeadlessUI()
        self._has_ui = False
        self._agent: AgentHandle | None = None
        self._mode: SessionMode | None = None
        self._models: ModelRegistry | None = None
        self._backend: ExecutionBackend | None = None
        self._shutdown: Callable[[], None] | None = None
        self._tasks: set[asyncio.Task[object]] = set()

    def __repr__(self) -> str:
        return f"<HookContext cwd={str(self._cwd)!r} has_ui={self._has_ui}>"

    # --- always there ---------------------------------------------------------------------

    @property
    def cwd(self) -> Path:
        """The working directory of the session (the project)."""
        return self._cwd

    @property
    def agent_dir(self) -> Path:
        """The agent directory (``~/.knightcode/agent`` unless ``KNIGHTCODE_CODING_AGENT_DIR``)."""
        return self._agent_dir

    @property
    def project_trusted(self) -> bool:
        """Whether the project's ``.knightcode/`` is trusted (``knightcode trust``): a plugin
        reads project configuration of its own (builtin:mcp's ``mcp.json``) only then.
        """
        return self._project_trusted

    @property
    def settings(self) -> Settings:
        """The merged settings (the trusted project's over the user's)."""
        return self._settings

    @property
    def flags(self) -> FlagValues:
        """Plugin flags of this command line: ``ctx.flags["name"]`` (see ``register_flags``)."""
        return self._flags

    @property
    def ui(self) -> ExtensionUI:
        """Dialogs and notices (RPC requests in RPC mode, stderr in print and JSON modes)."""
        return self._ui

    @property
    def has_ui(self) -> bool:
        """Whether a person (or an RPC client) can answer dialogs."""
        return self._has_ui

    @property
    def hooks(self) -> Hooks:
        """Fire hooks for the other plugins (the compaction plugin fires
        ``session_before_compact`` …): one typed method per hook.
        """
        return self._hooks

    # --- while a session runs -------------------------------------------------------------

    @property
    def agent(self) -> AgentHandle | None:
        """The running agent session (model, messages, abort, compaction …)."""
        return self._agent

    @property
    def mode(self) -> SessionMode | None:
        """How the session runs: ``interactive`` (a person at the terminal UI), ``text``
        (``-p``), ``json`` (``--mode json``) or ``rpc``; None outside a session. A plugin uses it
        to choose between waiting for something (a script expects a complete answer) and going
        on without it (a person sees it arrive).
        """
        return self._mode

    @property
    def session(self) -> SessionView | None:
        """The current session file, read-only."""
        return self._agent.session if self._agent is not None else None

    @property
    def model_registry(self) -> ModelRegistry | None:
        """Providers, models and keys; classifiers (there from start-up, before the session)."""
        return self._models

    @property
    def backend(self) -> ExecutionBackend | None:
        """The execution backend every tool uses (files and processes)."""
        return self._backend

    @property
    def signal(self) -> AbortSignal | None:
        """The abort signal of the current run; between runs, a fresh one that nothing aborts
        (an earlier run's abort never stops work a plugin starts later).
        """
        return self._agent.signal if self._agent is not None else None

    def _require_agent(self, what: str) -> AgentHandle:
        if self._agent is None:
            raise NoSessionError(f"{what} needs a running session")
        return self._agent

    def abort(self) -> None:
        """Abort the current run (nothing happens when none is running)."""
        if self._agent is not None:
            self._agent.abort()

    def append_entry(self, custom_type: str, data: object = None) -> str:
        """Keep plugin state in the session as a ``custom`` entry (never sent to the model);
        emits ``entry_appended``. Returns the entry id.

        :raises NoSessionError: no session is running
        """
        return self._require_agent("append_entry").append_entry(custom_type, data)

    def set_session_name(self, name: str | None) -> None:
        """Name the session (emits ``session_info_changed``).

        :raises NoSessionError: no session is running
        """
        self._require_agent("set_session_name").set_session_name(name)

    def shutdown(self) -> None:
        """Ask knightcode to exit once the current run has settled (RPC and interactive
        modes; a one-shot ``-p`` run ends by itself).
        """
        if self._shutdown is not None:
            self._shutdown()

    def spawn(self, work: Coroutine[object, object, _T]) -> asyncio.Task[_T]:
        """Run ``work`` in the background, owned by knightcode: it is cancelled when the
        session ends, and a failure is reported instead of being lost.
        """
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[_T]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            print(
                f"knightcode: background task failed: {type(error).__name__}: {error}",
                file=sys.stderr,
            )

    # --- binding (the kernel only) ----------------------------------------------------------

    def bind_models(self, registry: ModelRegistry) -> None:
        """The model registry exists (the kernel calls this first, while building a session)."""
        self._models = registry

    def bind_session(
        self, agent: AgentHandle, backend: ExecutionBackend, *, mode: SessionMode | None = None
    ) -> None:
        """The session is running (the kernel calls this once the agent is built)."""
        self._agent = agent
        self._mode = mode
        self._models = agent.model_registry
        self._backend = backend

    def bind_ui(
        self, ui: ExtensionUI, *, has_ui: bool, shutdown: Callable[[], None] | None = None
    ) -> None:
        """The mode's user interface (RPC dialogs, the terminal); the time a hook handler
        spends in one of its dialogs does not count against the hook deadline.
        """
        self._ui = _PausingUI(ui) if has_ui else ui
        self._has_ui = has_ui
        self._shutdown = shutdown

    def reload_settings(self, settings: Settings) -> None:
        """The settings were read again (plugin reload)."""
        self._settings = settings

    async def aclose(self) -> None:
        """Cancel the background tasks and wait for them (the session is ending)."""
        from knightcode._tools.backend import PreparedBackend

        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        # A sandbox backend's container or VM ends with the session, not with the machine.
        if isinstance(self._backend, PreparedBackend):
            await self._backend.aclose()
