"""Where knightcode's configuration lives: the agent directory and a project's ``.knightcode/``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

AGENT_DIR_ENV = "KNIGHTCODE_CODING_AGENT_DIR"
"""Environment variable that relocates the agent directory."""

PROJECT_CONFIG_DIRNAME = ".knightcode"
"""Name of the per-project configuration directory under the working directory."""


def agent_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The agent directory: ``$KNIGHTCODE_CODING_AGENT_DIR`` if set, else ``~/.knightcode/agent``.

    The variable's value has ``~`` expanded and is made absolute (relative to the current
    directory) so that later ``chdir`` calls cannot move it. The directory is not created.

    :param environ: the environment to consult; ``os.environ`` when omitted
    """
    env = os.environ if environ is None else environ
    value = env.get(AGENT_DIR_ENV, "")
    if value:
        return Path(os.path.abspath(os.path.expanduser(value)))
    return Path.home() / ".knightcode" / "agent"


def project_config_dir(cwd: Path) -> Path:
    """The project configuration directory of a working directory: ``<cwd>/.knightcode``."""
    return cwd / PROJECT_CONFIG_DIRNAME


def expand_path(value: str, base_dir: Path) -> Path:
    """A path written in a configuration file, made usable.

    ``~`` and ``~user`` are expanded; a relative path is taken relative to ``base_dir`` (the
    directory of the file that holds it), never to the process's current directory.
    """
    path = Path(value).expanduser()
    return path if path.is_absolute() else base_dir / path
