"""Where knightcode's configuration lives: the agent directory and a project's ``.knightcode/``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from knightcode._errors import ConfigError

AGENT_DIR_ENV = "KNIGHTCODE_CODING_AGENT_DIR"
"""Environment variable that relocates the agent directory."""

PROJECT_CONFIG_DIRNAME = ".knightcode"
"""Name of the per-project configuration directory under the working directory."""


def agent_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The agent directory: ``$KNIGHTCODE_CODING_AGENT_DIR`` if set, else ``~/.knightcode/agent``.

    The variable's value has ``~`` expanded and must then be absolute. A relative value would be
    taken from wherever knightcode starts: in a project it would make that project's own
    ``.knightcode`` the agent directory, so its extensions and settings would load as the user's,
    without trust. The directory is not created.

    :param environ: the environment to consult; ``os.environ`` when omitted
    :raises ConfigError: the variable holds a relative path
    """
    env = os.environ if environ is None else environ
    value = env.get(AGENT_DIR_ENV, "")
    if not value:
        return Path.home() / ".knightcode" / "agent"
    expanded = os.path.expanduser(value)
    if not os.path.isabs(expanded):
        raise ConfigError(
            f"{AGENT_DIR_ENV} must be an absolute path (or start with ~), got {value!r}"
        )
    return Path(os.path.normpath(expanded))


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


def extension_entry_path(entry: str, base_dir: Path) -> Path | None:
    """The path a settings ``extensions`` entry loads, or None for a ``-NAME`` block.

    An optional leading ``+`` marks a path explicitly; relative paths are relative to
    ``base_dir`` (see :func:`expand_path`). Plugin loading and the trust fingerprint both read
    entries through this, so the fingerprint covers exactly what would be imported.
    """
    if entry.startswith("-"):
        return None
    return expand_path(entry.removeprefix("+"), base_dir)
