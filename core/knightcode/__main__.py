"""The ``knightcode`` console script.

``--version`` is answered before anything else is imported, so scripts that probe for knightcode
pay only for the interpreter's start-up.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    """Run knightcode with ``argv`` (default: the process arguments) and exit with its status."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from knightcode._version import __version__

        print(f"knightcode {__version__}")
        return
    from knightcode._cli import run

    sys.exit(run(args))


if __name__ == "__main__":
    main()
