"""``knightcode sandbox doctor``: probe the boundary of the configured sandbox and say what
holds and what leaks (exit 1 on a leak, 2 on wrong settings or a sandbox that cannot start).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from knightcode import ExecutionBackend, LocalBackend
from knightcode_builtins.gondolin.probes import ProbeResult, leaks, run_probes
from knightcode_builtins.gondolin.runner import SandboxUnavailable
from knightcode_builtins.gondolin.setup import build_backend, config_for

__all__ = ["doctor"]

_MARK = {True: "LEAK", False: "ok"}


def _line(result: ProbeResult) -> str:
    mark = _MARK[result.leak] if result.observed != "unknown" else "?"
    expected = "" if result.observed == result.expected else f" (expected: {result.expected})"
    return f"  {mark:<5} {result.name:<42} {result.observed}{expected}: {result.detail}"


def _report(
    results: list[ProbeResult], title: str, out: TextIO, *, as_json: bool, backend: str
) -> int:
    found = leaks(results)
    if as_json:
        record = {
            "backend": backend,
            "description": title,
            "ok": not found,
            "probes": [
                {
                    "name": result.name,
                    "expected": result.expected,
                    "observed": result.observed,
                    "leak": result.leak,
                    "detail": result.detail,
                }
                for result in results
            ],
        }
        out.write(json.dumps(record, indent=2) + "\n")
        return 1 if found else 0
    out.write(f"sandbox doctor: {title}\n")
    for result in results:
        out.write(_line(result) + "\n")
    if found:
        out.write(
            f"{len(found)} leak(s): a session with these settings refuses to start. Check "
            "settings sandbox (extraArgs, roBinds, network, env) and docs/containerization.md.\n"
        )
        return 1
    if backend == "local":
        out.write(
            "No sandbox: backend local runs the tools on this machine, so everything above is "
            "reachable by design. Choose one with settings sandbox.backend or --sandbox.\n"
        )
    else:
        out.write(f"{len(results)} probes: the boundary holds.\n")
    return 0


async def doctor(
    settings_value: object,
    flag: str | None,
    cwd: Path,
    agent_dir: Path,
    *,
    as_json: bool = False,
    out: TextIO = sys.stdout,
) -> int:
    """Probe the sandbox the settings (and ``--sandbox``) choose; returns the exit status."""
    try:
        config = config_for(settings_value, flag)
    except ValueError as error:
        print(f"knightcode: {error}", file=sys.stderr)
        return 2
    backend: ExecutionBackend
    if not config.isolated:
        backend, title = LocalBackend(cwd), f"local (no sandbox): {cwd}"
        return _report(
            await run_probes(backend, config, agent_dir),
            title,
            out,
            as_json=as_json,
            backend="local",
        )
    sandbox = build_backend(config, cwd, agent_dir)
    try:
        print(f"starting {sandbox.runner.describe()} …", file=sys.stderr, flush=True)
        try:
            await sandbox.runner.start()
        except SandboxUnavailable as error:
            print(
                f"knightcode: the {config.backend} sandbox cannot start: {error}", file=sys.stderr
            )
            return 2
        results = await run_probes(sandbox, config, agent_dir)
        return _report(results, sandbox.describe(), out, as_json=as_json, backend=config.backend)
    finally:
        await sandbox.aclose()
