"""grep and find tools against bare ``rg`` on a 50 000-file tree.

Run with ``python -m bench.tools_search``. Builds the tree in a temporary directory, then measures
the median wall time of the ``grep`` and ``find`` tools (in-process, through ``LocalBackend``,
result formatting included) against ``rg`` run directly (output captured through a pipe, as any
caller would), interleaved so machine noise falls on both alike.

Two baselines per case:

* ``rg`` — the same search done by bare rg with equivalent semantics (for grep the very same
  arguments; for find the ``rg --files`` listing the tool filters, since rg's ``--glob`` would
  override .gitignore). The target, tool < 1.3x, is measured against this one.
* ``rg -g`` (find only) — ``rg --files --glob PATTERN``, the fastest rg one-liner, shown for
  reference: it is not equivalent, as it also lists files that .gitignore excludes.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from knightcode import ToolDefinition, ToolResult
from knightcode._tools import LocalBackend, ToolContext, create_builtin_tools
from knightcode._tools.find import rg_files_argv

FILES = 50_000
PER_DIR = 100
TARGET = 1.3


def build_tree(root: Path, files: int) -> None:
    """``files`` small source files in nested directories, some ignored, a rare token in 50."""
    (root / ".git").mkdir()  # a repository, so rg applies .gitignore for grep as well
    (root / ".gitignore").write_text("build/\n*.log\n")
    rare_every = max(1, files // 50)
    for index in range(files):
        directory = root / f"pkg{index // (PER_DIR * 10):02}" / f"mod{(index // PER_DIR) % 10}"
        if index % PER_DIR == 0:
            directory.mkdir(parents=True, exist_ok=True)
        ext = (".py", ".ts", ".md", ".txt", ".log")[index % 5]
        body = f"def f_{index}():\n    return {index}\n# filler line {index}\n"
        if index % rare_every == 0:
            body += "NEEDLE_TOKEN here\n"
        (directory / f"file_{index}{ext}").write_text(body)
    (root / "build").mkdir()
    for index in range(200):
        (root / "build" / f"out_{index}.py").write_text("NEEDLE_TOKEN ignored\n")


def _no_updates(partial: ToolResult) -> None:
    pass  # grep and find report no partial results


async def run_tool(tool: ToolDefinition, args: dict[str, object], ctx: ToolContext) -> ToolResult:
    """One call of ``tool`` (whose ``execute`` may be plain or async)."""
    outcome = tool.execute("bench", args, ctx, _no_updates)
    return await outcome if inspect.isawaitable(outcome) else outcome


async def measure(
    tool: ToolDefinition,
    args: dict[str, object],
    ctx: ToolContext,
    bare: Mapping[str, Sequence[str]],
    cwd: str,
    runs: int,
) -> dict[str, float]:
    """Median milliseconds of the tool call and of each bare command, measured alternately."""
    samples: dict[str, list[float]] = {"tool": [], **{name: [] for name in bare}}
    for index in range(runs + 2):
        started = time.perf_counter()
        await run_tool(tool, args, ctx)
        elapsed = {"tool": time.perf_counter() - started}
        for name, command in bare.items():
            started = time.perf_counter()
            # Blocking on purpose: nothing else should run while the bare command is timed.
            subprocess.run(command, capture_output=True, cwd=cwd, check=False)
            elapsed[name] = time.perf_counter() - started
        if index >= 2:  # the first rounds warm the page cache
            for name, seconds in elapsed.items():
                samples[name].append(seconds * 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


async def main(files: int, runs: int) -> int:
    tools = create_builtin_tools()
    with tempfile.TemporaryDirectory(prefix="kc-bench-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        build_tree(root, files)
        print(
            f"tree: {files} files built in {time.perf_counter() - started:.1f}s; {runs} runs each"
        )
        ctx = ToolContext(root, LocalBackend(root))
        rg = await ctx.backend.find_executable("rg")
        assert rg is not None, "rg not found"
        grep_argv = [
            rg,
            "--json",
            "--line-number",
            "--color=never",
            "--hidden",
            "--",
            "NEEDLE_TOKEN",
            str(root),
        ]
        cases: list[tuple[str, str, dict[str, object], dict[str, list[str]]]] = [
            ("grep NEEDLE_TOKEN", "grep", {"pattern": "NEEDLE_TOKEN"}, {"rg": grep_argv}),
        ]
        for pattern in ("*_4?7.md", "pkg0*/mod3/*.py", "**/mod7/*"):
            glob = pattern if "/" not in pattern or pattern.startswith("**/") else f"**/{pattern}"
            bare = {
                "rg": rg_files_argv(rg, pattern),
                "rg -g": [rg, "--files", "--hidden", "--no-require-git", "--glob", glob],
            }
            cases.append((f"find {pattern}", "find", {"pattern": pattern}, bare))
        failed = False
        print(f"{'case':22} {'tool ms':>8} {'rg ms':>8} {'ratio':>6} {'rg -g ms':>9} {'ratio':>6}")
        for label, name, args, bare in cases:
            result = await run_tool(tools[name], args, ctx)
            first = result["content"][0]
            assert first["type"] == "text", first  # grep and find answer in text
            shown = first["text"].split("\n\n[")[0].count("\n") + 1
            medians = await measure(tools[name], args, ctx, bare, str(root), runs)
            ratio = medians["tool"] / medians["rg"]
            failed |= ratio >= TARGET
            line = f"{label:22} {medians['tool']:8.1f} {medians['rg']:8.1f} {ratio:5.2f}x"
            if "rg -g" in medians:
                line += f" {medians['rg -g']:9.1f} {medians['tool'] / medians['rg -g']:5.2f}x"
            else:
                line += " " * 17
            print(f"{line}  ({shown} results)")
        print(f"target: tool < {TARGET}x equivalent bare rg -> {'MISSED' if failed else 'met'}")
        return 1 if failed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=FILES)
    parser.add_argument("--runs", type=int, default=15)
    options = parser.parse_args()
    sys.exit(asyncio.run(main(options.files, options.runs)))
