"""Write ``schemas/theme.schema.json`` from the colour tokens (``knightcode._themes.tokens``).

The schema is generated so it cannot drift from what the loader accepts;
``tests/themes/test_schema.py`` fails when the committed file is stale. Run from the repository
root: ``python -m scripts.theme_schema`` writes it, ``--check`` only says whether it is stale.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from knightcode._themes.schema import theme_schema

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "theme.schema.json"


def rendered() -> str:
    """The schema file's text."""
    return json.dumps(theme_schema(), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the schema, or with ``--check`` compare it (exit 1 when stale)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    args = parser.parse_args(argv)
    text = rendered()
    if args.check:
        current = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else ""
        return 0 if current == text else 1
    SCHEMA_PATH.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
