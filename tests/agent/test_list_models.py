"""``--list-models [SEARCH]``: the usable models as the reference's table (plus prices), fuzzy
search, sorted; no session, no model call; a discovering provider that does not answer is
waited for only briefly.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from knightcode._cli.list_models import DISCOVERY_LIMIT, format_tokens
from tests.agent.conftest import MODEL, PROVIDER, Scripted

LOCAL_ONLY = {"KNIGHTCODE_LOAD_PLUGINS": ""}
"""No built-in plugins: the llama.cpp provider (which asks a router) stays out of the way."""


def _add_models(scripted: Scripted) -> None:
    path = scripted.agent_dir / "models.json"
    config = json.loads(path.read_text())
    config["providers"][PROVIDER]["models"].append(
        {
            "id": "big-vision",
            "reasoning": True,
            "input": ["text", "image"],
            "contextWindow": 1_048_576,
            "maxTokens": 65536,
            "cost": {"input": 1.25, "output": 10},
        }
    )
    config["providers"]["another"] = {
        "baseUrl": scripted.server.base_url,
        "api": "openai-completions",
        "models": [{"id": "aardvark-7b", "contextWindow": 8192, "maxTokens": 512}],
    }
    path.write_text(json.dumps(config))


def _rows(stdout: str) -> list[list[str]]:
    return [line.split() for line in stdout.splitlines()]


def test_the_table_lists_usable_models_sorted(scripted: Scripted) -> None:
    _add_models(scripted)
    result = scripted.run("--list-models", **LOCAL_ONLY)
    assert result.returncode == 0, result.stderr
    header, *rows = _rows(result.stdout)
    assert header == [
        "provider",
        "model",
        "context",
        "max-out",
        "thinking",
        "images",
        "cost-in",
        "cost-out",
    ]
    assert rows == [
        ["another", "aardvark-7b", "8.2K", "512", "no", "no", "-", "-"],
        [PROVIDER, "big-vision", "1.0M", "65.5K", "yes", "yes", "1.25", "10"],
        [PROVIDER, MODEL, "32K", "4.1K", "no", "no", "-", "-"],
    ]
    # Columns line up: every row's second column starts where the header's does.
    starts = {line.index(line.split()[1]) for line in result.stdout.splitlines()}
    assert len(starts) == 1
    assert scripted.server.requests == [] and scripted.session_files() == []


def test_a_search_narrows_the_table_fuzzily(scripted: Scripted) -> None:
    _add_models(scripted)
    result = scripted.run("--list-models", "bgvis", **LOCAL_ONLY)
    assert result.returncode == 0, result.stderr
    assert [row[:2] for row in _rows(result.stdout)[1:]] == [[PROVIDER, "big-vision"]]
    # Every word must match, over "provider id".
    result = scripted.run("--list-models", "another 7b", **LOCAL_ONLY)
    assert [row[1] for row in _rows(result.stdout)[1:]] == ["aardvark-7b"]


def test_no_match_says_so(scripted: Scripted) -> None:
    result = scripted.run("--list-models", "zzz-nothing", **LOCAL_ONLY)
    assert (result.returncode, result.stdout) == (0, 'No models matching "zzz-nothing"\n')


def test_without_any_usable_model_it_says_how_to_get_one(scripted: Scripted) -> None:
    (scripted.agent_dir / "models.json").unlink()
    result = scripted.run("--list-models", **LOCAL_ONLY)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("No models available: set an API key")


def test_a_key_from_the_environment_makes_a_builtin_provider_usable(scripted: Scripted) -> None:
    result = scripted.run("--list-models", "openai", **LOCAL_ONLY, OPENAI_API_KEY="sk-x")
    providers = {row[0] for row in _rows(result.stdout)[1:]}
    assert providers == {"openai"}
    assert "sk-x" not in result.stdout + result.stderr


def test_with_print_mode_the_table_still_reaches_stdout(scripted: Scripted) -> None:
    result = scripted.run("-p", "--list-models", MODEL, **LOCAL_ONLY)
    assert result.returncode == 0, result.stderr
    assert _rows(result.stdout)[1][:2] == [PROVIDER, MODEL]
    assert scripted.server.requests == []


@pytest.fixture
def silent_router() -> Iterator[str]:
    """A TCP server that accepts connections and never answers (a hung llama.cpp router)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    server.close()


def test_a_silent_discovering_provider_is_waited_for_briefly(
    scripted: Scripted, silent_router: str
) -> None:
    started = time.monotonic()
    result = scripted.run(
        "--list-models", KNIGHTCODE_LOAD_PLUGINS="builtin:llama.cpp", LLAMA_BASE_URL=silent_router
    )
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert _rows(result.stdout)[1][:2] == [PROVIDER, MODEL]
    assert "llama.cpp did not list its models within 2 s" in result.stderr
    assert "Traceback" not in result.stderr
    assert elapsed < DISCOVERY_LIMIT + 8  # the interpreter's start-up on a busy machine aside


def test_token_counts_read_like_the_reference() -> None:
    assert [format_tokens(n) for n in (512, 8192, 200_000, 1_000_000, 1_048_576)] == [
        "512",
        "8.2K",
        "200K",
        "1M",
        "1.0M",
    ]
