"""Start-up with the built-in model catalogue (issue 17): ``--version`` and ``-p`` to the request.

Measures, as medians over repeated runs in alternation:

* ``knightcode --version`` (must not read the catalogue at all);
* ``knightcode -p hi`` from process start until the model request has reached a loopback
  server (:class:`~knightcode.testing.ScriptedServer`): the built-in ``groq`` provider, pointed at
  the server by models.json, so the whole catalogue is loaded, merged and searched on the way;
* the registry's first construction in a fresh process, in CPU time (json read + ~900 models
  built): the catalogue's own cost, robust to other load on the machine.

With ``--baseline DIR`` (a tree of another commit's ``core/``, e.g. from
``git archive h17-integration core | tar -x -C DIR``) the same commands run that code too
(``PYTHONPATH=DIR/core``), interleaved with this tree's, so the difference is the catalogue's
cost. Target: within 10 ms of the baseline.

Run: ``python -m bench.catalogue [--runs N] [--baseline DIR]``
"""

from __future__ import annotations

import argparse
import compileall
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._timing import clean_env, ensure_bytecode
from knightcode.testing import ScriptedServer, text_reply

MODEL = "openai/gpt-oss-120b"


def _version_ms(env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "knightcode", "--version"],
        env=env,
        cwd=cwd,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return (time.perf_counter() - started) * 1000


def _first_request_ms(server: ScriptedServer, env: dict[str, str], cwd: Path) -> float:
    """Milliseconds from spawning ``-p`` until its request body reached the server."""
    server.add(text_reply("ok"))
    seen = len(server.requests)
    command = [sys.executable, "-m", "knightcode", "--model", f"groq/{MODEL}", "-p", "hi"]
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    request = server.wait_for_requests(seen + 1, timeout=30)[-1]
    if process.wait(timeout=30) != 0:
        raise SystemExit(f"knightcode -p failed (exit {process.returncode})")
    return (request.received_at - started) * 1000


def _list_models_ms(env: dict[str, str], cwd: Path) -> float | None:
    """``knightcode --list-models`` (None when this build has no such flag)."""
    command = [sys.executable, "-m", "knightcode", "--list-models"]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, check=False)
    elapsed = (time.perf_counter() - started) * 1000
    return elapsed if done.returncode == 0 else None


def _registry_ms(runs: int, env: dict[str, str]) -> float:
    """Median CPU time of the registry's first construction in a fresh process (CPU time, not
    wall time: other work on a shared machine does not count).
    """
    code = (
        "import time, pathlib, tempfile\n"
        "from knightcode._llm.registry import ModelRegistry\n"
        "folder = pathlib.Path(tempfile.mkdtemp())\n"
        "t = time.process_time()\n"
        "ModelRegistry(folder, environ={})\n"
        "print((time.process_time() - t) * 1000)\n"
    )
    samples = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
            ).stdout
        )
        for _ in range(runs)
    ]
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--baseline", type=Path, help="a tree holding another commit's core/")
    args = parser.parse_args()
    ensure_bytecode()
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer(models=(MODEL,)) as server:
        root = Path(tmp)
        agent, project = root / "agent", root / "project"
        for folder in (agent, project):
            folder.mkdir()
        models = {"providers": {"groq": {"baseUrl": server.base_url}}}
        (agent / "models.json").write_text(json.dumps(models))
        base = {"KNIGHTCODE_CODING_AGENT_DIR": str(agent), "HOME": str(root)}
        variants = {"this tree": clean_env(GROQ_API_KEY="k", **base)}
        if args.baseline is not None:
            core = str((args.baseline / "core").resolve())
            compileall.compile_dir(core, quiet=1)  # as ensure_bytecode does for this tree
            variants["baseline"] = clean_env(GROQ_API_KEY="k", PYTHONPATH=core, **base)
        version: dict[str, list[float]] = {name: [] for name in variants}
        first: dict[str, list[float]] = {name: [] for name in variants}
        listing: dict[str, list[float]] = {name: [] for name in variants}
        for index in range(args.runs + 2):
            for name, env in variants.items():
                v = _version_ms(env, project)
                f = _first_request_ms(server, env, project)
                listed = _list_models_ms(env, project)
                if index >= 2:
                    version[name].append(v)
                    first[name].append(f)
                    listing[name] += [listed] if listed is not None else []
        print(f"runs: {args.runs} (medians, ms)")
        for name in variants:
            shown = f"{statistics.median(listing[name]):7.1f}" if listing[name] else "    n/a"
            print(
                f"{name:10s} --version {statistics.median(version[name]):7.1f}   "
                f"-p to first request {statistics.median(first[name]):7.1f}   "
                f"--list-models {shown}"
            )
        for name, env in variants.items():
            cpu = _registry_ms(args.runs, env)
            print(f"{name:10s} registry construction, CPU: {cpu:.1f} ms")


if __name__ == "__main__":
    main()
