"""Write ``schemas/keybindings.schema.json`` from the action table (``knightcode._keys.actions``).

Run from the repository root: ``python -m scripts.keybindings_schema`` writes the file;
``--check`` only says whether it is stale (exit status 1). ``tests/keys/test_schema.py`` fails
while the committed file differs from what this writes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET = REPO / "schemas" / "keybindings.schema.json"


def render() -> str:
    """The file's text: the schema as indented JSON."""
    from knightcode._keys.schema import keybindings_schema

    return json.dumps(keybindings_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) the schema file; the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    text = render()
    current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else None
    if args.check:
        if current != text:
            print(f"{TARGET.relative_to(REPO)} is stale: run python -m scripts.keybindings_schema")
            return 1
        return 0
    if current != text:
        TARGET.parent.mkdir(parents=True, exist_ok=True)
        TARGET.write_text(text, encoding="utf-8")
        print(f"wrote {TARGET.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
