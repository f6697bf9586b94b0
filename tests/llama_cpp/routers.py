"""The real llama-server routers and the tiny models they serve, started once per test session.

A pytest plugin (listed in ``pytest_plugins`` of ``tests/conftest.py``), not a conftest: the
interactive UI's end-to-end tests use the same routers as ``tests/llama_cpp``, and a fixture
defined once here is started once per session wherever it is requested.

Routers (each on a free loopback port, stopped at the end of the session):

* ``router`` — the main one: ``--no-models-autoload``, API key :data:`KEY`, the three tiny
  models, a corrupt ``broken.gguf``, and two presets: ``tiny-small-ctx`` (``ctx-size 64``) and
  ``tiny-bad-lora`` (a missing LoRA file: the load fails although the model file is fine);
* ``autoload_router`` — autoload on, no key, models sleep after 1 s idle;
* ``single_server`` — a plain ``llama-server -m`` (not router mode);
* ``systemone_router`` — the current llama.cpp build, for ``/v1/systemone``.

Tests that change which models are loaded on a shared router start with ``router.ensure(...)``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .servers import LlamaServer, fast_binary, systemone_binary

KEY = "sekret"
# Greedy sampling by default (knightcode sends no temperature), so the tiny models' replies are
# exact; one thread per model process leaves the second core to the tests.
DETERMINISTIC = ["--temp", "0", "-t", "1"]
PRESETS = """version = 1

[tiny-small-ctx]
model = {models}/tiny-chat.gguf
ctx-size = 64

[tiny-bad-lora]
model = {models}/tiny-chat.gguf
lora = {models}/no-such-lora.gguf
"""


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny models (see ``make_tiny_gguf.py``) and a corrupt file."""
    from .make_tiny_gguf import write_model

    out = tmp_path_factory.mktemp("llama-models")
    for variant in ("chat", "tools", "decision", "split"):
        write_model(str(out / f"tiny-{variant}.gguf"), variant)
    (out / "broken.gguf").write_bytes(b"this is not a GGUF file\n" * 64)
    return out


def _start(
    tmp: Path, name: str, binary: Path, args: list[str], key: str | None = None
) -> LlamaServer:
    return LlamaServer(binary, args, tmp / f"{name}.log", api_key=key).start()


@pytest.fixture(scope="session")
def router(models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    tmp = tmp_path_factory.mktemp("router")
    presets = tmp / "presets.ini"
    presets.write_text(PRESETS.format(models=models_dir))
    args = [
        "--models-dir",
        str(models_dir),
        "--models-preset",
        str(presets),
        "--no-models-autoload",
        "--api-key",
        KEY,
        *DETERMINISTIC,
    ]
    server = _start(tmp, "router", fast_binary(), args, KEY)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def autoload_router(
    models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LlamaServer]:
    tmp = tmp_path_factory.mktemp("autoload")
    args = ["--models-dir", str(models_dir), "--sleep-idle-seconds", "1", *DETERMINISTIC]
    server = _start(tmp, "autoload", fast_binary(), args)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def single_server(
    models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LlamaServer]:
    tmp = tmp_path_factory.mktemp("single")
    server = _start(
        tmp, "single", fast_binary(), ["-m", str(models_dir / "tiny-chat.gguf"), *DETERMINISTIC]
    )
    yield server
    server.stop()


@pytest.fixture(scope="session")
def systemone_router(
    models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LlamaServer]:
    binary = systemone_binary()
    if binary is None:
        message = "no llama-server with /v1/systemone (built by .ci/run; see docs/llama-cpp.md)"
        if os.environ.get("KNIGHTCODE_REQUIRE_SYSTEMONE") == "1":
            pytest.fail(message)
        pytest.skip(message)
    tmp = tmp_path_factory.mktemp("systemone")
    args = [
        "--models-dir",
        str(models_dir),
        "--no-models-autoload",
        "--api-key",
        KEY,
        *DETERMINISTIC,
    ]
    server = _start(tmp, "systemone", binary, args, KEY)
    server.ensure({"tiny-decision", "tiny-chat"})
    yield server
    server.stop()
