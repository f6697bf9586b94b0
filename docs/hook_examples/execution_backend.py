"""An execution backend: this machine, with one more environment variable for every process.

A sandbox plugin returns a backend that reads, writes and runs inside its sandbox; every tool,
built-in or not, then works there. This one only changes the environment, when
``MY_PLUGIN_TAG`` is set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from knightcode import ExecutionBackend, HookContext, LocalBackend, hookimpl


class TaggedBackend(LocalBackend):
    """The local backend; processes also get ``MY_PLUGIN_TAG``."""

    def __init__(self, cwd: os.PathLike[str], tag: str) -> None:
        super().__init__(cwd)
        self.tag = tag

    def environment(self) -> Mapping[str, str]:
        """The default environment plus the tag."""
        return {**super().environment(), "MY_PLUGIN_TAG": self.tag}


@hookimpl
def execution_backend(ctx: HookContext) -> ExecutionBackend | None:
    """Use the tagged backend when a tag is set; None keeps the default."""
    tag = os.environ.get("MY_PLUGIN_TAG")
    return TaggedBackend(ctx.cwd, tag) if tag else None
