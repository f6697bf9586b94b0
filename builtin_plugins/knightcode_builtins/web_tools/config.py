"""``<agent-dir>/tools.json``: the web tools' settings, parsed into :class:`ToolsConfig`.

::

    {
      "braveApiKey": "BSA…",                 // else the BRAVE_API_KEY environment variable
      "search": {"baseUrl": "https://api.search.brave.com/res/v1", "count": 5,
                 "country": "us", "safeSearch": "moderate", "freshness": null,
                 "timeout": 15, "maxRetries": 2, "maxRetryWait": 30},
      "fetch": {"connectTimeout": 10, "readTimeout": 30, "totalTimeout": 60, "maxBytes": 10485760,
                "maxRedirects": 5, "allowPrivate": false, "allowHosts": ["localhost:8080"]},
      "scratchpad": {"inlineChars": 40000, "headChars": 8000, "dir": null},
      "gate": {"enabled": false, "classifier": null,          // see gate_config.py
               "thresholds": {"allow": 0.2, "block": 0.8}},
      "codemode": {"enabled": false, "timeout": 120, "maxOutputChars": 50000,
                   "python": "python3"}
    }

Every key is optional. The file holds the Brave key, so it is written atomically with mode 0600,
and a wrong value is a :class:`ToolsConfigError` naming the file and the key (exit status 2 from
the CLI, a clear tool error inside a session) — never a traceback, never a silent default.

The module imports only the standard library and ``knightcode``'s public API: the plugin reads
it when a tool runs, not at start-up.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from knightcode import ConfigError

from .definitions import SAFE_SEARCH, SafeSearch
from .gate_config import GateConfig, GatePattern, describe_gate, parse_gate

__all__ = [
    "DEFAULT_BRAVE_URL",
    "FILE_NAME",
    "KEY_NAMES",
    "CodemodeConfig",
    "FetchConfig",
    "GateConfig",
    "GatePattern",
    "ScratchpadConfig",
    "SearchConfig",
    "ToolsConfig",
    "ToolsConfigError",
    "describe_config",
    "load_tools_config",
    "parse_tools_config",
    "read_tools_json",
    "set_brave_key",
    "tools_json_path",
    "write_tools_json",
]

FILE_NAME = "tools.json"
DEFAULT_BRAVE_URL = "https://api.search.brave.com/res/v1"
MAX_BYTES = 1024 * 1024
"""tools.json is a handful of keys; anything larger is not one (and is not read whole)."""


class ToolsConfigError(ConfigError):
    """tools.json is unreadable or holds a wrong value; the message names the file and key."""


@dataclass(frozen=True)
class SearchConfig:
    """``search``: how ``web_search`` asks Brave.

    :param base_url: the API root (``…/res/v1``); tests and proxies point it elsewhere
    :param count: results when the model does not say (1 to 20, Brave's limit)
    :param country: a two-letter country code, or None for Brave's default
    :param safe_search: ``off``, ``moderate`` or ``strict``
    :param freshness: ``pd``/``pw``/``pm``/``py`` or ``YYYY-MM-DDtoYYYY-MM-DD``; None: any age
    :param timeout: seconds for one request
    :param max_retries: retries of a 429 (rate limit) whose ``Retry-After`` is short enough
    :param max_retry_wait: the longest ``Retry-After`` (seconds) waited for; longer is reported
    """

    base_url: str = DEFAULT_BRAVE_URL
    count: int = 5
    country: str | None = None
    safe_search: SafeSearch = "moderate"
    freshness: str | None = None
    timeout: float = 15.0
    max_retries: int = 2
    max_retry_wait: float = 30.0


@dataclass(frozen=True)
class FetchConfig:
    """``fetch``: limits of ``web_fetch``, as tools.json holds them (``settings.fetch_settings_for``
    turns them into the fetch module's ``FetchSettings``).

    :param connect_timeout: seconds to connect
    :param read_timeout: seconds between two reads of the body
    :param total_timeout: seconds for the whole fetch, redirects included
    :param max_bytes: the body is cut (and said to be) beyond this many bytes
    :param max_redirects: redirects followed, each one checked like the first URL
    :param allow_private: reach private, loopback and link-local addresses
    :param allow_hosts: host names (``.example.com``: a domain and its subdomains), addresses
        and networks (``10.0.0.0/8``) allowed even when private
    """

    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    total_timeout: float = 60.0
    max_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 5
    allow_private: bool = False
    allow_hosts: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScratchpadConfig:
    """``scratchpad``: when a result goes to a file instead of the context.

    Same fields as the fetch module's ``ScratchpadSettings``, so one can stand for the other.

    :param inline_chars: results up to this many characters go to the context whole
    :param head_chars: how much of a bigger result the context gets
    :param directory: where the files go, as the backend names them; None: the session's
        scratchpad directory
    """

    inline_chars: int = 40_000
    head_chars: int = 8_000
    directory: str | None = None


@dataclass(frozen=True)
class CodemodeConfig:
    """``codemode``: the one ``code`` tool instead of the others (off by default; ``--codemode``
    switches it on for one run).

    :param enabled: offer the model only ``code``, whose scripts call the other tools
    :param timeout: seconds a script may run when the model does not say (it is then killed)
    :param max_output_chars: the script's output beyond this is cut in the middle, with a note
    :param python: the interpreter, as the execution backend finds it (inside the sandbox when
        one is on)
    """

    enabled: bool = False
    timeout: float = 120.0
    max_output_chars: int = 50_000
    python: str = "python3"


@dataclass(frozen=True)
class ToolsConfig:
    """The whole of tools.json; :attr:`source` is the file it came from (None: defaults)."""

    brave_api_key: str | None = None
    search: SearchConfig = field(default_factory=SearchConfig)
    fetch: FetchConfig = field(default_factory=FetchConfig)
    scratchpad: ScratchpadConfig = field(default_factory=ScratchpadConfig)
    gate: GateConfig = field(default_factory=GateConfig)
    codemode: CodemodeConfig = field(default_factory=CodemodeConfig)
    source: Path | None = None

    def brave_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The Brave key: tools.json's, else ``BRAVE_API_KEY``; None when neither is set."""
        if self.brave_api_key:
            return self.brave_api_key
        value = (os.environ if environ is None else environ).get("BRAVE_API_KEY", "").strip()
        return value or None


def tools_json_path(agent_dir: Path) -> Path:
    """Where tools.json lives."""
    return agent_dir / FILE_NAME


def load_tools_config(agent_dir: Path) -> ToolsConfig:
    """tools.json of ``agent_dir`` parsed; the defaults when the file does not exist.

    :raises ToolsConfigError: the file is unreadable, not JSON or holds a wrong value
    """
    path = tools_json_path(agent_dir)
    data = read_tools_json(path)
    return parse_tools_config(data or {}, path if data is not None else None)


def read_tools_json(path: Path) -> dict[str, object] | None:
    """The JSON object in ``path``; None when it does not exist; ``{}`` when it is empty.

    :raises ToolsConfigError: not a regular file, too large, not UTF-8, not JSON, not an object
    """
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise ToolsConfigError(f"{path}: not a regular file")
        if info.st_size > MAX_BYTES:
            raise ToolsConfigError(f"{path}: larger than 1 MiB; not a tools.json")
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ToolsConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ToolsConfigError(f"{path}: not valid UTF-8 (byte {exc.start})") from exc
    if not text.strip():
        return {}
    try:
        data: object = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolsConfigError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    except RecursionError:
        raise ToolsConfigError(f"{path}: nested too deeply; not a tools.json") from None
    if not isinstance(data, dict):
        raise ToolsConfigError(f"{path}: must be a JSON object ({{...}})")
    return data


def write_tools_json(path: Path, data: Mapping[str, object]) -> None:
    """Write ``data`` to ``path`` atomically with mode 0600 (it holds the Brave key).

    The temporary file gets 0600 before anything is written to it, so the key is never
    readable by others, not even for a moment; readers see the old or the new file.

    :raises ToolsConfigError: the file could not be written (``path`` is then unchanged)
    """
    text = json.dumps(dict(data), indent=2, ensure_ascii=False) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp_name, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp_name)
            raise
    except OSError as exc:
        raise ToolsConfigError(f"cannot write {path}: {exc.strerror or exc}") from exc


class _Reader:
    """Typed access to one section of tools.json; every error names the file and the key."""

    def __init__(self, data: Mapping[str, object], where: str, prefix: str) -> None:
        self._data = data
        self._where = where
        self._prefix = prefix

    def fail(self, key: str, why: str) -> ToolsConfigError:
        return ToolsConfigError(f"{self._where}: {self._prefix}{key}: {why}")

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def section(self, key: str) -> _Reader:
        value = self._data.get(key)
        if value is None:
            return _Reader({}, self._where, f"{self._prefix}{key}.")
        if not isinstance(value, dict):
            raise self.fail(key, "must be an object")
        return _Reader(value, self._where, f"{self._prefix}{key}.")

    def boolean(self, key: str, default: bool) -> bool:
        value = self._data.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, "must be true or false")
        return value

    def text(self, key: str, default: str | None) -> str | None:
        value = self._data.get(key, default)
        if value is not None and not isinstance(value, str):
            raise self.fail(key, "must be a string")
        return value

    def number(self, key: str, default: float, low: float, high: float) -> float:
        value = self._data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, "must be a number")
        if not low <= value <= high:
            raise self.fail(key, f"must be between {low:g} and {high:g} (got {value:g})")
        return float(value)

    def integer(self, key: str, default: int, low: int, high: int) -> int:
        value = self._data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, "must be a whole number")
        if not low <= value <= high:
            raise self.fail(key, f"must be between {low} and {high} (got {value})")
        return value

    def strings(self, key: str) -> tuple[str, ...]:
        value = self._data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.fail(key, "must be a list of strings")
        return tuple(item for item in value if isinstance(item, str))

    def items(self, key: str) -> list[_Reader]:
        value = self._data.get(key, [])
        if not isinstance(value, list):
            raise self.fail(key, "must be a list")
        readers: list[_Reader] = []
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.fail(f"{key}[{index}]", "must be an object")
            readers.append(_Reader(item, self._where, f"{self._prefix}{key}[{index}]."))
        return readers


_KNOWN_KEYS = ("braveApiKey", "search", "fetch", "scratchpad", "gate", "codemode")


def parse_tools_config(data: Mapping[str, object], source: Path | None = None) -> ToolsConfig:
    """``data`` (tools.json's object) checked and turned into a :class:`ToolsConfig`.

    Unknown top-level keys are refused (a misspelt ``braveApikey`` would otherwise be ignored
    silently); unknown keys inside a section are left for later versions.

    :raises ToolsConfigError: a wrong value, naming ``source`` and the key
    """
    where = str(source) if source is not None else FILE_NAME
    top = _Reader(data, where, "")
    for key in data:
        if key not in _KNOWN_KEYS:
            raise top.fail(key, f"unknown key (known: {', '.join(_KNOWN_KEYS)})")
    key = (top.text("braveApiKey", None) or "").strip()
    return ToolsConfig(
        brave_api_key=key or None,
        search=_search(top.section("search")),
        fetch=_fetch(top.section("fetch")),
        scratchpad=_scratchpad(top.section("scratchpad")),
        gate=parse_gate(top.section("gate")),
        codemode=_codemode(top.section("codemode")),
        source=source,
    )


def _search(section: _Reader) -> SearchConfig:
    base_url = section.text("baseUrl", DEFAULT_BRAVE_URL) or DEFAULT_BRAVE_URL
    if not base_url.startswith(("http://", "https://")):
        raise section.fail("baseUrl", "must be an http:// or https:// URL")
    safe = section.text("safeSearch", "moderate")
    if safe not in SAFE_SEARCH:
        raise section.fail("safeSearch", f"must be one of {', '.join(SAFE_SEARCH)}")
    country = section.text("country", None)
    if country is not None and (len(country) != 2 or not country.isalpha()):
        raise section.fail("country", "must be a two-letter country code such as 'us'")
    return SearchConfig(
        base_url=base_url.rstrip("/"),
        count=section.integer("count", 5, 1, 20),
        country=country.lower() if country else None,
        safe_search=next(item for item in SAFE_SEARCH if item == safe),
        freshness=section.text("freshness", None),
        timeout=section.number("timeout", 15.0, 0.1, 600),
        max_retries=section.integer("maxRetries", 2, 0, 10),
        max_retry_wait=section.number("maxRetryWait", 30.0, 0, 3600),
    )


def _fetch(section: _Reader) -> FetchConfig:
    return FetchConfig(
        connect_timeout=section.number("connectTimeout", 10.0, 0.1, 600),
        read_timeout=section.number("readTimeout", 30.0, 0.1, 3600),
        total_timeout=section.number("totalTimeout", 60.0, 0.1, 3600),
        max_bytes=section.integer("maxBytes", 10 * 1024 * 1024, 1024, 1024**3),
        max_redirects=section.integer("maxRedirects", 5, 0, 50),
        allow_private=section.boolean("allowPrivate", False),
        allow_hosts=section.strings("allowHosts"),
    )


def _scratchpad(section: _Reader) -> ScratchpadConfig:
    inline = section.integer("inlineChars", 40_000, 0, 100_000_000)
    head = section.integer("headChars", 8_000, 0, 100_000_000)
    return ScratchpadConfig(
        inline_chars=inline, head_chars=head, directory=section.text("dir", None)
    )


def _codemode(section: _Reader) -> CodemodeConfig:
    python = section.text("python", "python3")
    if not python or not python.strip():
        raise section.fail("python", "must name an interpreter, such as python3")
    return CodemodeConfig(
        enabled=section.boolean("enabled", False),
        timeout=section.number("timeout", 120.0, 1, 3600),
        max_output_chars=section.integer("maxOutputChars", 50_000, 100, 10_000_000),
        python=python.strip(),
    )


# --- for ``knightcode tools`` -------------------------------------------------------------------

KEY_NAMES = ("brave",)
"""The services ``knightcode tools set-key`` stores a key for."""


def set_brave_key(agent_dir: Path, key: str | None) -> Path:
    """Store ``key`` as ``braveApiKey`` in tools.json (None: remove it), keeping the rest.

    The file is checked first, so a broken one is reported rather than overwritten.

    :returns: the file written
    :raises ToolsConfigError: the file is broken or cannot be written; the key is bad
    """
    path = tools_json_path(agent_dir)
    data = read_tools_json(path) or {}
    parse_tools_config(data, path)
    if key is None:
        data.pop("braveApiKey", None)
    else:
        key = key.strip()
        if not key or any(char.isspace() or not char.isprintable() for char in key):
            raise ToolsConfigError("the Brave key must be one word of printable characters")
        data["braveApiKey"] = key
    write_tools_json(path, data)
    return path


def describe_config(
    config: ToolsConfig, environ: Mapping[str, str] | None = None
) -> dict[str, object]:
    """tools.json as ``knightcode tools show`` prints it: every setting with its effective
    value, the key replaced by where it comes from (a secret is never printed).
    """
    if config.brave_api_key:
        key_source: str | None = "tools.json"
    elif config.brave_key(environ) is not None:
        key_source = "BRAVE_API_KEY"
    else:
        key_source = None
    search, fetch, pad, gate = config.search, config.fetch, config.scratchpad, config.gate
    return {
        "file": str(config.source) if config.source is not None else None,
        "braveApiKey": f"set ({key_source})" if key_source else "not set",
        "search": {
            "baseUrl": search.base_url,
            "count": search.count,
            "country": search.country,
            "safeSearch": search.safe_search,
            "freshness": search.freshness,
            "timeout": search.timeout,
            "maxRetries": search.max_retries,
            "maxRetryWait": search.max_retry_wait,
        },
        "fetch": {
            "connectTimeout": fetch.connect_timeout,
            "readTimeout": fetch.read_timeout,
            "totalTimeout": fetch.total_timeout,
            "maxBytes": fetch.max_bytes,
            "maxRedirects": fetch.max_redirects,
            "allowPrivate": fetch.allow_private,
            "allowHosts": list(fetch.allow_hosts),
        },
        "scratchpad": {
            "inlineChars": pad.inline_chars,
            "headChars": pad.head_chars,
            "dir": pad.directory,
        },
        "gate": describe_gate(gate),
        "codemode": {
            "enabled": config.codemode.enabled,
            "timeout": config.codemode.timeout,
            "maxOutputChars": config.codemode.max_output_chars,
            "python": config.codemode.python,
        },
    }
