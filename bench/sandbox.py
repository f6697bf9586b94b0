"""What a sandbox costs: start-up, per-command overhead, and a 200-file read/grep workload.

Run: ``python -m bench.sandbox`` (all backends) or ``--backends local,bwrap``; ``--runs 50``
commands for the overhead. The sandboxes are the ones the tests use (``tests/sandbox/
factory_*.py``: podman with the CI's busybox image, Gondolin with the CI's guest under TCG), so
run ``scripts/ci/sandbox_*.sh`` first.

For each backend:

* **start**: building the runner and starting it (a container, a VM boot) — once per session;
* **exec**: ``exec(["true"])``, median and 90th percentile of ``--runs``;
* **200 files**: reading 200 files of 4 KB through the backend's file layer (host side under
  ``/workspace`` for every sandbox), ``grep`` as the tool runs it (``rg --json`` over the
  folder: on the host for every backend), and the same two jobs as commands *inside*
  (``cat * | wc -c`` and ``grep -rl``), which is what a model's ``bash`` call pays.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from knightcode import ExecutionBackend, LocalBackend
from knightcode_builtins.gondolin.backend import SandboxBackend
from knightcode_builtins.gondolin.config import SandboxConfig

BACKENDS = ("local", "bwrap", "container", "gondolin")
FILES = 200


def make_tree(root: Path) -> None:
    for index in range(FILES):
        folder = root / f"pkg{index % 10}"
        folder.mkdir(exist_ok=True)
        lines = [f"line {n} of file {index}" for n in range(150)]
        if index % 7 == 0:
            lines[75] = "needle here"
        (folder / f"mod{index}.txt").write_text("\n".join(lines) + "\n")


async def build(name: str, workspace: Path) -> tuple[ExecutionBackend, str]:
    if name == "local":
        return LocalBackend(workspace), str(workspace)
    import importlib

    factory = importlib.import_module(f"tests.sandbox.factory_{name}")
    factory.require()
    config = SandboxConfig(backend=name, verify=False)
    runner = await factory.create(workspace, config)
    backend = SandboxBackend(runner, workspace, config)
    await backend.prepare()
    return backend, "/workspace"


async def timed(work: object) -> float:
    started = time.perf_counter()
    await work  # type: ignore[misc]
    return (time.perf_counter() - started) * 1000


async def measure(name: str, runs: int) -> dict[str, float]:
    workspace = Path(tempfile.mkdtemp(prefix=f"bench-sandbox-{name}-")).resolve()
    make_tree(workspace)
    started = time.perf_counter()
    backend, root = await build(name, workspace)
    # The first command of a fresh VM pays for its boot: count it in the start.
    await backend.exec(["true"])
    figures = {"start_ms": (time.perf_counter() - started) * 1000}
    try:
        samples = [await timed(backend.exec(["true"])) for _ in range(runs)]
        figures["exec_p50_ms"] = statistics.median(samples)
        figures["exec_p90_ms"] = sorted(samples)[int(len(samples) * 0.9) - 1]
        paths = [f"{root}/pkg{i % 10}/mod{i}.txt" for i in range(FILES)]

        async def read_all() -> None:
            for path in paths:
                await backend.read_file(path)

        figures["read_200_ms"] = await timed(read_all())
        rg = await backend.find_executable("rg")
        assert rg is not None
        argv = [rg, "--json", "--line-number", "--", "needle", root]
        grep_result = await backend.exec(argv, merge_stderr=False)
        assert grep_result.output.count(b'"type":"match"') == len(range(0, FILES, 7))
        figures["grep_tool_ms"] = await timed(backend.exec(argv, merge_stderr=False))
        figures["cat_inside_ms"] = await timed(
            backend.exec(shell_command="cat pkg*/*.txt | wc -c", cwd=root)
        )
        figures["grep_inside_ms"] = await timed(
            backend.exec(shell_command="grep -rl needle . | wc -l", cwd=root)
        )
    finally:
        if isinstance(backend, SandboxBackend):
            await backend.aclose()
        shutil.rmtree(workspace, ignore_errors=True)
    return figures


COLUMNS = (
    ("start_ms", "start"),
    ("exec_p50_ms", "exec p50"),
    ("exec_p90_ms", "exec p90"),
    ("read_200_ms", "read 200"),
    ("grep_tool_ms", "grep tool"),
    ("cat_inside_ms", "cat inside"),
    ("grep_inside_ms", "grep inside"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    names = [name for name in args.backends.split(",") if name]
    print("| backend | " + " | ".join(label for _, label in COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for name in names:
        figures = asyncio.run(measure(name, args.runs))
        cells = " | ".join(f"{figures[key]:.1f} ms" for key, _ in COLUMNS)
        print(f"| {name} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
