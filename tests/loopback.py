"""A loopback HTTP server that answers every request with one status and records the request
paths: a provider refusing a key, a proxy stand-in that refuses to forward.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def answering(status: int, seen: list[str] | None = None) -> Iterator[str]:
    """Serve on 127.0.0.1 until the block ends; yields ``http://127.0.0.1:PORT``."""
    paths = seen if seen is not None else []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            paths.append(self.path)  # absolute-form when the client takes us for a proxy
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
