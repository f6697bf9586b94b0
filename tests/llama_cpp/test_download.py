"""``/llama`` → Download model…: Hugging Face search, quantizations and gated warnings against a
local server answering like the Hub; the download request goes to the real router (which has no
network here, so it reports the download as failed)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from knightcode_builtins.llama_cpp.command import DOWNLOAD
from knightcode_builtins.llama_cpp.hub import find_token, parse_exact, quantizations

from .conftest import KEY, Harness
from .net import FakeHub, HubRepo
from .scripted_ui import WAIT, ScriptedUI, confirm, select, text
from .servers import LlamaServer, free_port

REPOS = [
    HubRepo(
        "ggml-org/gemma-3-1b-it-GGUF",
        [
            "README.md",
            "gemma-3-1b-it-Q4_K_M.gguf",
            "gemma-3-1b-it-Q8_0.gguf",
            "mmproj-model-f16.gguf",
        ],
        downloads=900,
    ),
    HubRepo(
        "unsloth/gemma-3-27b-it-GGUF",
        [
            "Q4_K_M/gemma-3-27b-it-Q4_K_M-00001-of-00002.gguf",
            "Q4_K_M/gemma-3-27b-it-Q4_K_M-00002-of-00002.gguf",
        ],
        downloads=500,
    ),
    HubRepo(
        "google/gemma-3-secret-GGUF", ["gemma-secret-Q4_0.gguf"], gated="manual", downloads=100
    ),
]


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    server = FakeHub(REPOS)
    yield server
    server.close()


def test_quantizations_from_file_names() -> None:
    assert quantizations(REPOS[0].files) == ["Q4_K_M", "Q8_0"]  # projector file left out
    assert quantizations(REPOS[1].files) == ["Q4_K_M"]  # shards count once
    assert quantizations(["m-UD-IQ2_XXS.gguf", "m.BF16.gguf", "notes.txt"]) == [
        "BF16",
        "UD-IQ2_XXS",
    ]
    assert parse_exact("ggml-org/gemma-3-1b-it-GGUF:Q8_0") == (
        "ggml-org/gemma-3-1b-it-GGUF",
        "Q8_0",
    )
    assert parse_exact("owner/repo") == ("owner/repo", None)
    assert parse_exact("gemma 3") is None


def test_token_lookup_order(tmp_path: Path) -> None:
    def token_file(name: str, value: str) -> str:
        path = tmp_path / name / "token"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
        return str(path)

    home = tmp_path / "home"
    default = token_file("home/.cache/huggingface", "from-default")
    xdg = token_file("xdg/huggingface", "from-xdg")
    hf_home = token_file("hf-home", "from-hf-home")
    explicit = token_file("explicit", "from-token-path")
    env = {"HOME": str(home)}
    assert default and find_token(env) == "from-default"
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    assert xdg and find_token(env) == "from-xdg"
    env["HF_HOME"] = str(Path(hf_home).parent)
    assert find_token(env) == "from-hf-home"
    env["HF_TOKEN_PATH"] = explicit
    assert find_token(env) == "from-token-path"
    env["HF_TOKEN"] = "from-env"
    assert find_token(env) == "from-env"
    assert find_token({"HOME": str(tmp_path / "nobody")}) is None  # works without auth


async def test_search_pick_quant_and_download(
    router: LlamaServer, hub: FakeHub, make_harness: Callable[..., Harness]
) -> None:
    ui = ScriptedUI(
        select(DOWNLOAD),
        text("gemma"),
        select("ggml-org/gemma-3-1b-it-GGUF"),
        select("Q8_0"),
        select(WAIT),
    )
    await make_harness(router.url, KEY, ui, HF_ENDPOINT=hub.url, HF_TOKEN="hf_test").llama()
    search = [q for path, q, _ in hub.requests if path == "/api/models"]
    assert search and search[0]["search"] == ["gemma"] and search[0]["filter"] == ["gguf"]
    assert all(auth == "Bearer hf_test" for _, _, auth in hub.requests)
    repos = ui.dialogs[2]
    assert (
        repos.options[0] == "ggml-org/gemma-3-1b-it-GGUF (900 downloads)"
    )  # most downloaded first
    assert "google/gemma-3-secret-GGUF (100 downloads)" in repos.options
    assert ui.dialogs[3].options == ["Q4_K_M", "Q8_0"]
    assert ui.dialogs[4].title == "Downloading ggml-org/gemma-3-1b-it-GGUF:Q8_0…"
    # The router was asked; without network it cannot fetch the file and says nothing more.
    error = ui.notes("error")
    assert "The router could not download ggml-org/gemma-3-1b-it-GGUF:Q8_0" in error
    assert "HF_TOKEN" in error


async def test_gated_repository_warns_with_its_access_page(
    router: LlamaServer, hub: FakeHub, make_harness: Callable[..., Harness]
) -> None:
    ui = ScriptedUI(
        select(DOWNLOAD), text("secret"), select("google/gemma-3-secret-GGUF"), confirm(False)
    )
    await make_harness(router.url, KEY, ui, HF_ENDPOINT=hub.url).llama()
    warning = ui.dialogs[-1]
    assert warning.kind == "confirm" and warning.title == "google/gemma-3-secret-GGUF is gated"
    assert f"{hub.url}/google/gemma-3-secret-GGUF" in warning.message
    assert all(auth is None for _, _, auth in hub.requests)  # no token anywhere: still works
    assert not ui.answers and ui.notes() == ""  # declined: nothing downloaded


async def test_exact_name_skips_the_search(
    router: LlamaServer, hub: FakeHub, make_harness: Callable[..., Harness]
) -> None:
    ui = ScriptedUI(select(DOWNLOAD), text("unsloth/gemma-3-27b-it-GGUF:q4_k_m"), select(WAIT))
    await make_harness(router.url, KEY, ui, HF_ENDPOINT=hub.url).llama()
    assert [path for path, _, _ in hub.requests] == ["/api/models/unsloth/gemma-3-27b-it-GGUF"]
    assert ui.dialogs[-1].title == "Downloading unsloth/gemma-3-27b-it-GGUF:Q4_K_M…"

    missing = ScriptedUI(select(DOWNLOAD), text("ggml-org/gemma-3-1b-it-GGUF:Q2_K"))
    await make_harness(router.url, KEY, missing, HF_ENDPOINT=hub.url).llama()
    assert "ggml-org/gemma-3-1b-it-GGUF has no Q2_K file; it offers Q4_K_M, Q8_0" in missing.notes(
        "error"
    )

    unknown = ScriptedUI(select(DOWNLOAD), text("nobody/nothing-GGUF"))
    await make_harness(router.url, KEY, unknown, HF_ENDPOINT=hub.url).llama()
    assert "not found on Hugging Face: nobody/nothing-GGUF" in unknown.notes("error")


async def test_no_results_and_unreachable_hub(
    router: LlamaServer, hub: FakeHub, make_harness: Callable[..., Harness]
) -> None:
    ui = ScriptedUI(select(DOWNLOAD), text("no-such-thing"))
    await make_harness(router.url, KEY, ui, HF_ENDPOINT=hub.url).llama()
    assert "No GGUF repositories on Hugging Face match 'no-such-thing'" in ui.notes("warning")

    offline = f"http://127.0.0.1:{free_port()}"
    ui = ScriptedUI(select(DOWNLOAD), text("gemma"))
    await make_harness(router.url, KEY, ui, HF_ENDPOINT=offline).llama()
    assert f"Hugging Face is not reachable at {offline}" in ui.notes("error")

    # an exact name still goes to the router, with a warning that it was not checked
    ui = ScriptedUI(select(DOWNLOAD), text("owner/repo:Q4_K_M"), select(WAIT))
    await make_harness(router.url, KEY, ui, HF_ENDPOINT=offline).llama()
    assert "asking the router to download owner/repo:Q4_K_M unchecked" in ui.notes("warning")
    assert "The router could not download owner/repo:Q4_K_M" in ui.notes("error")
