"""Keeping stdout for knightcode's own output in the non-interactive modes.

In ``-p``, ``--mode json`` and ``--mode rpc``, stdout carries the answer, the JSONL stream or the
RPC protocol. Anything else a plugin writes there — ``print()`` at import time or in a hook,
``os.write(1, …)``, a child process inheriting file descriptor 1 — would corrupt it. So before
any plugin is imported, :func:`take_stdout` keeps a private duplicate of the real stdout for
knightcode and points descriptor 1 (and with it ``sys.stdout``) at stderr.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import IO

__all__ = ["take_stdout"]


def take_stdout() -> IO[bytes]:
    """A private handle on the real stdout; fd 1 (and ``sys.stdout``) now lead to stderr.

    Without a stdout (file descriptor 1 closed) the handle leads nowhere, as stdout did.
    """
    if sys.stdout is not None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
    try:
        records = os.fdopen(os.dup(1), "wb", buffering=0)
    except OSError:
        return open(os.devnull, "wb", buffering=0)  # lives as long as the run
    with contextlib.suppress(OSError):
        os.dup2(2, 1)
    return records
