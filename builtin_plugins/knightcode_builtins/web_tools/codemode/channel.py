"""The host side of a script run's channel: a private directory both sides can reach.

``LocalBackend.exec`` takes stdin as bytes, not a stream, and a VM or container need not pass
pipes or sockets through, but every sandbox mounts the workspace. So the script and the host
talk through files (``runtime.py`` describes the protocol) in a directory that is

* **private**: made by ``tempfile.mkdtemp`` — a random name, mode 0700 — so another local user
  can neither read the requests nor plant one; the script itself runs with the trust of
  ``bash``;
* **reachable by the script**: without a sandbox, a temporary directory of this machine; under
  one that maps the workspace (``/workspace``), a directory under the host's project folder
  (``.knightcode/codemode/``, git-ignored), which the script sees through the mount;
* **read on the host directly**: polling goes to the host's file system, not through the
  backend, so a request costs a ``scandir`` rather than a process in the sandbox.

The directory is removed when the run ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode import ToolContext

__all__ = ["Channel", "ChannelError", "Request"]

_REQUEST = re.compile(r"req-(\d+)\.json")
_WORKSPACE_DIR = (".knightcode", "codemode")


class ChannelError(Exception):
    """The backend cannot see a directory the host can write (a remote backend, say)."""


Request = tuple[int, object]
"""A request's number and its JSON value (None when it could not be read)."""


class Channel:
    """One run's directory: ``host_dir`` as this machine names it, ``agent_dir`` as the backend
    (and so the script) does.
    """

    def __init__(self, host_dir: Path, agent_dir: str) -> None:
        self.host_dir = host_dir
        self.agent_dir = agent_dir

    @classmethod
    def create(cls, ctx: ToolContext) -> Channel:
        """A fresh private directory for a run of ``ctx``'s backend.

        :raises ChannelError: a backend that maps paths but no project folder to put it in
        """
        to_agent = getattr(ctx.backend, "agent_path", None)
        if not callable(to_agent):
            host_dir = Path(tempfile.mkdtemp(prefix="knightcode-code-"))
            return cls(host_dir, str(host_dir))
        if ctx.context is None:
            raise ChannelError("codemode under a sandbox needs a session (the project folder)")
        base = Path(ctx.context.cwd).joinpath(*_WORKSPACE_DIR)
        base.mkdir(parents=True, exist_ok=True)
        ignore = base / ".gitignore"
        if not ignore.exists():  # a run's leftovers (a kill mid-run) stay out of git
            ignore.write_text("*\n", encoding="utf-8")
        host_dir = Path(tempfile.mkdtemp(prefix="run-", dir=base))
        return cls(host_dir, str(to_agent(host_dir)))

    def agent_path(self, name: str) -> str:
        """The backend's path of file ``name`` of the channel."""
        return f"{self.agent_dir.rstrip('/')}/{name}"

    def write(self, name: str, data: bytes) -> None:
        """Put a file in the channel (the runtime, the script, the function specs)."""
        self.host_dir.joinpath(name).write_bytes(data)

    def take_requests(self) -> list[Request]:
        """The complete requests waiting, in order, each removed once read."""
        found: list[tuple[int, str]] = []
        with os.scandir(self.host_dir) as entries:
            for entry in entries:
                match = _REQUEST.fullmatch(entry.name)
                if match is not None:
                    found.append((int(match[1]), entry.path))
        requests: list[Request] = []
        for number, path in sorted(found):
            try:
                value: object = json.loads(Path(path).read_bytes())
            except (OSError, ValueError):
                value = None
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            requests.append((number, value))
        return requests

    def respond(self, number: int, answer: dict[str, object]) -> None:
        """Answer request ``number`` (written whole, then renamed into place)."""
        final = self.host_dir / f"resp-{number}.json"
        partial = self.host_dir / f"resp-{number}.tmp"
        partial.write_text(json.dumps(answer, ensure_ascii=False, default=str), encoding="utf-8")
        os.replace(partial, final)

    def close(self) -> None:
        """Remove the directory and everything in it."""
        shutil.rmtree(self.host_dir, ignore_errors=True)
