"""Exceptions a user can cause, each carrying the message that tells them what to do.

The CLI catches :class:`KnightcodeError` at its edge and prints ``error: <message>`` on one line,
exiting with :attr:`KnightcodeError.exit_code`; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class KnightcodeError(Exception):
    """A failure the user can understand and act on (exit code 1)."""

    exit_code: int = 1


class UsageError(KnightcodeError):
    """The command line asked for something impossible (exit code 2)."""

    exit_code = 2


class ConfigError(KnightcodeError):
    """A configuration file is unreadable or holds an invalid value (exit code 2)."""

    exit_code = 2


class SettingsError(ConfigError):
    """An invalid value in a settings file, reported as ``settings error in <file>: <key>: <why>``.

    :param file: the file that holds the bad value (or ``"<merged settings>"`` when the value is
        the result of merging several files and no single one can be blamed)
    :param key: the dotted key, e.g. ``compaction.modelOverrides.a/b.reserveTokens``
    :param problem: what is wrong with it
    """

    def __init__(self, file: str, key: str, problem: str) -> None:
        self.file = file
        self.key = key
        self.problem = problem
        where = f"{key}: " if key else ""
        super().__init__(f"settings error in {file}: {where}{problem}")


class NotAvailableError(UsageError):
    """A capability that this build does not provide yet (exit code 2).

    Raised rather than silently ignoring an option, so scripts find out at once.
    """


class PluginError(KnightcodeError):
    """A plugin broke a rule of the plugin contract (bad hook name, failing registration, …)."""
