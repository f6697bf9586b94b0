"""Running ``rg`` through the backend for ``grep`` and ``find``: locating it, streaming its
output line by line, and stopping it early once enough results arrived.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from knightcode._abort import AbortSignal
from knightcode._tools.backend import ExecResult, ExecutionBackend
from knightcode._tools.context import ToolContext
from knightcode._tools.errors import OPERATION_ABORTED, ToolError

__all__ = ["LineSplitter", "RipgrepRun", "find_ripgrep", "rg_failure"]

RG_MISSING = (
    "ripgrep (rg) is not available. It is installed with knightcode (the ripgrep "
    "package); reinstall knightcode or put rg on PATH."
)


async def find_ripgrep(backend: ExecutionBackend) -> str:
    """The ``rg`` the backend runs, or a ToolError saying how to get one."""
    path = await backend.find_executable("rg")
    if path is None:
        raise ToolError(RG_MISSING)
    return path


class LineSplitter:
    r"""Turns output chunks into complete lines (``bytes`` without ``\n``)."""

    def __init__(self) -> None:
        self._partial = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        return lines

    def rest(self) -> bytes:
        """The unterminated last line, if any."""
        rest, self._partial = self._partial, b""
        return rest


class RipgrepRun:
    """One ``rg`` process; its consumer calls :meth:`stop` once it has enough results."""

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx
        self._stop = AbortSignal()
        self.stopped_early = False

    def stop(self) -> None:
        """Kill rg: the results collected so far are all that is wanted."""
        self.stopped_early = True
        self._stop.abort()

    async def run(
        self, argv: Sequence[str], cwd: str | None, on_output: Callable[[bytes], None]
    ) -> ExecResult:
        """Run to completion (or :meth:`stop`, or the context's abort signal)."""
        abort = self._ctx.signal
        # The backend takes one stop signal: ours, which the run's abort sets too.
        forget = abort.on_abort(self._stop.abort)
        try:
            result = await self._ctx.backend.exec(
                argv, cwd=cwd, signal=self._stop, on_output=on_output, merge_stderr=False
            )
        except OSError as error:
            raise ToolError(f"Failed to run ripgrep: {error}") from error
        finally:
            forget()
        if abort.aborted:
            raise ToolError(OPERATION_ABORTED)
        return result


def rg_failure(result: ExecResult) -> ToolError:
    """The error for an rg run that failed (exit status other than 0 and 1)."""
    message = result.stderr.decode("utf-8", "replace").strip()
    code = "null" if result.exit_code is None else str(result.exit_code)
    return ToolError(message or f"ripgrep exited with code {code}")
