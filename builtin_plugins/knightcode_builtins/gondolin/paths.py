"""Agent paths (``/workspace/…``) ↔ host paths, with the escape checks every file access makes.

The model sees the working folder as ``/workspace``. A path under it is served on the host
(the mount writes through, so the bytes are the same), but only after the host path has been
resolved — links followed — and found still inside the host folder: a link in the workspace
that points at ``~/.ssh`` is refused, not followed. A host-absolute path under the working
folder (the model may have seen one in AGENTS.md or an error) is accepted too. Every other
path belongs to the sandbox's own filesystem and never touches the host's (the backend runs it
inside), so ``/workspace/../etc/passwd`` reads the *guest's* ``/etc/passwd``.
"""

from __future__ import annotations

import errno
import os
import posixpath
from dataclasses import dataclass

__all__ = ["AGENT_ROOT", "PathEscape", "PathMapper"]

AGENT_ROOT = "/workspace"


class PathEscape(PermissionError):
    """A workspace path whose host target lies outside the working folder."""


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclass(frozen=True)
class PathMapper:
    """Maps between the agent's view and the host for one working folder.

    :param host_root: the working folder on the host (resolved once, links followed)
    :param agent_root: where the sandbox mounts it
    """

    host_root: str
    agent_root: str = AGENT_ROOT

    @classmethod
    def for_folder(cls, folder: str | os.PathLike[str]) -> PathMapper:
        """The mapper of ``folder`` (links in its own path resolved)."""
        return cls(os.path.realpath(os.fspath(folder)))

    def is_inside(self, agent_path: str) -> bool:
        """Whether the (absolute) agent path is the workspace or below it."""
        return _inside(posixpath.normpath(agent_path), self.agent_root)

    def to_host(self, path: str) -> str | None:
        """The host path serving ``path``, or None when ``path`` is a sandbox-only path.

        :raises PathEscape: ``path`` is under the workspace but resolves (through a link)
            outside the working folder
        """
        normal = posixpath.normpath(path)
        if _inside(normal, self.agent_root):
            relative = normal[len(self.agent_root) :].lstrip("/")
            host = os.path.join(self.host_root, relative) if relative else self.host_root
        elif _inside(normal, self.host_root):
            host = normal
        else:
            return None
        resolved = os.path.realpath(host)
        if not _inside(resolved, self.host_root):
            raise PathEscape(
                errno.EACCES,
                f"refused: the path leads outside the workspace (to {self.shown(resolved)})",
                path,
            )
        return host

    def to_agent(self, host_path: str) -> str:
        """The agent's name for a host path under the working folder (others are unchanged)."""
        if _inside(host_path, self.host_root):
            return self.agent_root + host_path[len(self.host_root) :]
        return host_path

    def shown(self, host_path: str) -> str:
        """A host path as the model may see it: inside → agent path; outside → a placeholder,
        so an error message never tells the sandbox where the host keeps things.
        """
        if _inside(host_path, self.host_root):
            return self.to_agent(host_path)
        return "a host path outside the workspace"
