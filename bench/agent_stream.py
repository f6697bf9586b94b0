"""The agent's streaming path, end to end through the real executable.

(a) 100 000 streamed text deltas from the scripted server through ``knightcode --mode json`` into
    a file: records per second and the process's peak RSS.
(b) Time from process start to the first ``message_update`` record, beside ``python -c pass``.

Targets (issue 4): >= 50 000 delta records/s, RSS under 120 MB, first record under 400 ms.

``--plugin sync`` (or ``async``) loads an extension with a ``message_update`` handler of that
kind, so every streamed delta goes through the hook dispatcher (its deadline and abort scope).

Run: ``python -m bench.agent_stream [--deltas N] [--runs N] [--plugin none|sync|async]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._timing import clean_env, ensure_bytecode
from knightcode.testing import ScriptedServer, deltas_reply, text_reply


def _setup(root: Path, base_url: str) -> tuple[dict[str, str], Path]:
    agent, project = root / "agent", root / "project"
    agent.mkdir()
    project.mkdir()
    (agent / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "scripted": {
                        "baseUrl": base_url,
                        "api": "openai-completions",
                        "models": [{"id": "scripted-model"}],
                    }
                }
            }
        )
    )
    return clean_env(KNIGHTCODE_CODING_AGENT_DIR=str(agent), HOME=str(root)), project


PLUGINS = {
    "sync": "def message_update(message, ctx):\n    return None\n",
    "async": "async def message_update(message, ctx):\n    return None\n",
}


def plugin_args(root: Path, kind: str) -> list[str]:
    """``-e FILE`` for an extension with a per-delta ``message_update`` handler of ``kind``."""
    if kind == "none":
        return []
    path = root / f"per_delta_{kind}.py"
    path.write_text("from knightcode import hookimpl\n\n@hookimpl\n" + PLUGINS[kind])
    return ["-e", str(path)]


COMMAND = [
    sys.executable,
    "-m",
    "knightcode",
    "--no-session",
    "--model",
    "scripted/scripted-model",
    "--mode",
    "json",
]


def stream_to_file(
    server: ScriptedServer, env: dict[str, str], project: Path, deltas: int
) -> tuple[float, int, int]:
    """Seconds, records written, peak RSS in bytes of one run writing to a file."""
    server.add(deltas_reply(deltas))
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        process = subprocess.Popen(
            [*COMMAND, "go"], cwd=project, env=env, stdout=out, stderr=subprocess.DEVNULL
        )
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            raise SystemExit(f"knightcode exited with {process.returncode}")
        out.seek(0)
        records = out.read().count(b"\n")
    return elapsed, records, usage.ru_maxrss * 1024


def first_update_ms(server: ScriptedServer, env: dict[str, str], project: Path) -> float:
    """Milliseconds from spawning the process to reading its first message_update record."""
    server.add(text_reply("hello", " world"))
    started = time.perf_counter()
    process = subprocess.Popen(
        [*COMMAND, "go"], cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdout is not None
    for line in process.stdout:
        if b'"message_update"' in line:
            elapsed = (time.perf_counter() - started) * 1000
            break
    else:
        raise SystemExit("no message_update record")
    process.stdout.read()
    process.wait()
    return elapsed


def python_pass_ms() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--deltas", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--plugin", choices=("none", "sync", "async"), default="none")
    args = parser.parse_args()
    ensure_bytecode()
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer(models=("scripted-model",)) as server:
        env, project = _setup(Path(tmp), server.base_url)
        COMMAND.extend(plugin_args(Path(tmp), args.plugin))
        firsts, bases = [], []
        for _ in range(max(5, args.runs * 3)):
            bases.append(python_pass_ms())
            firsts.append(first_update_ms(server, env, project))
        runs = [stream_to_file(server, env, project, args.deltas) for _ in range(args.runs)]
    first = statistics.median(firsts)
    seconds = statistics.median(run[0] for run in runs)
    records = runs[0][1]
    rss = max(run[2] for run in runs)
    streaming = seconds - first / 1000
    print(f"python -c pass                         {statistics.median(bases):8.1f} ms")
    print(f"start -> first message_update          {first:8.1f} ms   (target < 400 ms)")
    print(
        f"{args.deltas} deltas -> file, whole run   {seconds * 1000:8.0f} ms   ({records} records)"
    )
    print(f"records/s, whole run                   {records / seconds:8.0f}")
    print(f"records/s, after the first record      {records / streaming:8.0f}   (target >= 50 000)")
    print(f"peak RSS                               {rss / 2**20:8.1f} MB   (target < 120 MB)")


if __name__ == "__main__":
    main()
