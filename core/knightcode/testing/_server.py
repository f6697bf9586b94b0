"""The scripted server: a real HTTP/1.1 server on 127.0.0.1 that replays queued replies.

Each handled connection runs in its own daemon thread (``ThreadingHTTPServer``), connections
are kept alive between requests, and streamed bodies use ``Transfer-Encoding: chunked`` (or, with
``framing="close"``, are delimited by closing the connection, as some servers do).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Literal, Self

from knightcode.testing import _bedrock_wire as bedrock, _gemini_wire as gemini, _render as render
from knightcode.testing._replies import Reply
from knightcode.testing._responses_wire import render_responses

__all__ = ["ScriptedRequest", "ScriptedServer"]


@dataclass(frozen=True)
class ScriptedRequest:
    """One request the server received.

    :param method: ``"GET"`` or ``"POST"``
    :param path: the request path, e.g. ``/v1/chat/completions``
    :param headers: request headers, names lower-cased
    :param body: the parsed JSON body (None when there was none or it was not JSON); a model
        request's is an object, e.g. ``body["messages"]``
    :param raw: the body bytes
    :param received_at: ``time.perf_counter()`` when the body had been read, before it was parsed
        (benchmarks measure a client up to here, not the server's JSON parsing)
    """

    method: str
    path: str
    headers: dict[str, str]
    body: object
    raw: bytes
    received_at: float = field(default=0.0, compare=False)


class ScriptedServer:
    """A real HTTP server that answers model API requests from a script.

    ::

        with ScriptedServer() as server:
            server.add(text_reply("Hello", " world"))
            ...  # point a client at server.base_url
            assert server.requests[0].body["stream"] is True

    :param models: model ids listed by ``GET /v1/models``
    :param framing: ``"chunked"`` (default) or ``"close"``: streamed bodies end by closing the
        connection instead of a final chunk
    """

    def __init__(
        self,
        models: Iterable[str] = ("scripted-model",),
        framing: Literal["chunked", "close"] = "chunked",
    ) -> None:
        self.models = tuple(models)
        self.framing = framing
        self._lock = threading.Condition()
        self._replies: deque[Reply] = deque()
        self._requests: list[ScriptedRequest] = []
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._serial = 0
        self._port: int | None = None

    # --- lifecycle ---

    def start(self) -> Self:
        """Listen on a free port of 127.0.0.1 and serve in a background thread."""
        if self._httpd is not None:
            return self
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._port = int(httpd.server_address[1])
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and cut every open connection (handler threads then end)."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The TCP port (kept after :meth:`stop`, so tests can check a refused connection)."""
        if self._port is None:
            raise RuntimeError("the scripted server was never started; call start() first")
        return self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``, the base URL to configure a provider with."""
        return f"http://127.0.0.1:{self.port}/v1"

    # --- the script ---

    def add(self, *replies: Reply) -> Self:
        """Queue replies; each model request consumes the next one."""
        with self._lock:
            self._replies.extend(replies)
        return self

    @property
    def pending(self) -> int:
        """How many queued replies no request has consumed yet."""
        with self._lock:
            return len(self._replies)

    @property
    def requests(self) -> list[ScriptedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[ScriptedRequest]:
        """Block until at least ``count`` requests arrived; :class:`TimeoutError` otherwise."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self._requests) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"{len(self._requests)} of {count} requests arrived within {timeout} s"
                    )
                self._lock.wait(remaining)
            return list(self._requests)

    # --- used by the handler threads ---

    def _record(self, request: ScriptedRequest) -> None:
        with self._lock:
            self._requests.append(request)
            self._lock.notify_all()

    def _next(self) -> tuple[Reply | None, int, int]:
        with self._lock:
            self._serial += 1
            number = len(self._requests)
            return (self._replies.popleft() if self._replies else None), self._serial, number

    def _track(self, connection: socket.socket, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: ScriptedServer


class _Dropped(Exception):
    """The script asked to cut the connection."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive; every response has a length or chunked framing
    disable_nagle_algorithm = True  # small SSE events must not wait for delayed ACKs
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.owner._track(self.connection, False)

    def log_message(self, format: str, *args: object) -> None:
        pass  # tests read server.requests; stderr stays quiet

    def do_GET(self) -> None:
        request = self._read_request()
        if request.path.rstrip("/").endswith("/models"):
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "scripted"}
                for m in self.server.owner.models
            ]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(
                404,
                {
                    "error": {
                        "message": f"no such endpoint: GET {request.path}",
                        "type": "not_found",
                    }
                },
            )

    def do_POST(self) -> None:
        request = self._read_request()
        path = request.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/chat/completions"):
            dialect = "openai"
        elif path.endswith("/messages"):
            dialect = "anthropic"
        elif path.endswith("/responses"):  # OpenAI Responses API, Azure OpenAI
            dialect = "responses"
        elif gemini.is_gemini_path(path):
            dialect = "gemini"
        elif bedrock.is_bedrock_path(path):
            dialect = "bedrock"
        else:
            self._send_json(
                404,
                {
                    "error": {
                        "message": f"no such endpoint: POST {request.path}",
                        "type": "not_found",
                    }
                },
            )
            return
        owner = self.server.owner
        reply, serial, number = owner._next()
        if reply is None:
            message = (
                f"ScriptedServer: the script ran out: request #{number} "
                f"({request.method} {request.path}) "
                f"has no reply; queue more with server.add()"
            )
            self._send_json(500, {"error": {"message": message, "type": "script_exhausted"}})
            return
        body = request.body if isinstance(request.body, dict) else {}
        model = str(body.get("model") or (owner.models[0] if owner.models else "scripted-model"))
        try:
            self._answer(reply, dialect, body, serial, model)
        except _Dropped:
            self._cut()
        except OSError:
            # The client went away (an abort, a timeout) or stop() cut the connection.
            self.close_connection = True

    # --- helpers ---

    def _read_request(self) -> ScriptedRequest:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        received_at = time.perf_counter()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = ScriptedRequest(self.command, self.path, headers, body, raw, received_at)
        self.server.owner._record(request)
        return request

    def _send_json(
        self, status: int, data: object, headers: Mapping[str, str] | None = None
    ) -> None:
        self._send_body(status, json.dumps(data).encode("utf-8"), "application/json", headers)

    def _send_body(
        self, status: int, body: bytes, content_type: str, headers: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _answer(
        self, reply: Reply, dialect: str, body: Mapping[str, object], serial: int, model: str
    ) -> None:
        if reply.raw is not None:
            self._send_body(reply.status, reply.raw, reply.content_type, reply.headers)
            return
        if dialect == "responses":
            rendered = render_responses(reply, body, serial, model)
            if isinstance(rendered, list):
                self._stream(reply, rendered)
            else:
                self._send_body(*rendered, reply.headers)
            return
        if dialect in ("gemini", "bedrock"):
            self._answer_streamed(reply, dialect, serial)
            return
        if reply.status >= 400:
            error = (
                render.openai_error_body(reply)
                if dialect == "openai"
                else render.anthropic_error_body(reply)
            )
            self._send_body(reply.status, error, "application/json", reply.headers)
            return
        if not body.get("stream"):
            if reply.drop_after is not None:
                raise _Dropped
            data = (
                render.openai_json(reply, serial, model)
                if dialect == "openai"
                else render.anthropic_json(reply, serial, model)
            )
            self._send_body(200, data, "application/json", reply.headers)
            return
        if dialect == "openai":
            events = render.openai_events(reply, body, serial, model)
        else:
            events = render.anthropic_events(reply, serial, model)
        self._stream(reply, events)

    def _answer_streamed(self, reply: Reply, dialect: str, serial: int) -> None:
        """Gemini and Bedrock: always streamed (the endpoint says so, not the body)."""
        if reply.status >= 400:
            if dialect == "gemini":
                error, headers = gemini.error_body(reply), dict(reply.headers)
            else:
                error, extra = bedrock.error_body(reply)
                headers = {**extra, **reply.headers}
            self._send_body(reply.status, error, "application/json", headers)
        elif dialect == "gemini":
            self._stream(reply, gemini.events(reply, serial))
        else:
            self._stream(reply, bedrock.events(reply, serial), bedrock.CONTENT_TYPE)

    def _stream(
        self, reply: Reply, events: list[bytes], content_type: str = "text/event-stream"
    ) -> None:
        chunked = self.server.owner.framing == "chunked"
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        write = self.wfile.write
        for count, event in enumerate(events):
            if reply.drop_after is not None and count >= reply.drop_after:
                raise _Dropped
            if reply.delay:
                time.sleep(reply.delay)
            write(b"%x\r\n%s\r\n" % (len(event), event) if chunked else event)
        if chunked:
            write(b"0\r\n\r\n")

    def _cut(self) -> None:
        """Close the socket at once: no final chunk, the client sees a broken stream."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
