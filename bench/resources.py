"""Skills and prompt templates at start-up: what 200 skills and 200 templates add.

Start-up reads every skill's and template's header (the system prompt lists the skills; the
templates become commands), so this is the part of start-up that grows with them. Measured in
process: discovery (``discover_resources``) plus the system prompt's ``<available_skills>`` block,
with 200 + 200 files against none; the median of ``--runs`` runs, after one warm-up run (the files
are then in the page cache, as they are after the first start).

Target (issue 15): within 50 ms of start-up with none.

``--startup``: the whole start, end to end — ``knightcode -p`` against the scripted model server
(process start to exit after a one-word answer), with nothing configured against 200 skills,
200 templates and 3 MCP stdio servers (``bench/mcp_server.py``, 20 tools each), measured in
alternation. The servers are lazy: with their tool lists cached (every start after the first)
none is started; the first start after a server is added (no cached list) is measured apart.

Run: ``python -m bench.resources [--runs N] [--count N] [--startup]``
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

from knightcode._resources.discovery import ResourceSources, discover_resources
from knightcode._resources.skills import format_skills_for_prompt

SKILL = """---
name: skill-{n}
description: Skill number {n}. Use it when the task is about topic {n}; it explains the steps.
license: MIT
metadata:
  owner: bench
---

# Skill {n}

Step one, step two, step three.
"""

TEMPLATE = """---
description: Template {n}
argument-hint: FILE [FOCUS...]
---
Review $1 focusing on ${{@:2}}.
"""


def populate(agent_dir: Path, count: int) -> None:
    for n in range(count):
        skill = agent_dir / "skills" / f"skill-{n}" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text(SKILL.format(n=n))
        (agent_dir / "prompts").mkdir(exist_ok=True)
        (agent_dir / "prompts" / f"template-{n}.md").write_text(TEMPLATE.format(n=n))


def measure(root: Path, agent_dir: Path, runs: int) -> tuple[float, int, int]:
    cwd = root / "project"
    cwd.mkdir(exist_ok=True)
    sources = ResourceSources(agent_dir=agent_dir, cwd=cwd, home=root)
    times: list[float] = []
    found = discover_resources(sources)  # warm-up
    for _ in range(runs):
        start = time.perf_counter()
        found = discover_resources(sources)
        format_skills_for_prompt(found.skills)
        times.append(time.perf_counter() - start)
    return statistics.median(times), len(found.skills), len(found.templates)


MCP_SERVER = Path(__file__).with_name("mcp_server.py")


def configure(agent_dir: Path, base_url: str, servers: int) -> None:
    """models.json pointing at the scripted server, and ``servers`` MCP servers in mcp.json."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    models = {"id": "scripted-model", "contextWindow": 32000, "maxTokens": 4096}
    provider = {"baseUrl": base_url, "api": "openai-completions", "models": [models]}
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"scripted": provider}}))
    entry = {"command": sys.executable, "args": [str(MCP_SERVER)]}
    mcp = {"mcpServers": {f"bench{n}": entry for n in range(servers)}}
    if servers:
        (agent_dir / "mcp.json").write_text(json.dumps(mcp))


def run_print(agent_dir: Path, cwd: Path) -> tuple[float, float]:
    """One ``knightcode -p`` run: wall and CPU (user + system, its subprocesses included)
    milliseconds. CPU time barely moves when other work shares the machine; wall time does.
    """
    from bench._timing import clean_env

    env = clean_env(KNIGHTCODE_CODING_AGENT_DIR=str(agent_dir), HOME=str(cwd.parent))
    command = [sys.executable, "-m", "knightcode", "--model", "scripted/scripted-model"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([*command, "-p", "hi"], env=env, cwd=cwd, check=True, capture_output=True)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def startup(count: int, runs: int) -> None:
    """``--startup``: see the module docstring."""
    from bench._timing import ensure_bytecode
    from knightcode.testing import ScriptedServer, text_reply

    ensure_bytecode()
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer(models=("scripted-model",)) as srv:
        root = Path(tmp)
        project = root / "project"
        project.mkdir()
        agents = {name: root / name for name in ("none", "mcp", "full", "cold")}
        for name, agent_dir in agents.items():
            configure(agent_dir, srv.base_url, 0 if name == "none" else 3)
        populate(agents["full"], count)
        srv.add(*[text_reply("ok") for _ in range((runs + 3) * len(agents) + 2)])
        for name in ("mcp", "full"):  # lists the servers' tools once: the cache starts use
            run_print(agents[name], project)
        walls: dict[str, list[float]] = {name: [] for name in agents}
        cpus: dict[str, list[float]] = {name: [] for name in agents}
        for index in range(runs + 3):
            for name, agent_dir in agents.items():
                if name == "cold":  # the first start after the servers were added
                    (agent_dir / "mcp" / "tools-cache.json").unlink(missing_ok=True)
                wall, cpu = run_print(agent_dir, project)
                if name == "cold":
                    time.sleep(1)  # its servers' exit must not land on the next run
                if index >= 3:
                    walls[name].append(wall)
                    cpus[name].append(cpu)
    wall_ms = {name: statistics.median(values) for name, values in walls.items()}
    cpu_ms = {name: statistics.median(values) for name, values in cpus.items()}
    rows = [
        ("nothing configured", "none"),
        ("3 MCP servers (cached tool lists)", "mcp"),
        (f"{count} skills + {count} templates + 3 MCP (cached)", "full"),
        ("3 MCP servers, no cached tool list (first start)", "cold"),
    ]
    title = f"knightcode -p, median of {runs}"
    print(f"{title:<56} {'wall':>9} {'added':>8} {'CPU':>9} {'added':>8}")
    for label, name in rows:
        wall_added = wall_ms[name] - wall_ms["none"]
        cpu_added = cpu_ms[name] - cpu_ms["none"]
        print(
            f"{label:<56} {wall_ms[name]:7.1f}ms {wall_added:+7.1f} {cpu_ms[name]:7.1f}ms "
            f"{cpu_added:+7.1f}"
        )
    print("target: the cached rows within 50 ms of nothing configured")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--startup", action="store_true", help="end to end, with 3 MCP servers")
    args = parser.parse_args()
    if args.startup:
        startup(args.count, args.runs)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        empty, full = root / "empty", root / "full"
        empty.mkdir()
        populate(full, args.count)
        none, _, _ = measure(root, empty, args.runs)
        many, skills, templates = measure(root, full, args.runs)
    print(f"none: {none * 1000:.2f} ms")
    print(f"{skills} skills + {templates} templates: {many * 1000:.2f} ms")
    print(f"added: {(many - none) * 1000:.2f} ms (target: within 50 ms)")


if __name__ == "__main__":
    main()
