"""A real loopback web site for the web_fetch tests: a stdlib HTTP server in a thread.

Routes cover what web_fetch must handle: a page with navigation and footer boilerplate,
redirects (to loopback, a loop, a chain), a 50 MB body, binary, image and PDF bodies, JSON, a
long text, a slow and a trickling server. Every request's headers are recorded.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PAGES = Path(__file__).parent
BIG_BYTES = 50 * 1024 * 1024
LONG_TEXT = "".join(f"line {n:06d} of the long document\n" for n in range(20_000))


def tiny_pdf(text: str) -> bytes:
    """A one-page PDF showing ``text``, built by hand with a correct xref table."""
    stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
    b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00"
    b"\x00\x00IEND\xaeB`\x82"
)


@dataclass
class Site:
    """The running server: its port and the headers of every request, by path."""

    port: int
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _redirect(self, location: str, status: int = 302) -> None:
            self.send_response(status)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            site.requests.append((self.path, dict(self.headers.items())))
            path = self.path.split("?", 1)[0]
            # the client may stop reading (the size cap, a timeout)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._route(path)

        def _route(self, path: str) -> None:
            if path == "/docs/frob":
                html = (PAGES / "boilerplate.html").read_bytes()
                self._send(200, html, "text/html; charset=utf-8")
            elif path == "/to-loopback":
                self._redirect(f"http://127.0.0.1:{site.port}/docs/frob")
            elif path == "/to-metadata":
                self._redirect("http://169.254.169.254/latest/meta-data/")
            elif path == "/loop-a":
                self._redirect("/loop-b")
            elif path == "/loop-b":
                self._redirect("/loop-a", 301)
            elif path.startswith("/chain/"):
                left = int(path.rsplit("/", 1)[1])
                if left == 0:
                    self._send(200, b"end of the chain", "text/plain")
                else:
                    self._redirect(f"/chain/{left - 1}", 307)
            elif path == "/big":
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(BIG_BYTES))
                self.end_headers()
                chunk = b"x" * 1023 + b"\n"
                for _ in range(BIG_BYTES // len(chunk)):
                    self.wfile.write(chunk)
            elif path == "/binary":
                self._send(200, bytes(range(256)) * 64, "application/octet-stream")
            elif path == "/image.png":
                self._send(200, PNG, "image/png")
            elif path == "/doc.pdf":
                self._send(200, tiny_pdf("Hello from the PDF body"), "application/pdf")
            elif path == "/data.json":
                self._send(200, b'{"answer": 42, "items": [1, 2]}', "application/json")
            elif path == "/long.txt":
                self._send(200, LONG_TEXT.encode(), "text/plain; charset=utf-8")
            elif path == "/missing":
                self._send(404, b"<html><body><p>No such page</p></body></html>", "text/html")
            elif path == "/slow":
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", "100")
                self.end_headers()
                self.wfile.flush()
                time.sleep(3)
                self.wfile.write(b"x" * 100)
            elif path == "/trickle":
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", "100")
                self.end_headers()
                for _ in range(100):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.1)
            else:
                self._send(404, b"not found", "text/plain")

    return Handler


@contextmanager
def serve() -> Iterator[Site]:
    """Run the site on 127.0.0.1 (a free port) for the ``with`` block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(Site(0)))
    site = Site(server.server_address[1])
    server.RequestHandlerClass = _handler(site)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
