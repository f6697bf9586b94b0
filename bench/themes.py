"""Themes: loading a theme file, and switching themes (everything redrawn in the new one).

- ``load``: read, validate and build a user theme file (``load_theme_file`` + ``build_theme``),
  and discovery of ``--files`` theme files in ``<agent-dir>/themes/`` (names only: each is read
  when used). Medians of ``--runs`` runs.
- ``start``: what start-up adds: a fresh interpreter importing the theme modules, listing the
  themes (none of the user's) and building the built-in ``dark`` (the terminal's background
  comes from ``COLORFGBG`` here; an OSC 11 query is one terminal round trip, at most 150 ms).
- ``switch``: what ``/settings`` does on each move through the theme list: build the theme and
  render the whole transcript (``--messages`` user prompts and markdown answers with a code
  block) to terminal text at 100 columns, as the reprint into the scrollback does. Measured
  alternating ``dark`` and ``light`` after one warm-up pass (pygments' lexers loaded).

Run: ``python -m bench.themes [--runs N] [--files N] [--messages N]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from knightcode._modes.interactive.render.ansi import to_ansi
from knightcode._modes.interactive.render.messages import render_assistant_text, render_user
from knightcode._modes.interactive.render.options import RenderOptions
from knightcode._modes.interactive.render.theme import Theme
from knightcode._themes.build import build_theme
from knightcode._themes.builtin import builtin_path
from knightcode._themes.discovery import ThemeSources, discover_themes
from knightcode._themes.loader import load_theme_file

ANSWER = """## Step {n}

Some **bold** text, `inline code`, and a [link](https://example.com/{n}).

```python
def handler_{n}(request: dict[str, int]) -> int:
    # sum the values
    return sum(value * {n} for value in request.values())
```

- one
- two
"""


def median_ms(work: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


START = """
import time
started = time.perf_counter()
from pathlib import Path
from knightcode._themes.discovery import ThemeSources, discover_themes, select
catalog = discover_themes(ThemeSources(Path("/nonexistent"), Path("/nonexistent")))
select(catalog, "dark")
print((time.perf_counter() - started) * 1000)
"""


def start_ms(runs: int) -> float:
    """Median start-up cost of the themes, each run in a fresh interpreter (rich and the
    render modules imported first, as the app has them already).
    """
    prelude = "import rich.style, rich.theme, knightcode._modes.interactive.render.theme\n"
    samples = [
        float(subprocess.run([sys.executable, "-c", prelude + START], capture_output=True,
                             text=True, check=True).stdout)
        for _ in range(max(5, runs // 3))
    ]  # fmt: skip
    return statistics.median(samples)


def render_all(theme: Theme, messages: int) -> int:
    """The transcript drawn in ``theme``; returns the characters written."""
    options = RenderOptions(width=100, theme=theme)
    written = 0
    for n in range(messages):
        user = render_user({"role": "user", "content": f"question {n}", "timestamp": 0}, options)
        written += len(to_ansi(user, 100))
        written += len(to_ansi(render_assistant_text(ANSWER.format(n=n), options), 100))
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--messages", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        agent_dir = Path(temp) / "agent"
        themes = agent_dir / "themes"
        themes.mkdir(parents=True)
        text = builtin_path("dark").read_text(encoding="utf-8")
        for n in range(args.files):
            (themes / f"t{n}.json").write_text(text.replace('"dark"', f'"t{n}"', 1))
        path = themes / "t0.json"
        load = median_ms(lambda: build_theme(load_theme_file(path)), args.runs)
        sources = ThemeSources(agent_dir, Path(temp))
        found = median_ms(lambda: discover_themes(sources), args.runs)
    print(f"load one theme file (read, validate, build): {load:.2f} ms")
    print(
        f"start-up (import, discover, build dark) in a fresh process: {start_ms(args.runs):.1f} ms"
    )
    print(f"discover {args.files} theme files: {found:.2f} ms")
    dark, light = (build_theme(load_theme_file(builtin_path(n))) for n in ("dark", "light"))
    render_all(dark, 2)  # warm-up: lexers, markdown parser
    samples = []
    for index in range(max(4, args.runs // 5)):
        theme = (dark, light)[index % 2]
        started = time.perf_counter()
        fresh = build_theme(load_theme_file(builtin_path(theme.name)))
        render_all(fresh, args.messages)
        samples.append((time.perf_counter() - started) * 1000)
    median = statistics.median(samples)
    per = median / (2 * args.messages)
    print(
        f"switch theme, {args.messages} prompts + {args.messages} answers redrawn: "
        f"{median:.1f} ms median ({per:.2f} ms per item)"
    )


if __name__ == "__main__":
    main()
