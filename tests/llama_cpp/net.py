"""Network stand-ins around the real router: a TCP proxy that can drop the line, and a local
HTTP server answering like the Hugging Face Hub's JSON API (the real Hub is unreachable here).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


class CuttableProxy:
    """Forwards 127.0.0.1:<port> to the router until :meth:`cut`, which drops every open
    connection and every new one (the client sees the router disconnect) until :meth:`restore`.

    :meth:`hold` keeps every byte back, in both directions, until :meth:`release`: the client
    waits as on a router that is slow to answer (how a test keeps a tiny model's 20 ms load
    "in progress" for as long as a dialog needs).
    """

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.down = False
        self._open: set[socket.socket] = set()
        self._flowing = threading.Event()
        self._flowing.set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self.down:
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                self._flowing.wait()
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                self._close(sock)

    def _close(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)
        with contextlib.suppress(OSError):  # the peer may have closed it already
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()

    def cut(self) -> None:
        self.down = True
        with self._lock:
            live = list(self._open)
        for sock in live:
            self._close(sock)

    def restore(self) -> None:
        self.down = False

    def hold(self) -> None:
        self._flowing.clear()

    def release(self) -> None:
        self._flowing.set()

    def close(self) -> None:
        self.release()
        self.cut()
        self._listener.close()


@dataclass
class HubRepo:
    id: str
    files: list[str]
    gated: bool | str = False
    downloads: int = 0


class FakeHub:
    """``GET /api/models?search=`` and ``GET /api/models/<owner>/<repo>``, like the Hub answers
    them, over real HTTP; ``requests`` records (path, query, authorization header)."""

    def __init__(self, repos: list[HubRepo]) -> None:
        self.repos = {repo.id: repo for repo in repos}
        self.requests: list[tuple[str, dict[str, list[str]], str | None]] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = parse_qs(parts.query)
                hub.requests.append((parts.path, query, self.headers.get("authorization")))
                status, body = hub.answer(parts.path, query)
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        if path == "/api/models":
            needle = query.get("search", [""])[0].lower()
            found = [r for r in self.repos.values() if needle in r.id.lower()]
            found.sort(key=lambda r: -r.downloads)
            return 200, [
                {"id": r.id, "downloads": r.downloads, "likes": 1, "tags": ["gguf"]} for r in found
            ]
        repo = self.repos.get(path.removeprefix("/api/models/"))
        if repo is None:
            return 404, {"error": "Repository not found"}
        return 200, {
            "id": repo.id,
            "gated": repo.gated,
            "downloads": repo.downloads,
            "siblings": [{"rfilename": name} for name in repo.files],
        }

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
