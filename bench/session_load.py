"""Session store benchmark: load a ~100 MB session, build its context, estimate its tokens;
append 10 000 entries.

Targets (issue 3): load + build context + token estimate under 1.5 s, peak memory under 4x the
file size. Each load is measured in a fresh subprocess (so ``ru_maxrss`` is that load's peak);
the file is in the page cache (it was just written), so disk speed is not measured.

Run: ``python -m bench.session_load [--mb 100] [--runs 3] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import json
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


def _maxrss_bytes() -> int:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024  # Linux reports KiB


def child_load(path: Path) -> dict[str, float]:
    """Measure one load in this (fresh) process."""
    from knightcode._session import (
        SessionManager,
        convert_to_llm,
        estimate_context_tokens,
        estimate_tokens,
    )

    baseline = _maxrss_bytes()
    started = time.perf_counter()
    manager = SessionManager.open(path)
    loaded = time.perf_counter()
    context = manager.build_context()
    built = time.perf_counter()
    estimate = estimate_context_tokens(context.messages)
    estimated = time.perf_counter()
    full = sum(estimate_tokens(message) for message in context.messages)
    full_estimated = time.perf_counter()
    convert_to_llm(context.messages)
    converted = time.perf_counter()
    return {
        "entries": len(manager.get_entries()),
        "skipped": manager.load_report.skipped_lines,
        "messages": len(context.messages),
        "estimate_tokens": estimate.tokens,
        "full_estimate_tokens": full,
        "load_s": loaded - started,
        "context_s": built - loaded,
        "estimate_s": estimated - built,
        "total_s": estimated - started,
        "full_estimate_s": full_estimated - estimated,
        "convert_s": converted - full_estimated,
        "peak_rss": _maxrss_bytes(),
        "baseline_rss": baseline,
    }


def bench_append(directory: Path, count: int) -> dict[str, float]:
    """Append ``count`` messages to a session that already holds an assistant message."""
    from knightcode import AssistantMessage, Usage
    from knightcode._session import SessionManager

    manager = SessionManager.create(str(directory), directory / "append")
    usage: Usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15}
    assistant: AssistantMessage = {
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "api": "openai-completions",
        "provider": "llama.cpp",
        "model": "m",
        "usage": usage,
        "stopReason": "stop",
        "timestamp": 0,
    }
    manager.append_message({"role": "user", "content": "start", "timestamp": 0})
    manager.append_message(assistant)
    text = "a tool result line with some text, café 😀 " * 12
    started = time.perf_counter()
    for index in range(count):
        manager.append_message(
            {
                "role": "toolResult",
                "toolCallId": f"c{index}",
                "toolName": "bash",
                "content": [{"type": "text", "text": text}],
                "isError": False,
                "timestamp": index,
            }
        )
    appended = time.perf_counter()
    manager.sync()
    synced = time.perf_counter()
    # The agent's pattern: sync at every turn end (here every 10 entries).
    turns_started = time.perf_counter()
    for index in range(count // 10):
        for inner in range(10):
            manager.append_message({"role": "user", "content": f"{index}/{inner}", "timestamp": 0})
        manager.sync()
    turns = time.perf_counter() - turns_started
    manager.close()
    return {
        "append_s": appended - started,
        "sync_s": synced - appended,
        "per_append_us": (appended - started) / count * 1e6,
        "turns_with_sync_s": turns,
        "file_bytes": manager.session_file.stat().st_size if manager.session_file else 0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0, help="size of the generated session")
    parser.add_argument("--runs", type=int, default=3, help="load measurements (fresh processes)")
    parser.add_argument("--appends", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="write the session here and keep it")
    parser.add_argument(
        "--emoji-everywhere", action="store_true", help="worst case: an emoji in every text"
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child_load(args.child)))
        return 0

    with tempfile.TemporaryDirectory(prefix="kc-session-bench-") as temp:
        directory = args.keep or Path(temp)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "bench-session.jsonl"
        started = time.perf_counter()
        entries, size = write_session(
            path, int(args.mb * 1_000_000), emoji_everywhere=args.emoji_everywhere
        )
        print(
            f"generated {entries} entries, {size / 1e6:.1f} MB "
            f"in {time.perf_counter() - started:.1f} s"
        )

        results = []
        for _ in range(args.runs):
            out = subprocess.run(
                [sys.executable, "-m", "bench.session_load", "--child", str(path)],
                check=True,
                capture_output=True,
                text=True,
                cwd=Path(__file__).resolve().parent.parent,
            )
            results.append(json.loads(out.stdout))
        best = min(results, key=lambda r: r["total_s"])
        med = {key: statistics.median(r[key] for r in results) for key in best}
        print(
            f"loaded {best['entries']} entries ({best['skipped']} skipped); "
            f"context {best['messages']} messages, estimate {best['estimate_tokens']} tokens "
            f"(all messages: {best['full_estimate_tokens']})"
        )
        print(
            f"load            {med['load_s']:.3f} s "
            f"(median of {args.runs}; best {best['load_s']:.3f})"
        )
        print(f"build context   {med['context_s']:.3f} s")
        print(
            f"token estimate  {med['estimate_s'] * 1000:.2f} ms   (estimating every message: "
            f"{med['full_estimate_s']:.3f} s; convert_to_llm {med['convert_s']:.3f} s)"
        )
        print(
            f"TOTAL           {med['total_s']:.3f} s   target < 1.5 s  -> "
            f"{'OK' if med['total_s'] < 1.5 else 'MISSED'}"
        )
        peak, base = med["peak_rss"], med["baseline_rss"]
        print(
            f"peak RSS        {peak / 1e6:.0f} MB ({peak / size:.2f}x file; "
            f"{(peak - base) / 1e6:.0f} MB above the {base / 1e6:.0f} MB interpreter)  "
            f"target < 4x -> {'OK' if peak < 4 * size else 'MISSED'}"
        )

        appended = bench_append(directory, args.appends)
        print(
            f"append {args.appends} entries  {appended['append_s']:.3f} s "
            f"({appended['per_append_us']:.0f} us each) "
            f"+ fsync {appended['sync_s'] * 1000:.1f} ms; "
            f"{args.appends} more with a sync every 10 entries: "
            f"{appended['turns_with_sync_s']:.3f} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
