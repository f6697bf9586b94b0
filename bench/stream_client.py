"""Stream-client benchmark: text deltas per second through the OpenAI-compatible client.

The scripted server streams N identical one-token deltas (pre-encoded, written in 64 KB
blocks); the client parses the SSE, builds the assistant message and yields one event per
delta, which the benchmark merely counts. Client and server share the process (the server in a
thread), so the figure is a lower bound of the client's own speed.

Target (issue 4): at least 100 000 deltas/s.

Run: ``python -m bench.stream_client [--deltas 100000] [--runs 5] [--api anthropic-messages]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

if not __package__:  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


async def _run_once(base_url: str, api: str, deltas: int) -> tuple[float, int]:
    import httpx

    from knightcode._llm.anthropic_messages import stream_anthropic_messages
    from knightcode._llm.openai_completions import stream_openai_completions
    from knightcode._llm.types import Context, Model, StreamOptions

    model = Model(provider="bench", id="scripted-model", name="bench", api=api, base_url=base_url)
    context = Context(messages=[{"role": "user", "content": "go", "timestamp": 0}])
    stream = stream_openai_completions if api == "openai-completions" else stream_anthropic_messages
    count = 0
    final = None
    async with httpx.AsyncClient() as client:
        started = time.perf_counter()
        async for event in stream(
            model, context, StreamOptions(api_key="bench-key"), client=client
        ):
            if event["type"] == "text_delta":
                count += 1
            elif event["type"] in ("done", "error"):
                final = event
        elapsed = time.perf_counter() - started
    if final is None or final["type"] != "done":
        raise SystemExit(f"the stream failed: {final}")
    return elapsed, count


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--deltas", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--api", default="openai-completions", choices=["openai-completions", "anthropic-messages"]
    )
    args = parser.parse_args()

    from knightcode.testing import ScriptedServer, deltas_reply

    rates = []
    with ScriptedServer() as server:
        for _ in range(args.runs + 1):
            server.add(deltas_reply(args.deltas))
        asyncio.run(
            _run_once(server.base_url, args.api, args.deltas)
        )  # warm-up: imports, first connection
        for _ in range(args.runs):
            elapsed, count = asyncio.run(_run_once(server.base_url, args.api, args.deltas))
            if count != args.deltas:
                raise SystemExit(f"expected {args.deltas} deltas, got {count}")
            rates.append(count / elapsed)
    print(
        f"{args.api}: {args.deltas} deltas, median {statistics.median(rates):,.0f} deltas/s "
        f"(min {min(rates):,.0f}, max {max(rates):,.0f}, {args.runs} runs); target >= 100,000"
    )


if __name__ == "__main__":
    main()
