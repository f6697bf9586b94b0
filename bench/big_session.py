"""A 100 MB session through the real executable: continuing it, and reading it over RPC.

(a) ``knightcode --session-dir DIR -c -p hi``: time from spawning the process to the scripted
    server receiving the first model request (after the server parsed its ~70 MB body, the
    issue's figure; and when the body had arrived, before the bench's own parsing), and the
    process's peak RSS.
(b) ``knightcode --mode rpc --session FILE``: ``get_state`` then ``get_messages`` written at
    once after the spawn; time until the ``get_messages`` response has been read completely,
    and the peak RSS.

The session is ``bench.session_fixture``'s (~100 000 entries; the leaf ~95 000 entries deep), a
fresh copy for every run, since ``-c`` appends to it. Each figure is the median of ``--runs``.

Targets (issue 10): (a) <= 1.5 s, (b) <= 1.0 s, peak RSS <= 4x the file.

Peak RSS is the child's ``VmHWM``, polled from ``/proc``: ``ru_maxrss`` from ``wait4`` would
include this process's own memory, because Linux carries the high-water mark of the memory a
child had before ``exec`` (a vfork shares the parent's) into the child's figure, and this process
holds every request body the scripted server received (over 1 GB after three runs).

Run: ``python -m bench.big_session [--mb 100] [--runs 3] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench._timing import clean_env, ensure_bytecode
from bench.session_fixture import write_session
from knightcode.testing import ScriptedServer, text_reply

MODEL = ["--model", "scripted/scripted-model"]


def _setup(root: Path, base_url: str) -> tuple[dict[str, str], Path]:
    agent, project = root / "agent", root / "project"
    agent.mkdir(exist_ok=True)
    project.mkdir(exist_ok=True)
    (agent / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "scripted": {
                        "baseUrl": base_url,
                        "api": "openai-completions",
                        "models": [{"id": "scripted-model", "contextWindow": 1_000_000}],
                    }
                }
            }
        )
    )
    # Compaction would summarize the whole week first: this bench measures the path to the
    # first request of the prompt itself.
    (agent / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}}))
    return clean_env(KNIGHTCODE_CODING_AGENT_DIR=str(agent), HOME=str(root)), project


class PeakRss:
    """Polls a running process's ``VmHWM`` (its peak resident set since ``exec``) until it ends."""

    def __init__(self, pid: int, interval: float = 0.005) -> None:
        self.peak = 0
        self._path = Path(f"/proc/{pid}/status")
        self._interval = interval
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while True:
            try:
                status = self._path.read_text()
            except OSError:
                return
            hwm = next((line for line in status.splitlines() if line.startswith("VmHWM:")), None)
            if hwm is None:  # a zombie: its memory is gone
                return
            self.peak = max(self.peak, int(hwm.split()[1]) * 1024)
            time.sleep(self._interval)

    def result(self) -> int:
        """The peak in bytes (call once the process has ended)."""
        self._thread.join()
        return self.peak


def continue_and_prompt(
    server: ScriptedServer, env: dict[str, str], project: Path, source: Path, sessions: Path
) -> tuple[float, float, int]:
    """Seconds to the first model request (parsed by the server; body received), peak RSS in
    bytes, of one ``-c -p hi`` run.
    """
    shutil.rmtree(sessions, ignore_errors=True)
    sessions.mkdir()
    shutil.copyfile(source, sessions / source.name)
    server.add(text_reply("hello"))
    before = len(server.requests)
    started = time.perf_counter()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "knightcode",
            "--session-dir",
            str(sessions),
            "-c",
            "-p",
            "hi",
            *MODEL,
        ],
        cwd=project,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    rss = PeakRss(process.pid)
    request = server.wait_for_requests(before + 1, timeout=120)[before]
    first_request = time.perf_counter() - started
    status = process.wait()
    if status != 0:
        raise SystemExit(f"knightcode -c -p exited with {status}")
    return first_request, request.received_at - started, rss.result()


def rpc_messages(
    env: dict[str, str], project: Path, source: Path, work: Path
) -> tuple[float, int, int]:
    """Seconds to the complete ``get_messages`` response, its message count and the peak RSS."""
    session = work / source.name
    shutil.copyfile(source, session)
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "knightcode", "--mode", "rpc", "--session", str(session), *MODEL],
        cwd=project,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    rss = PeakRss(process.pid)
    process.stdin.write(b'{"id":"s","type":"get_state"}\n{"id":"m","type":"get_messages"}\n')
    process.stdin.flush()
    count = -1
    for line in process.stdout:
        if line.startswith(b'{"id":"m"'):
            elapsed = time.perf_counter() - started
            count = len(json.loads(line)["data"]["messages"])
            break
    else:
        raise SystemExit("knightcode --mode rpc ended before answering get_messages")
    process.stdin.close()
    # Reading the rest keeps the pipe from filling while the process shuts down.
    threading.Thread(target=process.stdout.read, daemon=True).start()
    process.wait()
    return elapsed, count, rss.result()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0, help="size of the generated session")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="generate the session here once and reuse it")
    args = parser.parse_args(argv)
    ensure_bytecode()
    with tempfile.TemporaryDirectory(prefix="kc-big-session-") as temp:
        root = Path(temp)
        store = args.keep or root
        store.mkdir(parents=True, exist_ok=True)
        source = store / f"big-{args.mb:g}mb.jsonl"
        if not source.exists():
            write_session(source, int(args.mb * 1_000_000))
        size = source.stat().st_size
        with ScriptedServer(models=("scripted-model",)) as server:
            env, project = _setup(root, server.base_url)
            # The fixture's header names another project; -c looks only at the session dir.
            first, received, rss_first = zip(
                *(
                    continue_and_prompt(server, env, project, source, root / "sessions")
                    for _ in range(args.runs)
                ),
                strict=False,
            )
        work = root / "rpc"
        work.mkdir()
        rpc = [rpc_messages(env, project, source, work) for _ in range(args.runs)]
        elapsed, counts, rss_rpc = zip(*rpc, strict=False)
        print(f"session         {size / 1e6:.1f} MB")
        peak = statistics.median(rss_first)
        print(
            f"-c -p hi        first model request {statistics.median(first):.2f} s "
            f"(runs {', '.join(f'{t:.2f}' for t in first)}); peak RSS "
            f"{peak / 1e6:.0f} MB = {peak / size:.2f}x the file"
        )
        print(
            f"                body received {statistics.median(received):.2f} s "
            f"(runs {', '.join(f'{t:.2f}' for t in received)}), before the server parses it"
        )
        peak = statistics.median(rss_rpc)
        print(
            f"rpc state+msgs  {statistics.median(elapsed):.2f} s to {counts[0]} messages "
            f"(runs {', '.join(f'{t:.2f}' for t in elapsed)}); peak RSS "
            f"{peak / 1e6:.0f} MB = {peak / size:.2f}x the file"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
