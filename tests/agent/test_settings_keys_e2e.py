"""Settings keys that had no test of their effect, checked on what the real executable sent:
``defaultProvider``/``defaultModel``, ``defaultTools``, ``httpProxy``, ``retry.maxRetries``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from knightcode.testing import error_reply, text_reply
from tests.loopback import answering

from .conftest import MODEL, PROVIDER, Scripted


def _settings(scripted: Scripted, **values: Any) -> None:
    data = {"retry": {"baseDelayMs": 10}, **values}
    (scripted.agent_dir / "settings.json").write_text(json.dumps(data))


def _two_models(scripted: Scripted) -> None:
    models = [{"id": MODEL}, {"id": "second-model"}]
    provider = {"baseUrl": scripted.server.base_url, "api": "openai-completions", "models": models}
    other = {
        "baseUrl": scripted.server.base_url,
        "api": "openai-completions",
        "apiKey": "k",
        "models": [{"id": "third-model"}],
    }
    (scripted.agent_dir / "models.json").write_text(
        json.dumps({"providers": {PROVIDER: provider, "other": other}})
    )


def _run_without_model_flag(scripted: Scripted) -> None:
    result = scripted.run_without_model("--no-session", "-p", "hi")
    assert result.returncode == 0, result.stderr


def test_default_provider_and_model_choose_the_model(scripted: Scripted) -> None:
    _two_models(scripted)
    scripted.server.add(text_reply("ok"), text_reply("ok"))
    _settings(scripted, defaultProvider=PROVIDER, defaultModel="second-model")
    _run_without_model_flag(scripted)
    _settings(scripted, defaultProvider="other", defaultModel="third-model")
    _run_without_model_flag(scripted)
    assert [r.body["model"] for r in scripted.server.requests] == ["second-model", "third-model"]


def test_default_tools_choose_the_tools_sent(scripted: Scripted) -> None:
    _settings(scripted, defaultTools=["read", "ls"])
    scripted.server.add(text_reply("ok"))
    assert scripted.run("--no-session", "-p", "hi").returncode == 0
    tools = scripted.server.requests[0].body.get("tools") or []
    names = {tool["function"]["name"] for tool in tools}
    # The built-ins are exactly those named; plugin tools (web_fetch …) come on top.
    assert names & {"read", "bash", "edit", "write", "grep", "find", "ls"} == {"read", "ls"}


def test_retry_max_retries_bounds_the_agents_retries(scripted: Scripted) -> None:
    _settings(scripted, retry={"baseDelayMs": 10, "maxRetries": 1})
    scripted.server.add(*[error_reply(503, "busy") for _ in range(3)])
    records, result = scripted.run_json("hi")
    assert result.returncode == 1
    assert len(scripted.server.requests) == 2  # the first try and one retry
    starts = [r for r in records if r["type"] == "auto_retry_start"]
    assert len(starts) == 1


@pytest.fixture
def proxy() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    with answering(502, seen) as url:  # a stand-in proxy that refuses to forward
        yield url, seen


def test_http_proxy_carries_the_provider_requests(
    scripted: Scripted, proxy: tuple[str, list[str]]
) -> None:
    url, seen = proxy
    _settings(scripted, httpProxy=url, retry={"enabled": False})
    result = scripted.run("--no-session", "-p", "hi")
    assert result.returncode == 1  # the stand-in refuses to forward
    assert scripted.server.requests == []
    assert seen and seen[0].startswith(scripted.server.base_url)
