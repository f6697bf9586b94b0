"""Session export benchmark: the HTML viewer of a ~10,000-entry session.

The session is the session-store benchmark's (``bench/session_fixture.py``): user prompts,
assistant turns with thinking, markdown text and ``read`` calls of ``.py`` files whose results
are highlighted as Python, a few abandoned branches with summaries, labels and model changes.
Figures: rendering the page (``render_session_html`` on an opened session, median of ``--runs``),
and the whole ``knightcode --export FILE OUT`` command in a fresh process (start-up, plugin
loading, session load, render, write), median of ``--runs``.

Run: ``python -m bench.export_html [--entries 10000] [--runs 3] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

if not __package__:  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._timing import median_wall_ms
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
    samples = []
    page = ""
    for _ in range(options.runs):
        started = time.perf_counter()
        page = render_session_html(session)
        samples.append(time.perf_counter() - started)
    out = folder / "session.html"
    env = {**os.environ, "KNIGHTCODE_LOAD_PLUGINS": ""}
    command = [sys.executable, "-m", "knightcode", "--export", str(path), str(out)]
    cli_ms = median_wall_ms(command, runs=options.runs, env=env, cwd=str(folder), warmup=1)
    print(f"session: {entries} entries, {size / 1e6:.1f} MB; page {len(page) / 1e6:.1f} MB")
    print(f"render_session_html: median {statistics.median(samples) * 1000:.0f} ms")
    print(f"knightcode --export (whole command): median {cli_ms:.0f} ms")
    if options.keep is None:
        for file in (path, out):
            file.unlink(missing_ok=True)
        folder.rmdir()


if __name__ == "__main__":
    main()
