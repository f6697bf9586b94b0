"""The Python end of ``bridge.mjs``: one Node process driving one Gondolin VM over JSON lines.

The process runs in its own session (``start_new_session=True``): QEMU stays in Node's process
group, so one ``killpg`` ends both — killing Node alone would leave QEMU running (verified, see
``../shared/reference/sandbox.md`` §3.7). It also exits on end of stdin, closing the VM.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import json
import os
import signal as signals
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BRIDGE_SCRIPT", "Bridge", "BridgeError", "Event", "OutputSink"]

BRIDGE_SCRIPT = Path(__file__).with_name("bridge.mjs")
# One event line carries at most a 256 KiB output window (base64: a third more); requests may
# carry a whole stdin. The reader's line limit is far above both.
_LINE_LIMIT = 256 * 1024 * 1024
_STDERR_LINES = 40

OutputSink = Callable[[str, bytes], None]
"""Receives ``("stdout" | "stderr", chunk)`` for each piece of an exec's output."""


class BridgeError(Exception):
    """The bridge answered a request with an error, or died before answering.

    :param message: the bridge's error text (or why it died, with the end of its stderr)
    :param died: True when the bridge process is gone
    """

    def __init__(self, message: str, *, died: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.died = died


@dataclass(frozen=True)
class Event:
    """One line from the bridge: which request it answers, what happened, and the rest."""

    id: int
    event: str
    fields: Mapping[str, object]

    def text(self, key: str) -> str | None:
        """A string field, or None."""
        value = self.fields.get(key)
        return value if isinstance(value, str) else None

    def number(self, key: str) -> int | None:
        """An integer field, or None."""
        value = self.fields.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None


def _parse(line: bytes) -> Event | None:
    try:
        data: object = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    fields = {str(key): value for key, value in data.items()}
    ident, event = fields.get("id"), fields.get("event")
    if not isinstance(ident, int) or not isinstance(event, str):
        return None
    return Event(ident, event, fields)


def _dead(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie, or gone); False where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # the state follows the command name, which is in parentheses and may hold spaces
            return stat.read().rpartition(b")")[2].split()[0] in (b"Z", b"X")
    except FileNotFoundError:
        return True
    except (OSError, IndexError):
        return False


class Bridge:
    """A running ``node bridge.mjs``; create it with :meth:`launch`."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Event]] = {}
        self._sinks: dict[int, OutputSink] = {}
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self._eof = False
        self._readers = [
            asyncio.ensure_future(self._read_events()),
            asyncio.ensure_future(self._read_stderr()),
        ]

    @classmethod
    async def launch(
        cls, node: str, package_dir: Path, module_root: Path, env: Mapping[str, str]
    ) -> Bridge:
        """Start ``node bridge.mjs <module_root>`` in ``package_dir``, in a new session."""
        process = await asyncio.create_subprocess_exec(
            node,
            str(BRIDGE_SCRIPT),
            str(module_root),
            cwd=package_dir,
            env=dict(env),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            limit=_LINE_LIMIT,
        )
        return cls(process)

    @property
    def pid(self) -> int:
        """The bridge's pid, which is also its process group (and QEMU's)."""
        return self.process.pid

    @property
    def alive(self) -> bool:
        """Whether the bridge still runs and still talks.

        A bridge killed a moment ago is noticed here before the event loop reaps it (its end of
        file may not have been read yet), so an exec right after a crash starts a new one.
        """
        return not self._eof and self.process.returncode is None and not _dead(self.pid)

    def stderr_tail(self) -> str:
        """The last lines the bridge logged (for error messages)."""
        return "\n".join(self._stderr)

    def send(self, op: str, fields: Mapping[str, object], sink: OutputSink | None = None) -> int:
        """Write one request (at once, without waiting) and return its id; its answer arrives
        through :meth:`answer`, its output chunks through ``sink``.

        :raises BridgeError: the bridge is gone
        """
        if not self.alive or self.process.stdin is None or self.process.stdin.is_closing():
            raise BridgeError(self._death_message(), died=True)
        self._next_id += 1
        ident = self._next_id
        self._pending[ident] = asyncio.get_running_loop().create_future()
        if sink is not None:
            self._sinks[ident] = sink
        line = json.dumps({"id": ident, "op": op, **fields}, separators=(",", ":"))
        self.process.stdin.write(line.encode() + b"\n")
        return ident

    def answer(self, ident: int) -> asyncio.Future[Event]:
        """The future of request ``ident``'s final event (``error`` events raise)."""
        return self._pending[ident]

    async def request(self, op: str, **fields: object) -> Event:
        """Send a request and wait for its answer.

        :raises BridgeError: the bridge answered ``error`` or died
        """
        ident = self.send(op, fields)
        return await self.answer(ident)

    async def _read_events(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                try:
                    line = await stdout.readline()
                except ValueError:  # a line over the limit: the protocol is broken
                    break
                if not line:
                    break
                event = _parse(line)
                if event is not None:
                    self._dispatch(event)
        finally:
            self._eof = True
            # Let the process exit status and its last words arrive before reporting them.
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self.process.wait()), 1.0)
            error = BridgeError(self._death_message(), died=True)
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(error)
            self._pending.clear()
            self._sinks.clear()

    def _dispatch(self, event: Event) -> None:
        if event.event in ("stdout", "stderr"):
            sink = self._sinks.get(event.id)
            data = event.text("data")
            if sink is not None and data:
                sink(event.event, base64.b64decode(data))
            return
        future = self._pending.pop(event.id, None)
        self._sinks.pop(event.id, None)
        if future is None or future.done():
            return
        if event.event == "error":
            future.set_exception(BridgeError(event.text("message") or "unknown bridge error"))
        else:
            future.set_result(event)

    async def _read_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        with contextlib.suppress(ValueError):
            async for raw in stderr:
                self._stderr.append(raw.decode(errors="replace").rstrip())

    def _death_message(self) -> str:
        code = self.process.returncode
        status = f"exit status {code}" if code is not None else "stopped answering"
        tail = self.stderr_tail()
        return f"the gondolin bridge ended ({status})" + (f":\n{tail}" if tail else "")

    def kill(self) -> None:
        """SIGKILL the bridge's whole process group (Node and QEMU); safe to repeat."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signals.SIGKILL)

    async def close(self, grace: float = 5.0) -> None:
        """Ask the bridge to close the VM, end its stdin, then kill what is left of the group."""
        if self.alive:
            with contextlib.suppress(BridgeError, TimeoutError):
                await asyncio.wait_for(self.request("close"), grace)
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), grace)
        self.kill()  # QEMU shares the group: nothing outlives this
        await self.process.wait()
        for reader in self._readers:
            reader.cancel()
        await asyncio.gather(*self._readers, return_exceptions=True)


def exec_fields(
    argv: Sequence[str], cwd: str, env: Mapping[str, str], stdin: bytes | None
) -> dict[str, object]:
    """The fields of an ``exec`` request."""
    return {
        "argv": list(argv),
        "cwd": cwd,
        "env": dict(env),
        "stdin": base64.b64encode(stdin).decode() if stdin is not None else None,
    }
