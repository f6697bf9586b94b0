"""A plugin that writes to stdout every way a plugin can: ``print()`` at import time and in a
hook, ``os.write(1, …)``, and a child process inheriting file descriptor 1. In ``-p``,
``--mode json`` and ``--mode rpc`` all of it must land on stderr (:data:`NOISE` lists the texts).
"""

from __future__ import annotations

__all__ = ["NOISE", "NOISY"]

NOISY = """
import os, subprocess, sys
from knightcode import hookimpl

print("import-print")
os.write(1, b"import-fd1\\n")

@hookimpl
def agent_start(ctx):
    print("hook-print")
    sys.stdout.flush()
    os.write(1, b"hook-fd1\\n")
    subprocess.run(["echo", "child-stdout"], check=True)
"""

NOISE = ("import-print", "import-fd1", "hook-print", "hook-fd1", "child-stdout")
