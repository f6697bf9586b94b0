"""Start-up benchmark: ``knightcode --version`` and ``knightcode config list`` with 100 extensions.

Each figure is a median wall time over repeated runs, measured in alternation with
``python -c pass`` on the same interpreter, so the ratio is what matters.

Targets (issue 2): ``--version`` under 2.5x ``python -c pass``; 100 extensions load in under
300 ms (the difference between ``config list`` with 100 extensions and with none).

Run: ``python -m bench.startup [--runs N]``
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from bench._timing import clean_env, ensure_bytecode, interleaved_medians

EXTENSION = """
from knightcode import hookimpl

@hookimpl
def register_commands(register):
    register(name="cmd-{n}", description="command {n}", handler=print)

@hookimpl
def tool_call(tool_name, input):
    return None
"""


def console_script() -> str:
    """The installed ``knightcode`` script beside this interpreter (what users run)."""
    script = Path(sys.executable).with_name("knightcode")
    found = str(script) if script.exists() else shutil.which("knightcode")
    if not found:
        raise SystemExit("install knightcode first (pip install -e .)")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    ensure_bytecode()
    knightcode = console_script()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        empty_agent, full_agent, project = root / "empty", root / "full", root / "project"
        for folder in (empty_agent, full_agent / "extensions", project):
            folder.mkdir(parents=True)
        for n in range(100):
            (full_agent / "extensions" / f"ext_{n:03d}.py").write_text(EXTENSION.format(n=n))
        env_empty = clean_env(KNIGHTCODE_CODING_AGENT_DIR=str(empty_agent), HOME=str(root))
        env_full = clean_env(KNIGHTCODE_CODING_AGENT_DIR=str(full_agent), HOME=str(root))

        version = interleaved_medians(
            {
                "python -c pass": [sys.executable, "-c", "pass"],
                "knightcode --version": [knightcode, "--version"],
            },
            runs=args.runs,
            env=env_empty,
            cwd=str(project),
        )
        listing_empty = interleaved_medians(
            {
                "python -c pass": [sys.executable, "-c", "pass"],
                "config list (0 ext)": [knightcode, "config", "list"],
            },
            runs=args.runs,
            env=env_empty,
            cwd=str(project),
        )
        listing_full = interleaved_medians(
            {
                "python -c pass": [sys.executable, "-c", "pass"],
                "config list (100 ext)": [knightcode, "config", "list"],
            },
            runs=args.runs,
            env=env_full,
            cwd=str(project),
        )

    base = version["python -c pass"]
    ratio = version["knightcode --version"] / base
    load_ms = listing_full["config list (100 ext)"] - listing_empty["config list (0 ext)"]
    print(f"python -c pass                    {base:8.1f} ms")
    print(
        f"knightcode --version              {version['knightcode --version']:8.1f} ms  "
        f"({ratio:.2f}x python; target < 2.5x)"
    )
    print(f"python -c pass (beside config)    {listing_full['python -c pass']:8.1f} ms")
    print(f"knightcode config list, 0 ext     {listing_empty['config list (0 ext)']:8.1f} ms")
    print(f"knightcode config list, 100 ext   {listing_full['config list (100 ext)']:8.1f} ms")
    print(f"loading 100 extensions            {load_ms:8.1f} ms  (target < 300 ms)")


if __name__ == "__main__":
    main()
