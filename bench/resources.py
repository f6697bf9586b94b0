"""Skills and prompt templates at start-up: what 200 skills and 200 templates add.

Start-up reads every skill's and template's header (the system prompt lists the skills; the
templates become commands), so this is the part of start-up that grows with them. Measured in
process: discovery (``discover_resources``) plus the system prompt's ``<available_skills>`` block,
with 200 + 200 files against none; the median of ``--runs`` runs, after one warm-up run (the files
are then in the page cache, as they are after the first start).

Target (issue 15): within 50 ms of start-up with none (together with 3 MCP servers, which start
lazily and are not part of this figure).

Run: ``python -m bench.resources [--runs N] [--count N]``
"""

from __future__ import annotations

import argparse
import statistics
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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--count", type=int, default=200)
    args = parser.parse_args()
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
