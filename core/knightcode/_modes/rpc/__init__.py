"""RPC mode (``knightcode --mode rpc``): a long-lived JSONL protocol over stdin and stdout.

Commands arrive on stdin, one JSON object per LF-terminated line; responses, session events and
extension UI requests leave on stdout the same way. ``docs/rpc.md`` is the protocol reference;
:mod:`knightcode.rpc` is the Python client.

Modules: :mod:`.framing` (splitting input into lines), :mod:`.commands` (validation),
:mod:`.server` (dispatch), :mod:`.handlers` and :mod:`.session_handlers` (the commands),
:mod:`.ui` (``ctx.ui`` over RPC), :mod:`.export_html`, :mod:`.runner` (start-up and shutdown).
"""

from __future__ import annotations

from knightcode._modes.rpc.runner import run_rpc_session

__all__ = ["run_rpc_session"]
