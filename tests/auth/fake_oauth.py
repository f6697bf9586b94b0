"""A fake authorization server: a real HTTP server on 127.0.0.1 playing Anthropic's, OpenAI's
and GitHub's login endpoints (and Copilot's chat endpoint), reached through
``KNIGHTCODE_OAUTH_TEST_BASE`` (``<base>/<host>/<path>``).

It checks what a real server checks (client id, PKCE verifier against the challenge, redirect
URI, state, single-use codes, rotating refresh tokens) and records what it was asked.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

ANTHROPIC_CLIENT = base64.b64decode("OWQxYzI1MGEtZTYxYi00NGQ5LTg4ZWQtNTk0NGQxOTYyZjVl").decode()
CODEX_CLIENT = "app_EMoamEEZ73f0CkXaXp7hrann"
ACCOUNT_ID = "acct-fake-1"


def jwt(claims: dict[str, Any]) -> str:
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none'})}.{part(claims)}.sig"


@dataclass
class _Grant:
    challenge: str
    redirect_uri: str
    state: str


@dataclass
class FakeAuthServer:
    """Start with ``with FakeAuthServer() as fake:``; ``fake.base`` is the test base URL."""

    expires_in: int = 3600
    refreshes: list[str] = field(default_factory=list)
    chat_requests: list[dict[str, Any]] = field(default_factory=list)
    rejected_tokens: set[str] = field(default_factory=set)
    valid_refresh: set[str] = field(default_factory=set)
    approved: set[str] = field(default_factory=set)
    enabled: list[str] = field(default_factory=list)
    _grants: dict[str, _Grant] = field(default_factory=dict)
    _counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __enter__(self) -> FakeAuthServer:
        fake = self

        class Handler(_Handler):
            owner = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def next(self) -> int:
        with self._lock:
            return next(self._counter)

    def tokens(self, access_prefix: str, refresh_prefix: str, **claims: Any) -> dict[str, Any]:
        n = self.next()
        access = f"{access_prefix}{n}"
        if claims:
            access = jwt({**claims, "n": n})
        refresh = f"{refresh_prefix}{n}"
        self.valid_refresh.add(refresh)
        return {"access_token": access, "refresh_token": refresh, "expires_in": self.expires_in}


class _Handler(BaseHTTPRequestHandler):
    owner: FakeAuthServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _json(self, status: int, data: dict[str, Any]) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> dict[str, Any]:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        if "json" in (self.headers.get("content-type") or ""):
            data: dict[str, Any] = json.loads(raw)
            return data
        return {key: values[0] for key, values in parse_qs(raw.decode()).items()}

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        if url.path in ("/claude.ai/oauth/authorize", "/auth.openai.com/oauth/authorize"):
            self._authorize(url.path, query)
        elif url.path == "/github.com/login/device":
            self.owner.approved.add(query["user_code"])
            self._json(200, {"approved": True})
        elif url.path == "/api.github.com/copilot_internal/v2/token":
            github = (self.headers.get("authorization") or "").removeprefix("Bearer ")
            if github not in self.owner.valid_refresh:
                self._json(401, {"message": "Bad credentials"})
                return
            self.owner.refreshes.append("copilot")
            n = self.owner.next()
            token = f"tid={n};exp=1;proxy-ep=proxy.individual.githubcopilot.com;"
            expires_at = int(time.time()) + self.owner.expires_in
            self._json(200, {"token": token, "expires_at": expires_at})
        else:
            self._json(404, {"error": "not_found"})

    def _authorize(self, path: str, query: dict[str, str]) -> None:
        client = ANTHROPIC_CLIENT if path.startswith("/claude.ai") else CODEX_CLIENT
        if query.get("client_id") != client or query.get("code_challenge_method") != "S256":
            self._json(400, {"error": "invalid_request"})
            return
        code = f"code-{self.owner.next()}"
        self.owner._grants[code] = _Grant(
            query["code_challenge"], query["redirect_uri"], query["state"]
        )
        location = f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query['state']})}"
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        body = self._body()
        if path == "/platform.claude.com/v1/oauth/token":
            self._token(body, ANTHROPIC_CLIENT, anthropic=True)
        elif path == "/auth.openai.com/oauth/token":
            self._token(body, CODEX_CLIENT, anthropic=False)
        elif path == "/github.com/login/device/code":
            n = self.owner.next()
            self._json(
                200,
                {
                    "device_code": f"dev-{n}",
                    "user_code": f"ABCD-{n:04d}",
                    "verification_uri": f"{self.owner.base}/github.com/login/device",
                    "interval": 0,
                    "expires_in": 60,
                },
            )
        elif path == "/github.com/login/oauth/access_token":
            user_code = "ABCD-" + body["device_code"].removeprefix("dev-").zfill(4)
            if user_code not in self.owner.approved:
                self._json(200, {"error": "authorization_pending"})
                return
            token = f"gho_fake{self.owner.next()}"
            self.owner.valid_refresh.add(token)
            self._json(200, {"access_token": token, "token_type": "bearer"})
        elif path.endswith("/chat/completions"):
            self._chat(body)
        elif path == "/api.individual.githubcopilot.com/v1/messages":
            self._messages(body)
        elif path.startswith("/api.individual.githubcopilot.com/models/"):
            token = (self.headers.get("authorization") or "").removeprefix("Bearer ")
            ok = token.startswith("tid=") and body == {"state": "enabled"}
            if ok:
                self.owner.enabled.append(path.split("/")[3])
            self._json(200 if ok else 401, {})
        else:
            self._json(404, {"error": "not_found"})

    def _token(self, body: dict[str, Any], client: str, anthropic: bool) -> None:
        if body.get("client_id") != client:
            self._json(401, {"error": "invalid_client"})
            return
        if body.get("grant_type") == "refresh_token":
            refresh = body.get("refresh_token", "")
            with self.owner._lock:
                valid = refresh in self.owner.valid_refresh
                self.owner.valid_refresh.discard(refresh)  # rotating: single use
            if not valid:
                self._json(
                    400, {"error": "invalid_grant", "error_description": "refresh token revoked"}
                )
                return
            self.owner.refreshes.append(refresh)
        else:
            grant = self.owner._grants.pop(body.get("code", ""), None)
            verifier = body.get("code_verifier", "")
            digest = hashlib.sha256(verifier.encode()).digest()
            challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            if (
                grant is None
                or grant.challenge != challenge
                or grant.redirect_uri != body.get("redirect_uri")
                or (anthropic and grant.state != body.get("state"))
            ):
                self._json(400, {"error": "invalid_grant"})
                return
        if anthropic:
            self._json(200, self.owner.tokens("sk-ant-oat01-fake", "sk-ant-ort01-fake"))
        else:
            claims = {"https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT_ID}}
            self._json(200, self.owner.tokens("", "rt-fake", **claims))

    def _chat(self, body: dict[str, Any]) -> None:
        token = (self.headers.get("authorization") or "").removeprefix("Bearer ")
        self.owner.chat_requests.append(
            {"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
        )
        if token in self.owner.rejected_tokens or not token.startswith("tid="):
            self._json(401, {"error": {"message": "unauthorized"}})
            return
        chunks = [
            {"choices": [{"index": 0, "delta": {"content": "hi from copilot"}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        payload = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
        payload += b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _messages(self, body: dict[str, Any]) -> None:
        """Copilot's Anthropic endpoint: one text answer."""
        token = (self.headers.get("authorization") or "").removeprefix("Bearer ")
        self.owner.chat_requests.append(
            {"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
        )
        if not token.startswith("tid="):
            self._json(401, {"type": "error", "error": {"message": "unauthorized"}})
            return
        events = [
            {"type": "message_start", "message": {"id": "m1", "usage": {"input_tokens": 3}}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "claude via copilot"},
            },
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
            {"type": "message_stop"},
        ]
        payload = b"".join(
            f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events
        )
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
