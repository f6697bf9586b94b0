"""Print how often ``Any`` appears in the code, per 1,000 lines, by package.

``Any`` switches the type checker off for whatever it touches, so the count says how much of
the code ``mypy --strict`` actually checks. Counted: every ``Any`` name token (imports and
annotations alike; comments and strings do not count) per 1,000 physical lines of the ``.py``
files under each root.

Run: ``python scripts/any_density.py [--limit 10] [ROOT ...]``; with ``--limit`` the exit status is
1 when a root is above it.
"""

from __future__ import annotations

import argparse
import io
import tokenize
from pathlib import Path

ROOTS = ("core/knightcode", "builtin_plugins/knightcode_builtins", "plugins_examples")


def count(path: Path) -> tuple[int, int]:
    """``(Any tokens, lines)`` of one file."""
    source = path.read_text(encoding="utf-8")
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    anys = sum(1 for token in tokens if token.type == tokenize.NAME and token.string == "Any")
    return anys, source.count("\n")


def density(root: Path) -> tuple[int, int, list[tuple[int, Path]]]:
    """``(Any tokens, lines, per-file counts)`` under ``root``."""
    total_any = total_lines = 0
    files: list[tuple[int, Path]] = []
    for path in sorted(root.rglob("*.py")):
        anys, lines = count(path)
        total_any += anys
        total_lines += lines
        if anys:
            files.append((anys, path))
    return total_any, total_lines, files


def main(argv: list[str] | None = None) -> int:
    """Print the density of each root; the exit status is 1 when one is over ``--limit``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", default=list(ROOTS))
    parser.add_argument("--limit", type=float, help="fail when a root exceeds this density")
    parser.add_argument("--files", action="store_true", help="list the files that use Any")
    args = parser.parse_args(argv)
    repo = Path(__file__).resolve().parent.parent
    failed = False
    for name in args.roots:
        anys, lines, files = density(repo / name)
        per_kloc = anys * 1000 / lines if lines else 0.0
        over = args.limit is not None and per_kloc > args.limit
        failed = failed or over
        mark = "  over the limit" if over else ""
        print(f"{name:40} {anys:5} Any in {lines:6} lines = {per_kloc:5.1f} per 1,000{mark}")
        if args.files:
            for file_anys, path in sorted(files, reverse=True):
                print(f"    {file_anys:4}  {path.relative_to(repo)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
