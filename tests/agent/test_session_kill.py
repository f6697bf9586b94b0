"""Fault injection: SIGKILL knightcode at random points and check no reported entry is lost.

50 runs of ``knightcode --mode json`` against a scripted server that streams tool calls and
answers with random delays; each run is killed after a random number of records (or lets it
finish), several runs continue the same session file, and three run at a time. Afterwards every
session file must load, and every message *reported* must be in it.

"Reported" means its ``message_end`` record reached stdout before the kill. A finished message
is appended to the session file before its ``message_end`` is written (``AgentSession.emit``),
so such a message must be on disk — except while the session holds no assistant message yet:
the reference's lazy rule writes nothing before the first answer, so a user message reported in
a session that never got an assistant ``message_end`` may be missing.

The seed is random and printed on failure; set ``KNIGHTCODE_KILL_SEED`` to replay one.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knightcode._session.loading import read_session_file
from knightcode._session.manager import SessionManager
from knightcode.testing import Reply, text_reply, tool_call, tool_call_reply
from tests.agent.conftest import Scripted

RUNS = 50
SESSIONS = 10  # each continued by five runs
WORKERS = 3


@dataclass
class _Run:
    """What one killed (or finished) run reported."""

    session: Path
    reported: list[dict[str, Any]] = field(default_factory=list)  # message_end messages
    killed_after: int | None = None


def _replies(rng: random.Random, count: int) -> Iterator[Reply]:
    # Tool calls (read and bash, sometimes two at once) and answers, each with a random delay
    # between its streamed events, so kills land inside streams as well as between them.
    for index in range(count):
        delay = rng.choice((0.0, 0.0, 0.002, 0.01))
        if rng.random() < 0.6:
            calls = [tool_call(f"r{index}", "read", {"path": "notes.txt"})]
            if rng.random() < 0.4:
                calls.append(tool_call(f"b{index}", "bash", {"command": "echo hi"}))
            yield tool_call_reply(calls, text="let me look", delay=delay)
        else:
            yield text_reply(*[f"answer {index} "] * rng.randint(1, 30), delay=delay)


def _run_once(scripted: Scripted, run: _Run, kill_after: int | None) -> None:
    process = scripted.popen(
        "--mode", "json", "--session", str(run.session), "go on", stderr=subprocess.DEVNULL
    )
    assert process.stdout is not None
    records = 0
    timer = None
    if kill_after is not None and kill_after < 0:  # a kill at a random moment, not a record
        timer = threading.Timer(-kill_after / 1000, process.send_signal, (signal.SIGKILL,))
        timer.start()
    try:
        for line in process.stdout:
            try:
                record = json.loads(line)
            except ValueError:
                break  # a record cut by the kill
            if record.get("type") == "message_end":
                run.reported.append(record["message"])
            records += 1
            if kill_after is not None and records == kill_after:
                process.send_signal(signal.SIGKILL)
                run.killed_after = records
                break
    finally:
        if timer is not None:
            timer.cancel()
        process.stdout.close()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.returncode == -signal.SIGKILL and run.killed_after is None:
        run.killed_after = records  # the timer's kill landed inside the run


def _messages_on_disk(path: Path) -> list[dict[str, Any]]:
    loaded = read_session_file(path)
    return [e["message"] for e in loaded.entries if e["type"] == "message"]


def test_sigkill_at_random_points_loses_no_reported_entry(scripted: Scripted) -> None:
    seed = int(os.environ.get("KNIGHTCODE_KILL_SEED", random.randrange(1 << 32)))
    rng = random.Random(seed)
    (scripted.project / "notes.txt").write_text("remember the milk\n")
    scripted.server.add(*_replies(rng, RUNS * 12))
    sessions = [scripted.project / f"session-{n}.jsonl" for n in range(SESSIONS)]
    # Each session's runs in order (continuing it), the sessions interleaved across workers.
    plans: list[list[tuple[_Run, int | None]]] = []
    for path in sessions:
        plan: list[tuple[_Run, int | None]] = []
        for _ in range(RUNS // SESSIONS):
            choice = rng.random()
            kill: int | None
            if choice < 0.15:
                kill = None  # runs to the end
            elif choice < 0.35:
                kill = -rng.randint(150, 1500)  # milliseconds after the spawn
            else:
                kill = rng.randint(1, 25)  # after that many records (most runs emit 10-40)
            plan.append((_Run(path), kill))
        plans.append(plan)

    def run_session(plan: list[tuple[_Run, int | None]]) -> None:
        for run, kill in plan:
            _run_once(scripted, run, kill)

    started = time.monotonic()
    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(run_session, plans))
    elapsed = time.monotonic() - started

    context = f"seed {seed} (replay with KNIGHTCODE_KILL_SEED={seed})"
    killed = sum(1 for plan in plans for run, _ in plan if run.killed_after is not None)
    assert killed >= 20, context  # the kills did land inside runs
    for plan in plans:
        path = plan[0][0].session
        reported = [message for run, _ in plan for message in run.reported]
        if not path.exists():
            assert not any(m["role"] == "assistant" for m in reported), context
            continue
        on_disk = _messages_on_disk(path)
        # Loads for continuing, too: through the manager and into a context, no exception.
        SessionManager.open(path).build_context()
        if not any(m["role"] == "assistant" for m in reported):
            continue  # lazily written: nothing is promised before the first answer
        first_answer = next(i for i, m in enumerate(reported) if m["role"] == "assistant")
        for message in reported[first_answer:]:
            assert message in on_disk, f"{context}: lost from {path.name}: {message}"
    assert elapsed < 60, f"{context}: took {elapsed:.0f} s"
