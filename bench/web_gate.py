"""The classifier gate switched off: what its two hooks cost on every tool call.

``builtin:web-tools`` implements ``tool_call`` and ``tool_result`` for the gate, so they run for
every call of every tool, gate on or off. Off, each is one ``stat`` of tools.json compared with
the last one seen (see ``web_tools/gate_state.py``). Timed here, per call, calling the hook
functions directly (the dispatch around them is the same for every plugin):

* no tools.json at all;
* a tools.json with the gate off (the usual file: a Brave key);
* a bare ``os.stat`` of that file, for comparison.

Run: ``python -m bench.web_gate [--calls N]``
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import timeit
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from knightcode import HookContext


class _Context:
    """The one attribute the hooks read when the gate is off."""

    def __init__(self, agent_dir: Path) -> None:
        self.agent_dir = agent_dir


def main() -> None:
    """Print the per-call cost of the gate's hooks with the gate off."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=200_000)
    calls = parser.parse_args().calls

    import knightcode_builtins.web_tools as plugin

    with tempfile.TemporaryDirectory() as tmp:
        empty, configured = Path(tmp, "empty"), Path(tmp, "configured")
        empty.mkdir()
        configured.mkdir()
        tools_json = configured / "tools.json"
        tools_json.write_text(json.dumps({"braveApiKey": "BSA-x", "gate": {"enabled": False}}))
        for label, agent_dir in (("no tools.json", empty), ("gate off", configured)):
            ctx = cast("HookContext", _Context(agent_dir))

            def one_call(ctx: HookContext = ctx) -> None:
                plugin.tool_call("c", "bash", {"command": "rm -rf x"}, ctx)

            def one_result(ctx: HookContext = ctx) -> None:
                plugin.tool_result("c", "web_fetch", {}, [], None, False, ctx)

            call = timeit.timeit(one_call, number=calls)
            result = timeit.timeit(one_result, number=calls)
            print(
                f"{label:14} tool_call {call / calls * 1e6:5.2f} µs   "
                f"tool_result {result / calls * 1e6:5.2f} µs"
            )
        bare = timeit.timeit(lambda: os.stat(tools_json), number=calls)
        print(f"{'bare os.stat':14} {bare / calls * 1e6:5.2f} µs")


if __name__ == "__main__":
    main()
