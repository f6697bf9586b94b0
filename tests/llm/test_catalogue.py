"""The built-in model catalogue: its generator, its data, and how the registry uses it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from knightcode._errors import UsageError
from knightcode._llm.builtin import (
    CATALOGUE,
    BuiltinModel,
    builtin_providers,
    catalogue_source,
    model_config,
)
from knightcode._llm.models_config import ModelConfig
from knightcode._llm.openai_convert import build_openai_body
from knightcode._llm.providers import ProviderSpec, build_models
from knightcode._llm.registry import ModelRegistry
from knightcode._llm.types import (
    KNOWN_APIS,
    Context,
    Model,
    StreamOptions,
    Tool,
    new_assistant_message,
)
from knightcode._types.messages import LlmMessage as Message
from scripts import model_catalogue

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "catalogue"


# --- the generator ---


def test_generator_output_is_the_checked_in_expectation(tmp_path: Path) -> None:
    """Run twice on a small extract of the npm packages: same bytes, as expected.json."""
    outputs = []
    for run in range(2):
        out = tmp_path / f"catalogue-{run}.json"
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "scripts.model_catalogue",
                "--pi-ai",
                str(FIXTURE / "pi-ai"),
                "--coding-agent",
                str(FIXTURE / "coding-agent"),
                "--out",
                str(out),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
        assert "7 providers, 11 models" in completed.stderr
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == (FIXTURE / "expected.json").read_bytes()


def test_generator_choices_on_the_extract() -> None:
    sources = model_catalogue.read_packages(FIXTURE / "pi-ai", FIXTURE / "coding-agent")
    catalogue = model_catalogue.build_catalogue(*sources)
    providers = {p["name"]: p for p in catalogue["providers"]}  # type: ignore[attr-defined,index]
    # No client for Vertex; Cloudflare's base URL needs account placeholders filled in.
    assert "google-vertex" not in providers and "cloudflare-workers-ai" not in providers
    # Mistral over its OpenAI-compatible endpoint, not the reference's own SDK.
    assert providers["mistral"]["api"] == "openai-completions"
    assert providers["mistral"]["baseUrl"] == "https://api.mistral.ai/v1"
    # The reference's order of preference for a default model comes first.
    assert list(providers)[:2] == ["anthropic", "openai"]
    # A negative price ("varies") becomes 0, which models.json's checks accept.
    auto = next(m for m in providers["openrouter"]["models"] if m["id"] == "openrouter/auto")
    assert auto["cost"]["input"] == 0
    # The model's own compat switches are kept, the provider's detected ones beside them.
    glm = providers["zai"]["models"][0]
    assert glm["compat"] == {
        "supportsDeveloperRole": False,
        "thinkingFormat": "zai",
        "zaiToolStream": True,
    }
    assert providers["zai"]["compat"]["zaiToolStream"] is False


def test_parse_js_object_reads_plain_data_and_refuses_code() -> None:
    text = 'x = 1; export const T = {\n a: { "b-c": [1, "}", null,], d: true, },\n};'
    assert model_catalogue.parse_js_object(text, "T") == {"a": {"b-c": [1, "}", None], "d": True}}
    with pytest.raises(ValueError, match="no object literal assigned to U"):
        model_catalogue.parse_js_object(text, "U")
    with pytest.raises(ValueError, match="not plain data"):
        model_catalogue.parse_js_object("const T = { a: f(1) };", "T")


# --- the shipped data ---


def _entries() -> list[tuple[str, str, BuiltinModel]]:
    return [
        (name, provider["api"], model)
        for name, provider in builtin_providers().items()
        for model in provider["models"]
    ]


def test_every_entry_is_a_valid_models_json_model() -> None:
    entries = _entries()
    assert len(entries) > 800
    for name, api, entry in entries:
        where = f"{name}/{entry['id']}"
        checked = ModelConfig.parse(entry)  # models.json's own checks (raises on a bad field)
        assert model_config(entry) == checked, where  # the unchecked fast path agrees
        assert entry["contextWindow"] > 0 and entry["maxTokens"] > 0, where
        assert entry.get("api", api) in KNOWN_APIS, where
    for provider in builtin_providers().values():
        ids = [model["id"] for model in provider["models"]]
        assert ids == sorted(set(ids)), provider["name"]
        assert provider.get("default", ids[0]) in ids


def test_the_shipped_catalogue_is_what_the_generator_writes() -> None:
    """Rendering the loaded data again gives the same bytes: nobody edited it by hand."""
    data = json.loads(CATALOGUE.read_bytes())
    assert model_catalogue.render(data) == CATALOGUE.read_text()


def test_spot_checks_against_pi_ai_0_73_1() -> None:
    assert catalogue_source() == "@mariozechner/pi-ai@0.73.1"
    providers = builtin_providers()
    opus = next(m for m in providers["anthropic"]["models"] if m["id"] == "claude-opus-4-7")
    assert (opus["contextWindow"], opus["maxTokens"], opus["reasoning"]) == (1000000, 128000, True)
    assert opus["cost"] == {"input": 5, "output": 25, "cacheRead": 0.5, "cacheWrite": 6.25}
    assert providers["anthropic"]["default"] == "claude-opus-4-7"
    gemini = next(m for m in providers["google"]["models"] if m["id"] == "gemini-2.5-pro")
    assert gemini["contextWindow"] == 1048576 and providers["google"]["env"] == ["GEMINI_API_KEY"]
    assert providers["google"]["api"] == "google-generative-ai"
    assert len(providers["openrouter"]["models"]) == 275
    assert providers["groq"]["env"] == ["GROQ_API_KEY"]
    assert providers["huggingface"]["env"] == ["HF_TOKEN"]
    assert providers["cerebras"]["compat"]["supportsStore"] is False


# --- the registry on top of it ---


def test_env_var_providers_have_models_only_with_their_key(tmp_path: Path) -> None:
    without = ModelRegistry(tmp_path, environ={})
    assert without.available() == []
    assert without.find_known("cerebras", "zai-glm-4.7") is not None  # known, not usable
    for provider, variable in [
        ("groq", "GROQ_API_KEY"),
        ("cerebras", "CEREBRAS_API_KEY"),
        ("deepseek", "DEEPSEEK_API_KEY"),
        ("fireworks", "FIREWORKS_API_KEY"),
        ("huggingface", "HF_TOKEN"),
        ("zai", "ZAI_API_KEY"),
    ]:
        registry = ModelRegistry(tmp_path, environ={variable: "k"})
        available = registry.available()
        assert available and {model.provider for model in available} == {provider}, variable


async def test_default_model_follows_the_reference_order(tmp_path: Path) -> None:
    registry = ModelRegistry(tmp_path, environ={"GROQ_API_KEY": "k", "XAI_API_KEY": "k"})
    default = await registry.default_model()
    # xai precedes groq in the reference's defaultModelPerProvider
    assert default is not None and default.ref == "xai/grok-4.20-0309-reasoning"
    assert (await registry.default_model("groq")).ref == "groq/openai/gpt-oss-120b"  # type: ignore[union-attr]


def test_models_json_overrides_win_over_the_catalogue(tmp_path: Path) -> None:
    models_json = {
        "providers": {
            "groq": {
                "baseUrl": "http://127.0.0.1:9/v1",
                "compat": {"supportsStore": False},
                "modelOverrides": {
                    "openai/gpt-oss-120b": {"contextWindow": 65536, "cost": {"input": 9}}
                },
                "models": [{"id": "my-model", "contextWindow": 1000}],
            }
        }
    }
    (tmp_path / "models.json").write_text(json.dumps(models_json))
    registry = ModelRegistry(tmp_path, environ={"GROQ_API_KEY": "k"})
    gpt = registry.find_known("groq", "openai/gpt-oss-120b")
    assert gpt is not None
    assert (gpt.context_window, gpt.max_tokens) == (65536, 65536)
    assert (gpt.cost.input, gpt.cost.output) == (9, 0.6)
    assert gpt.base_url == "http://127.0.0.1:9/v1"
    assert gpt.compat["supportsStore"] is False
    assert gpt.compat["maxTokensField"] == "max_completion_tokens"  # the catalogue's, kept
    assert registry.find_known("groq", "my-model") is not None


def test_unsupported_apis_warn_only_for_what_models_json_configures(tmp_path: Path) -> None:
    unspoken = [
        name
        for name, provider in builtin_providers().items()
        if provider["api"] not in KNOWN_APIS and provider["env"]
    ]
    assert ModelRegistry(tmp_path, environ={}).load_errors == []
    if not unspoken:
        return  # every catalogue API has a client: nothing left to warn about
    name = unspoken[0]
    models_json = {"providers": {name: {"apiKey": "k"}}}
    (tmp_path / "models.json").write_text(json.dumps(models_json))
    errors = ModelRegistry(tmp_path, environ={}).load_errors
    assert len(errors) == 1 and f"providers.{name}: API" in errors[0]


def test_the_providers_table_in_the_docs_matches_the_catalogue() -> None:
    text = (ROOT / "docs" / "providers.md").read_text()
    # Only the built-in providers' table: the subscriptions' table names some providers again.
    text = text.split("## Built-in providers", 1)[1].split("\n## ", 1)[0]
    rows = {
        line.split("|")[1].strip().strip("`"): line
        for line in text.splitlines()
        if line.startswith("| `")
    }
    for name, provider in builtin_providers().items():
        assert name in rows, f"docs/providers.md has no row for {name}"
        for variable in provider["env"]:
            assert f"`{variable}`" in rows[name], (name, variable)
        assert f"| {len(provider['models'])} |" in rows[name], name


def _history(model: Model) -> Context:
    """A user turn, this model's earlier answer (no reasoning kept), a new user turn, a tool."""
    earlier = new_assistant_message(model)
    earlier["content"] = [{"type": "text", "text": "earlier"}]
    earlier["stopReason"] = "stop"
    messages: list[Message] = [
        {"role": "user", "content": "hi", "timestamp": 0},
        earlier,
        {"role": "user", "content": "again", "timestamp": 0},
    ]
    tool = Tool("read", "Read a file", {"type": "object", "properties": {}})
    return Context(system_prompt="Be terse.", messages=messages, tools=[tool])


def test_deepseek_and_zai_switches_shape_the_body(tmp_path: Path) -> None:
    registry = ModelRegistry(tmp_path, environ={})
    deepseek = registry.find_known("deepseek", "deepseek-v4-pro")
    assert deepseek is not None and deepseek.reasoning
    body = build_openai_body(deepseek, _history(deepseek), StreamOptions(reasoning="high"))
    assert body["thinking"] == {"type": "enabled"} and body["reasoning_effort"] == "high"
    earlier = {"role": "assistant", "content": "earlier", "reasoning_content": ""}
    assert body["messages"][2] == earlier
    assert "store" not in body and body["messages"][0]["role"] == "system"
    off = build_openai_body(deepseek, _history(deepseek), StreamOptions(reasoning="off"))
    assert off["thinking"] == {"type": "disabled"} and "reasoning_effort" not in off

    glm = registry.find_known("zai", "glm-5.1")
    assert glm is not None
    body = build_openai_body(glm, _history(glm), StreamOptions(reasoning="high"))
    assert body["tool_stream"] is True and body["enable_thinking"] is True
    assert "reasoning_content" not in body["messages"][2]


def test_untouched_providers_build_the_same_models_as_changed_ones() -> None:
    """The fast path (catalogue → Model) and the merge path (→ ModelConfig → Model) agree."""
    for name, data in builtin_providers().items():
        pristine = ProviderSpec.builtin_spec(name, data)
        assert pristine.catalogue is not None and not pristine.models
        merged = pristine.with_models()
        assert merged.catalogue is None and len(merged.models) == len(data["models"])
        assert build_models({name: pristine}) == build_models({name: merged}), name


async def test_an_unknown_model_names_usable_models_first(tmp_path: Path) -> None:
    registry = ModelRegistry(tmp_path, environ={"GROQ_API_KEY": "k"})
    with pytest.raises(UsageError, match=r"known models include: groq/"):
        await registry.resolve("no-such-model")
