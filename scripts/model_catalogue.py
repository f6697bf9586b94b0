"""Generate knightcode's built-in model catalogue from the reference's npm packages.

The reference (pi) maintains a catalogue of hosted models (context window, max output, input
kinds, reasoning, prices, API, base URL) in its ``@mariozechner/pi-ai`` package
(``dist/models.generated.js``), the environment variables holding each provider's key in
``dist/env-api-keys.js``, and the model each provider defaults to in
``@mariozechner/pi-coding-agent`` (``dist/core/model-resolver.js``). This script turns them into
``core/knightcode/_llm/catalogue.json``: package data read by :mod:`knightcode._llm.builtin`.
It runs at development time only (it needs ``npm``); knightcode never runs it.

What it changes on the way, and why:

* providers whose API knightcode has no client for and nobody is writing (``google-vertex``,
  ``mistral-conversations`` …) or whose base URL holds account placeholders (Cloudflare) are
  left out; Mistral is kept over its OpenAI-compatible endpoint (``/v1/chat/completions``);
* the reference's provider/URL-based compatibility detection for chat completions
  (``openai-completions.js`` ``detectCompat``) is written out as each provider's ``compat``, and
  only the switches knightcode's client implements are kept;
* each model is written in models.json's shape (the loader parses it as such); ``api`` and
  ``baseUrl`` only when they differ from the provider's.

Output is deterministic: providers in the reference's default-preference order, then by name;
models sorted by id; one model per line.

Run: ``python -m scripts.model_catalogue [--version 0.73.1]`` (packs both packages with npm into
a temporary directory), or ``--pi-ai DIR --coding-agent DIR`` for unpacked packages.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Mapping
from pathlib import Path

from knightcode._llm.compat_keys import COMPAT_KEYS
from knightcode._llm.types import KNOWN_APIS

__all__ = ["build_catalogue", "main", "parse_js_object", "render"]

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "core" / "knightcode" / "_llm" / "catalogue.json"
DEFAULT_VERSION = "0.73.1"

SKIPPED_PROVIDERS = frozenset({"cloudflare-ai-gateway", "cloudflare-workers-ai"})
"""Base URLs with ``{CLOUDFLARE_ACCOUNT_ID}`` placeholders, which knightcode does not fill in."""

API_REPLACEMENTS: Mapping[str, tuple[str, str]] = {
    # provider: (api, baseUrl) used instead of the reference's
    "mistral": ("openai-completions", "https://api.mistral.ai/v1"),
}
"""Providers served over another API than the reference's (see the module docstring)."""


ENV_OVERRIDES: Mapping[str, tuple[str, ...]] = {
    # ANTHROPIC_OAUTH_TOKEN is a subscription token, not an x-api-key: /login handles those.
    "anthropic": ("ANTHROPIC_API_KEY",),
    # Copilot and Codex tokens come from /login (auth.json), not from GITHUB_TOKEN.
    "github-copilot": (),
    "openai-codex": (),
    # Bedrock signs with AWS credentials; any of these makes the provider usable (the
    # reference's markers, as knightcode._llm.bedrock_auth lists them).
    "amazon-bedrock": (
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_ACCESS_KEY_ID",
        "AWS_PROFILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ),
}

_IDENT = re.compile(r"([{,]\s*)([A-Za-z_$][\w$]*)(\s*:)")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')

JsonObject = dict[str, object]


def parse_js_object(text: str, name: str) -> JsonObject:
    """The object literal assigned to ``name`` in compiled JavaScript (``NAME = {...};``).

    The reference's generated files hold plain data: double-quoted strings, bare or quoted keys,
    numbers, booleans, ``null`` and trailing commas. Keys are quoted and trailing commas dropped
    outside strings, and the result is read as JSON.

    :raises ValueError: no such assignment, or the literal is not plain data
    """
    match = re.search(rf"\b{re.escape(name)}\s*=\s*\{{", text)
    if match is None:
        raise ValueError(f"no object literal assigned to {name}")
    start = match.end() - 1
    end = _literal_end(text, start)
    pieces: list[str] = []
    cursor = start
    for string in _STRING.finditer(text, start, end):
        pieces.append(_to_json(text[cursor : string.start()]))
        pieces.append(string.group())
        cursor = string.end()
    pieces.append(_to_json(text[cursor:end]))
    try:
        value = json.loads("".join(pieces))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name} is not plain data: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{name} is not an object")
    return value


def _to_json(code: str) -> str:
    code = re.sub(r"//[^\n]*", "", code)
    previous = None
    while previous != code:  # "{a:{b:" needs two passes: the matches overlap at the brace
        previous = code
        code = _IDENT.sub(r'\1"\2"\3', code)
    return _TRAILING_COMMA.sub(r"\1", code)


def _literal_end(text: str, start: int) -> int:
    depth = 0
    index = start
    while index < len(text):
        char = text[index]
        if char == '"':
            string = _STRING.match(text, index)
            if string is None:
                raise ValueError("unterminated string")
            index = string.end()
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    raise ValueError("unterminated object literal")


def detect_compat(provider: str, base_url: str) -> JsonObject:
    """The reference's chat-completions compatibility for a provider (``detectCompat``).

    Only the switches knightcode's client implements are returned.
    """
    is_zai = provider == "zai" or "api.z.ai" in base_url
    is_moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in base_url
    is_grok = provider == "xai" or "api.x.ai" in base_url
    is_deepseek = provider == "deepseek" or "deepseek.com" in base_url
    non_standard = (
        provider in ("cerebras", "opencode")
        or any(part in base_url for part in ("cerebras.ai", "chutes.ai", "opencode.ai"))
        or is_grok
        or is_deepseek
        or is_zai
        or is_moonshot
    )
    use_max_tokens = "chutes.ai" in base_url or is_moonshot
    if is_deepseek:
        thinking = "deepseek"
    elif is_zai:
        thinking = "zai"
    elif provider == "openrouter" or "openrouter.ai" in base_url:
        thinking = "openrouter"
    else:
        thinking = "openai"
    compat: JsonObject = {
        "supportsStore": not non_standard,
        "supportsDeveloperRole": not non_standard,
        "supportsReasoningEffort": not (is_grok or is_zai or is_moonshot),
        "supportsUsageInStreaming": True,
        "maxTokensField": "max_tokens" if use_max_tokens else "max_completion_tokens",
        "thinkingFormat": thinking,
        "requiresReasoningContentOnAssistantMessages": is_deepseek,
        "zaiToolStream": False,
    }
    return {key: value for key, value in compat.items() if key in COMPAT_KEYS}


def _known_compat(compat: object) -> JsonObject:
    if not isinstance(compat, dict):
        return {}
    return {key: value for key, value in compat.items() if key in COMPAT_KEYS and value != {}}


def _model_entry(raw: JsonObject, api: str, base_url: str) -> JsonObject:
    cost = raw["cost"]
    assert isinstance(cost, dict)
    entry: JsonObject = {
        "id": raw["id"],
        "name": raw["name"],
        "contextWindow": raw["contextWindow"],
        "maxTokens": raw["maxTokens"],
        "reasoning": raw["reasoning"],
        "input": raw["input"],
        # a negative price (openrouter/auto's -1000000) means "varies": shown as unknown, 0
        "cost": {key: max(cost[key], 0) for key in ("input", "output", "cacheRead", "cacheWrite")},
    }
    if api != raw.get("_api"):
        entry["api"] = raw["_api"]
    if base_url != raw.get("_baseUrl"):
        entry["baseUrl"] = raw["_baseUrl"]
    for key in ("headers", "thinkingLevelMap"):
        if raw.get(key):
            entry[key] = raw[key]
    compat = _known_compat(raw.get("compat")) if raw["_api"] == "openai-completions" else {}
    if compat:
        entry["compat"] = compat
    return entry


def _most_common(values: list[str]) -> str:
    return max(sorted(set(values)), key=values.count)


def build_catalogue(
    models: JsonObject,
    env_map: Mapping[str, str],
    defaults: Mapping[str, str],
    version: str,
) -> JsonObject:
    """The catalogue: ``{"source": ..., "providers": [{name, api, baseUrl, env, ...}, ...]}``.

    :param models: the reference's ``MODELS`` (provider → model id → model)
    :param env_map: the reference's provider → key variable (``envMap``)
    :param defaults: the reference's ``defaultModelPerProvider``, in its order
    :param version: the pi-ai package version the data comes from
    """
    order = [name for name in defaults if name in models]
    order += sorted(name for name in models if name not in defaults)
    providers: list[JsonObject] = []
    for name in order:
        if name in SKIPPED_PROVIDERS:
            continue
        table = models[name]
        assert isinstance(table, dict)
        raws: list[JsonObject] = []
        for model_id in sorted(table):
            raw = dict(table[model_id])
            api, base_url = API_REPLACEMENTS.get(name, (raw["api"], raw["baseUrl"]))
            if api not in KNOWN_APIS:  # an API knightcode has no client for: left out
                continue
            raw["_api"], raw["_baseUrl"] = api, base_url
            raws.append(raw)
        if not raws:
            continue
        api = _most_common([str(raw["_api"]) for raw in raws])
        base_url = _most_common([str(raw["_baseUrl"]) for raw in raws])
        env = ENV_OVERRIDES.get(name)
        if env is None:
            env = (env_map[name],) if name in env_map else ()
        provider: JsonObject = {"name": name, "api": api, "baseUrl": base_url, "env": list(env)}
        if api == "openai-completions" and name not in API_REPLACEMENTS:
            provider["compat"] = detect_compat(name, base_url)
        default = defaults.get(name)
        if default is not None and any(raw["id"] == default for raw in raws):
            provider["default"] = default
        provider["models"] = [_model_entry(raw, api, base_url) for raw in raws]
        providers.append(provider)
    source = {"package": "@mariozechner/pi-ai", "version": version}
    return {"source": source, "providers": providers}


def _dump(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def render(catalogue: JsonObject) -> str:
    """The catalogue as text: compact JSON with one model per line (readable diffs)."""
    lines = ["{", f'"source":{_dump(catalogue["source"])},', '"providers":[']
    providers = catalogue["providers"]
    assert isinstance(providers, list)
    for p_index, provider in enumerate(providers):
        head = {key: value for key, value in provider.items() if key != "models"}
        lines.append(_dump(head)[:-1] + ',"models":[')
        models = provider["models"]
        for m_index, model in enumerate(models):
            lines.append(_dump(model) + ("," if m_index < len(models) - 1 else ""))
        lines.append("]}" + ("," if p_index < len(providers) - 1 else ""))
    lines += ["]", "}"]
    return "\n".join(lines) + "\n"


Sources = tuple[JsonObject, dict[str, str], dict[str, str], str]


def read_packages(pi_ai: Path, coding_agent: Path) -> Sources:
    """The models, key variables, defaults and version from unpacked packages."""
    dist = pi_ai / "dist"
    models = parse_js_object((dist / "models.generated.js").read_text(), "MODELS")
    env_map = _strings(parse_js_object((dist / "env-api-keys.js").read_text(), "envMap"))
    resolver = coding_agent / "dist" / "core" / "model-resolver.js"
    defaults = _strings(parse_js_object(resolver.read_text(), "defaultModelPerProvider"))
    version = json.loads((pi_ai / "package.json").read_text())["version"]
    return models, env_map, defaults, str(version)


def _strings(value: JsonObject) -> dict[str, str]:
    return {key: str(item) for key, item in value.items()}


def _npm_pack(package: str, version: str, into: Path) -> Path:
    """``npm pack`` a package into ``into`` and unpack it; the unpacked ``package`` folder."""
    done = subprocess.run(
        ["npm", "pack", f"{package}@{version}", "--silent"],
        cwd=into,
        capture_output=True,
        text=True,
        check=True,
    )
    tarball = into / done.stdout.strip().splitlines()[-1]
    target = into / tarball.stem
    with tarfile.open(tarball) as archive:
        archive.extractall(target, filter="data")
    return target / "package"


def main(argv: list[str] | None = None) -> int:
    """Write the catalogue; 0 on success (npm failures raise, with npm's own message)."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", default=DEFAULT_VERSION, help="pi-ai version to pack")
    parser.add_argument("--pi-ai", type=Path, help="an unpacked @mariozechner/pi-ai")
    parser.add_argument("--coding-agent", type=Path, help="an unpacked pi-coding-agent")
    parser.add_argument("--out", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        pi_ai, coding_agent = args.pi_ai, args.coding_agent
        if pi_ai is None:
            pi_ai = _npm_pack("@mariozechner/pi-ai", args.version, Path(tmp))
        if coding_agent is None:
            coding_agent = _npm_pack("@mariozechner/pi-coding-agent", args.version, Path(tmp))
        catalogue = build_catalogue(*read_packages(pi_ai, coding_agent))
    args.out.write_text(render(catalogue))
    providers = catalogue["providers"]
    assert isinstance(providers, list)
    count = sum(len(provider["models"]) for provider in providers)
    print(f"{args.out}: {len(providers)} providers, {count} models", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
