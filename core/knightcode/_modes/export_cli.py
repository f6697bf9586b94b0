"""``knightcode --export SESSION [OUT]``: write a session's viewer page and exit.

SESSION is a session file's path, or the id (or a unique id prefix) of a session of this project
or of any other, found as ``--session`` finds it. OUT defaults to the reference's name,
``knightcode-session-<session file name>.html`` in the current directory, and the path written
is printed as the reference prints it (``Exported to: PATH``). The page is the one RPC
``export_html`` writes for the same session, byte for byte. No model is needed and no session
is created: an empty file or one that is not a session is refused rather than repaired (a file
of an older format version is migrated on opening, as ``--session`` would).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._errors import KnightcodeError, UsageError

if TYPE_CHECKING:
    from knightcode._cli.main_command import RunRequest
    from knightcode._config.loading import Settings

__all__ = ["default_export_name", "find_export_session", "run_export"]


def default_export_name(session_file: Path) -> str:
    """``knightcode-session-<stem>.html``: the reference's default for ``--export`` and
    ``export_html``.
    """
    return f"knightcode-session-{session_file.stem}.html"


def find_export_session(
    value: str, cwd: Path, agent_dir: Path, settings: Settings, session_dir: Path | None = None
) -> Path:
    """The session file ``--export VALUE`` names.

    :raises UsageError: no such file, or no (or several) sessions with this id prefix
    """
    from knightcode._session.location import resolve_session_dir, sessions_root
    from knightcode._session.lookup import find_session, looks_like_path

    text = value
    path = Path(value).expanduser()
    if path.is_file():
        return path.resolve()
    if looks_like_path(text) or path.exists():
        problem = "is not a file" if path.exists() else "does not exist"
        raise UsageError(f"--export {text}: {path} {problem}")
    local = resolve_session_dir(
        cwd, agent_dir, cli_dir=session_dir, settings_dir=settings.session_dir(cwd)
    )
    try:
        return find_session(text, local, sessions_root(agent_dir)).path
    except UsageError as error:
        raise UsageError(str(error).replace("--session", "--export", 1)) from None


def _starts_with_a_header(file: Path) -> bool:
    """Whether the first non-blank line is a session header (cheap: the file is parsed once,
    by the session store, after this).
    """
    try:
        with file.open("rb") as handle:
            for line in handle:
                if line.strip():
                    value = json.loads(line.removeprefix(b"\xef\xbb\xbf"))
                    return (
                        isinstance(value, dict)
                        and value.get("type") == "session"
                        and isinstance(value.get("id"), str)
                    )
    except (ValueError, UnicodeDecodeError):
        return False
    except OSError as error:
        raise UsageError(f"--export {file}: cannot read it: {error.strerror or error}") from error
    return False


def run_export(request: RunRequest, settings: Settings) -> int:
    """Write the page for ``request.export`` and print where; the exit status (0)."""
    from knightcode._config.paths import agent_dir
    from knightcode._modes.rpc.export_html import render_session_html
    from knightcode._session.manager import SessionManager

    assert request.export is not None
    if len(request.messages) > 1:
        raise UsageError("--export takes one output file after the session, e.g. out.html")
    cwd = Path.cwd()
    file = find_export_session(request.export, cwd, agent_dir(), settings, request.session_dir)
    if not _starts_with_a_header(file):  # checked before opening, which would repair the file
        raise UsageError(f"--export {request.export}: {file} is not a session file")
    session = SessionManager.open(file)
    target = Path(request.messages[0]) if request.messages else Path(default_export_name(file))
    target = (cwd / target.expanduser()).resolve()
    page = render_session_html(session)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8")
    except OSError as error:
        raise KnightcodeError(f"cannot write {target}: {error.strerror or error}") from error
    line = f"Exported to: {target}\n"
    if request.output is not None:
        request.output.write(line.encode("utf-8"))
        request.output.flush()
    else:
        sys.stdout.write(line)
        sys.stdout.flush()
    return 0
