"""The boundary probes behind ``knightcode sandbox doctor`` and the check at session start.

Each probe tries, through the same routed path the tools use (the backend's ``exec`` and file
methods), something a sandbox should stop, and the *host* judges the outcome where it can — a
file that appeared on the host, a connection that arrived at a host listener — instead of
trusting what a command inside printed:

* write a file outside the workspace (does it appear on the host?);
* read ``~/.ssh`` and the agent directory (a fresh token file there);
* reach the network (a TCP listener of the host, by its loopback and its outward address);
* see the host's processes (one with a token in its command line);
* read a provider key from the environment (a token-valued ``*_API_KEY`` put in the host's
  environment for the probe).

What each backend should stop follows from the settings: ``network: true`` expects the network
reachable, ``env: "inherit"`` expects the key visible, and ``local`` expects everything visible.
A probe that succeeds where it should have failed is a leak: the doctor exits non-zero and a
session refuses to start.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal as signals
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from knightcode import ExecutionBackend
    from knightcode_builtins.gondolin.config import SandboxConfig

__all__ = ["PROBE_KEY", "ProbeResult", "SandboxLeak", "leaks", "run_probes"]

PROBE_KEY = "KNIGHTCODE_PROBE_API_KEY"
"""The variable the provider-key probe puts in the host's environment while it runs."""

Outcome = Literal["blocked", "reached", "unknown"]


class SandboxLeak(Exception):
    """A probe that should have failed succeeded: the session must not start."""


@dataclass(frozen=True)
class ProbeResult:
    """One probe: what was tried, what should happen, what did.

    :param name: what was tried (``"write outside the workspace"``)
    :param expected: ``"blocked"`` or ``"reached"`` (from the backend and the settings)
    :param observed: ``"blocked"``, ``"reached"`` or ``"unknown"`` (nothing could try)
    :param detail: how it was judged, one line
    """

    name: str
    expected: Outcome
    observed: Outcome
    detail: str

    @property
    def leak(self) -> bool:
        """Reached where it should have been blocked."""
        return self.expected == "blocked" and self.observed == "reached"


def leaks(results: list[ProbeResult]) -> list[ProbeResult]:
    """The probes that leaked."""
    return [result for result in results if result.leak]


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


async def _shell(backend: ExecutionBackend, script: str, timeout: float = 20.0) -> str:
    result = await backend.exec(shell_command=script, timeout=timeout, merge_stderr=True, env=None)
    return _text(result.output)


@contextlib.contextmanager
def _token_file(folder: Path) -> Iterator[tuple[Path, str]]:
    token = f"knightcode-probe-{secrets.token_hex(8)}"
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f".sandbox-probe-{secrets.token_hex(4)}"
    path.write_text(token)
    path.chmod(0o600)
    try:
        yield path, token
    finally:
        path.unlink(missing_ok=True)
        if created:
            with contextlib.suppress(OSError):
                folder.rmdir()


async def _probe_write(backend: ExecutionBackend, expected: Outcome) -> ProbeResult:
    folder = Path(tempfile.mkdtemp(prefix="knightcode-probe-"))
    target = folder / "written-from-inside"
    try:
        await _shell(backend, f"echo leak > '{target}' 2>/dev/null")
        with contextlib.suppress(OSError):
            await backend.write_file(str(folder / "written-by-the-file-layer"), b"leak")
        appeared = sorted(path.name for path in folder.iterdir())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if appeared:
        return ProbeResult(
            "write outside the workspace",
            expected,
            "reached",
            f"{', '.join(appeared)} appeared in the host folder {folder}",
        )
    return ProbeResult(
        "write outside the workspace",
        expected,
        "blocked",
        f"nothing written inside reached the host folder {folder}",
    )


async def _probe_read(
    backend: ExecutionBackend, name: str, folder: Path, expected: Outcome
) -> ProbeResult:
    with _token_file(folder) as (path, token):
        seen = await _shell(backend, f"cat '{path}' 2>&1")
        with contextlib.suppress(OSError):
            seen += _text(await backend.read_file(str(path)))
    if token in seen:
        return ProbeResult(name, expected, "reached", f"a token file in {folder} was read")
    return ProbeResult(name, expected, "blocked", f"a token file in {folder} could not be read")


async def _probe_ssh(backend: ExecutionBackend, expected: Outcome) -> ProbeResult:
    ssh = Path.home() / ".ssh"
    if not ssh.is_dir():
        # Never write into someone's ~/.ssh: probe the home directory itself instead.
        return await _probe_read(
            backend, "read the home directory (no ~/.ssh here)", Path.home(), expected
        )
    names = sorted(entry.name for entry in ssh.iterdir())
    listing = await _shell(backend, f"ls -A '{ssh}' 2>/dev/null")
    shown = set(listing.split())
    if names and shown and set(names) <= shown:
        return ProbeResult("read ~/.ssh", expected, "reached", f"{ssh} was listed from inside")
    if not names:
        # An empty ~/.ssh lists as nothing inside or out: judge by whether it exists inside.
        found = await _shell(backend, f"[ -d '{ssh}' ] && echo present")
        observed: Outcome = "reached" if "present" in found else "blocked"
        return ProbeResult("read ~/.ssh", expected, observed, f"{ssh} (empty) checked from inside")
    return ProbeResult("read ~/.ssh", expected, "blocked", f"{ssh} could not be listed from inside")


def _outward_address() -> str | None:
    """This machine's address on its default route (a UDP "connect" sends nothing)."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never answered, never sent to
        address = str(probe.getsockname()[0])
        return None if address.startswith("0.") else address
    return None


_CONNECT = (
    'for host in "$@"; do '
    "if command -v bash >/dev/null 2>&1; then "
    "bash -c 'exec 3<>/dev/tcp/'\"$host\"'/'\"$PORT\" 2>/dev/null; "
    'elif command -v nc >/dev/null 2>&1; then echo x | nc -w 2 "$host" "$PORT" 2>/dev/null; '
    'elif command -v wget >/dev/null 2>&1; then wget -q -T 2 -O - "http://$host:$PORT/" '
    "2>/dev/null; "
    "else echo NO-TOOL; fi; done"
)


async def _probe_network(backend: ExecutionBackend, expected: Outcome) -> ProbeResult:
    arrived: list[str] = []

    def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        arrived.append(str(writer.get_extra_info("peername")))
        writer.close()

    server = await asyncio.start_server(accepted, "0.0.0.0", 0)
    port = server.sockets[0].getsockname()[1]
    hosts = ["127.0.0.1"] + [address for address in [_outward_address()] if address]
    try:
        script = f"PORT={port}; set -- {' '.join(hosts)}; {_CONNECT}"
        output = await _shell(backend, script)
        await asyncio.sleep(0.05)  # let the accept callback run
    finally:
        server.close()
        await server.wait_closed()
    where = f"a host listener on port {port} ({', '.join(hosts)})"
    if arrived:
        return ProbeResult("reach the network", expected, "reached", f"{where} was reached")
    if "NO-TOOL" in output:
        return ProbeResult(
            "reach the network", expected, "unknown", "no bash, nc or wget inside to try with"
        )
    return ProbeResult("reach the network", expected, "blocked", f"{where} was not reached")


async def _probe_processes(backend: ExecutionBackend, expected: Outcome) -> ProbeResult:
    token = f"knightcode-probe-{secrets.token_hex(8)}"
    # $0 of the shell carries the token into /proc/<pid>/cmdline.
    witness = subprocess.Popen(
        ["sh", "-c", "sleep 60", token],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        # "[k]nightcode-…" matches the witness but not the command line of this grep itself.
        pattern = f"[{token[0]}]{token[1:]}"
        output = await _shell(
            backend, f"grep -l '{pattern}' /proc/[0-9]*/cmdline 2>/dev/null | head -n 3"
        )
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(witness.pid, signals.SIGKILL)
        witness.wait()
    if "cmdline" in output:
        return ProbeResult(
            "see the host's processes",
            expected,
            "reached",
            "a host process was found in /proc inside",
        )
    return ProbeResult(
        "see the host's processes", expected, "blocked", "a host process was not visible inside"
    )


async def _probe_key(backend: ExecutionBackend, expected: Outcome) -> ProbeResult:
    token = f"sk-knightcode-probe-{secrets.token_hex(12)}"
    previous = os.environ.get(PROBE_KEY)
    os.environ[PROBE_KEY] = token
    try:
        output = await _shell(backend, "env 2>/dev/null; cat /proc/1/environ 2>/dev/null")
    finally:
        if previous is None:
            os.environ.pop(PROBE_KEY, None)
        else:
            os.environ[PROBE_KEY] = previous
    name = "read a provider key from the environment"
    if token in output:
        return ProbeResult(
            name, expected, "reached", f"{PROBE_KEY} set on the host was seen inside"
        )
    return ProbeResult(
        name, expected, "blocked", f"{PROBE_KEY} set on the host was not seen inside"
    )


def expectations(config: SandboxConfig) -> dict[str, Outcome]:
    """What each probe should find for these settings."""
    isolated = config.isolated
    blocked: Outcome = "blocked" if isolated else "reached"
    return {
        "write": blocked,
        "ssh": blocked,
        "agent": blocked,
        "network": "reached" if config.network or not isolated else "blocked",
        "processes": blocked,
        "key": "reached" if config.env == "inherit" or not isolated else "blocked",
    }


async def run_probes(
    backend: ExecutionBackend, config: SandboxConfig, agent_dir: Path
) -> list[ProbeResult]:
    """Every probe, one after the other (they share the backend)."""
    expect = expectations(config)
    return [
        await _probe_write(backend, expect["write"]),
        await _probe_ssh(backend, expect["ssh"]),
        await _probe_read(backend, "read the agent directory", agent_dir, expect["agent"]),
        await _probe_network(backend, expect["network"]),
        await _probe_processes(backend, expect["processes"]),
        await _probe_key(backend, expect["key"]),
    ]
