"""Session export benchmark: the HTML viewer of a ~10,000-entry session.

The session is the session-store benchmark's (``bench/session_fixture.py``): user prompts,
assistant turns with thinking, markdown text and ``read`` calls of ``.py`` files whose results
are highlighted as Python, a few abandoned branches with summaries, labels and model changes.
Figures: rendering the page (``render_session_html`` on an opened session), and the whole
``knightcode --export FILE OUT`` command in a fresh process (start-up, session load, render,
write); medians of ``--runs``, as wall time and as CPU time (on a shared machine the CPU time is
the steadier figure: wall time there includes waiting for a core).

Run: ``python -m bench.export_html [--entries 10000] [--runs 3] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if not __package__:  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.session_fixture import write_session

BYTES_PER_ENTRY = 1_000
"""About what the fixture writes per entry: the target size for ``--entries`` entries."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="write the files here")
    options = parser.parse_args()

    from knightcode._modes.rpc.export_html import render_session_html
    from knightcode._session.manager import SessionManager

    folder = options.keep or Path(tempfile.mkdtemp(prefix="knightcode-export-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "session.jsonl"
    entries, size = write_session(path, options.entries * BYTES_PER_ENTRY)
    session = SessionManager.open(path)
    walls, cpus = [], []
    page = ""
    for _ in range(options.runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        page = render_session_html(session)
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - started_cpu)
    out = folder / "session.html"
    env = {**os.environ, "KNIGHTCODE_LOAD_PLUGINS": ""}
    command = [sys.executable, "-m", "knightcode", "--export", str(path), str(out)]
    cli_walls, cli_cpus = [], []
    for _ in range(options.runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(command, env=env, cwd=folder, check=True, stdout=subprocess.DEVNULL)
        cli_walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cli_cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    print(f"session: {entries} entries, {size / 1e6:.1f} MB; page {len(page) / 1e6:.1f} MB")
    print(
        f"render_session_html: median {statistics.median(walls) * 1000:.0f} ms wall, "
        f"{statistics.median(cpus) * 1000:.0f} ms CPU"
    )
    print(
        f"knightcode --export (whole command): median {statistics.median(cli_walls) * 1000:.0f} "
        f"ms wall, {statistics.median(cli_cpus) * 1000:.0f} ms CPU"
    )
    if options.keep is None:
        for file in (path, out):
            file.unlink(missing_ok=True)
        folder.rmdir()


if __name__ == "__main__":
    main()
