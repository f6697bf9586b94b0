"""Appending audit records as JSON lines, one ``write`` per record so lines never interleave."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


class AuditWriter:
    """Appends JSON records to a file readable only by its owner (tool calls can be private)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, record: dict[str, object]) -> None:
        """Append ``record`` (with the time) as one line."""
        line = json.dumps({"time": round(time.time(), 3), **record}, ensure_ascii=False) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
