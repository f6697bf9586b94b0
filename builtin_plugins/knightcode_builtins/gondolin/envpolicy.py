"""What environment a sandboxed process gets (settings ``sandbox.env``).

* ``"allowlist"`` (the default): the guest's own variables (``PATH``, ``HOME``, ``TMPDIR`` …),
  plus a short list of harmless host variables (terminal, locale, time zone, git identity) and
  the names in ``sandbox.envAllow``. Provider keys and tokens stay on the host.
* ``"inherit"``: every host variable except those naming host paths (``PATH``, ``HOME``,
  ``VIRTUAL_ENV``, ``LD_*``, ``XDG_*`` …, which would break the guest; the guest's values are
  used). **Provider keys such as ``ANTHROPIC_API_KEY`` then become visible inside** — the
  reference's behaviour, offered for tools that need credentials.

``sandbox.envSet`` is set on top in both modes. Values are never logged.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

from knightcode_builtins.gondolin.config import SandboxConfig

__all__ = ["ALLOWED_BY_DEFAULT", "HOST_PATH_VARIABLES", "EnvPolicy"]

ALLOWED_BY_DEFAULT = (
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
)
"""Host variables passed under ``"allowlist"`` (shell patterns)."""

HOST_PATH_VARIABLES = (
    "PATH",
    "HOME",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "TMPDIR",
    "VIRTUAL_ENV",
    "PYTHONHOME",
    "PYTHONPATH",
    "LD_*",
    "XDG_*",
    "_",
)
"""Host variables never passed: they name host paths that mean nothing (or harm) inside."""


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


class EnvPolicy:
    """Builds the environment of sandboxed processes from the host's and the guest's."""

    def __init__(self, config: SandboxConfig, guest: Mapping[str, str]) -> None:
        self.mode = config.env
        self._allow = ALLOWED_BY_DEFAULT + tuple(config.env_allow)
        self._set = dict(config.env_set)
        self._guest = dict(guest)

    def passes(self, name: str) -> bool:
        """Whether the host's value of ``name`` may go inside."""
        if self.mode == "inherit":
            return not _matches(name, HOST_PATH_VARIABLES)
        return _matches(name, self._allow) and not _matches(name, HOST_PATH_VARIABLES)

    def environment(self, host: Mapping[str, str]) -> dict[str, str]:
        """The default environment of a process inside."""
        env = {name: value for name, value in host.items() if self.passes(name)}
        env.update(self._guest)
        env.update(self._set)
        return env

    def screen(self, env: Mapping[str, str], host: Mapping[str, str]) -> dict[str, str]:
        """An environment a caller built (a plugin passing ``os.environ``), made safe: host
        values of variables the policy keeps out are dropped, host paths replaced by the
        guest's, and variables the caller set itself kept.
        """
        screened: dict[str, str] = {}
        for name, value in env.items():
            from_host = host.get(name) == value
            if from_host and not self.passes(name) and name not in self._set:
                if name in self._guest:
                    screened[name] = self._guest[name]
                continue
            screened[name] = value
        return screened
