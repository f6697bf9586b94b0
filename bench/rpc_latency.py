"""Round-trip latency of ``get_state`` in RPC mode, idle and while a reply streams.

The real ``knightcode --mode rpc`` runs against the scripted server. A round trip is timed from
writing the command to receiving its response, one command at a time:

* idle: nothing else happens;
* streaming: the model streams 10 000 text deltas per prompt; only round trips that start after
  the first delta arrived and end before the assistant's ``message_end`` count.

Each is measured twice: through :class:`knightcode.rpc.Client` (the embedding path; its own
JSON parsing of every stream record and its garbage collector are in the figures), and through
a thin reader thread on the raw pipes that parses only the responses (knightcode's own latency).

Targets (issue 5): median under 2 ms idle, p99 under 20 ms while streaming.

Run: ``python -m bench.rpc_latency [--idle N] [--rounds N] [--deltas N] [--no-builtins]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench._timing import clean_env, ensure_bytecode
from knightcode.rpc import Client
from knightcode.testing import ScriptedServer, deltas_reply

ARGS = ["--no-session", "--model", "scripted/scripted-model"]
Window = list[float]  # [first delta seen, assistant message_end seen]


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def in_window(timed: list[tuple[float, float]], window: Window) -> list[float]:
    return [(end - start) * 1000 for start, end in timed if start >= window[0] and end <= window[1]]


# --- through the client -----------------------------------------------------------------------


async def client_figures(
    env: dict[str, str], cwd: Path, server: ScriptedServer, args: argparse.Namespace
) -> tuple[list[float], list[float]]:
    async with Client(ARGS, env=env, cwd=cwd) as client:

        async def round_trip() -> tuple[float, float]:
            started = time.perf_counter()
            await client.call({"type": "get_state"})
            return started, time.perf_counter()

        for _ in range(200):  # warm-up: first-call imports and allocations
            await round_trip()
        idle = [
            (end - start) * 1000 for start, end in [await round_trip() for _ in range(args.idle)]
        ]
        streaming: list[float] = []
        for _ in range(args.rounds):
            server.add(deltas_reply(args.deltas))
            window: Window = []

            def watch(event: dict[str, Any], window: Window = window) -> None:
                kind = event["type"]
                if (kind == "message_update" and not window) or (
                    kind == "message_end" and event["message"]["role"] == "assistant"
                ):
                    window.append(time.perf_counter())

            unsubscribe = client.subscribe(watch)
            mark = client.mark()
            await client.prompt("stream")
            timed = []
            while len(window) < 2:
                timed.append(await round_trip())
            await client.wait_for(lambda e: e["type"] == "agent_settled", since=mark)
            unsubscribe()
            streaming += in_window(timed, window)
            del client.history[mark:]  # keep the client's memory flat over the rounds
    return idle, streaming


# --- through raw pipes --------------------------------------------------------------------------


def direct_figures(
    env: dict[str, str], cwd: Path, server: ScriptedServer, args: argparse.Namespace
) -> tuple[list[float], list[float]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "knightcode", *ARGS, "--mode", "rpc"],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    answered: dict[bytes, float] = {}
    window: Window = []
    arrived = threading.Condition()

    def read() -> None:
        # Cheap byte tests instead of parsing: this reader measures knightcode, not itself.
        for line in stdout:
            now = time.perf_counter()
            if line.startswith(b'{"id":"g'):
                with arrived:
                    answered[line[7 : line.index(b'"', 7)]] = now
                    arrived.notify_all()
            elif (line.startswith(b'{"type":"message_update"') and not window) or (
                line.startswith(b'{"type":"message_end","message":{"role":"assistant"')
            ):
                window.append(now)
            elif line.startswith(b'{"type":"agent_settled"'):
                with arrived:
                    window.append(now)
                    arrived.notify_all()

    threading.Thread(target=read, daemon=True).start()
    counter = iter(range(1 << 60))

    def round_trip() -> tuple[float, float]:
        request_id = f"g{next(counter)}".encode()
        started = time.perf_counter()
        stdin.write(b'{"id":"' + request_id + b'","type":"get_state"}\n')
        stdin.flush()
        with arrived:
            arrived.wait_for(lambda: request_id in answered)
        return started, answered.pop(request_id)

    for _ in range(200):
        round_trip()
    idle = [(end - start) * 1000 for start, end in [round_trip() for _ in range(args.idle)]]
    streaming: list[float] = []
    for _ in range(args.rounds):
        server.add(deltas_reply(args.deltas))
        window.clear()
        stdin.write(b'{"type":"prompt","message":"stream"}\n')
        stdin.flush()
        timed = []
        while len(window) < 2:
            timed.append(round_trip())
        with arrived:
            arrived.wait_for(lambda: len(window) >= 3)
        streaming += in_window(timed, window)
    stdin.close()
    process.wait(timeout=30)
    return idle, streaming


def report(name: str, samples: list[float]) -> None:
    print(
        f"  {name:<10} n={len(samples):>5}  median {statistics.median(samples):6.3f} ms  "
        f"p99 {percentile(samples, 0.99):7.3f} ms  max {max(samples):7.3f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--idle", type=int, default=2000, help="idle round trips (default 2000)")
    parser.add_argument("--rounds", type=int, default=20, help="streamed prompts (default 20)")
    parser.add_argument(
        "--deltas", type=int, default=10000, help="deltas per streamed prompt (default 10000)"
    )
    parser.add_argument("--no-builtins", action="store_true", help="load no built-in plugins")
    args = parser.parse_args()
    ensure_bytecode()
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as server:
        root = Path(tmp)
        agent, project = root / "agent", root / "project"
        agent.mkdir()
        project.mkdir()
        (agent / "models.json").write_text(
            json.dumps(
                {
                    "providers": {
                        "scripted": {
                            "baseUrl": server.base_url,
                            "api": "openai-completions",
                            "models": [{"id": "scripted-model"}],
                        }
                    }
                }
            )
        )
        env = clean_env(KNIGHTCODE_CODING_AGENT_DIR=str(agent), HOME=str(root))
        if args.no_builtins:
            env["KNIGHTCODE_LOAD_PLUGINS"] = ""
        print(
            f"get_state round trips; streaming: {args.rounds} prompts of {args.deltas} deltas "
            "(targets: idle median < 2 ms, streaming p99 < 20 ms)"
        )
        for name, measure in (
            ("knightcode.rpc.Client", None),
            ("raw pipes, thin reader", direct_figures),
        ):
            if measure is None:
                idle, streaming = asyncio.run(client_figures(env, project, server, args))
            else:
                idle, streaming = measure(env, project, server, args)
            print(name)
            report("idle", idle)
            report("streaming", streaming)


if __name__ == "__main__":
    main()
