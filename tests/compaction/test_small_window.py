"""Small windows: an unset ``compaction.reserveTokens`` shrinks to min(16384, 30% of the window),
so an 8,192-token model does not compact after every turn; a reserve the user sets is kept.

Through the real executable against the scripted server, counting the requests it receives
(a compaction is one extra request, the summary)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from knightcode import CompactionSettings
from knightcode.testing import ScriptedServer, text_reply, usage
from tests.harness import server_fixture, summary_reply

__all__ = ["server_fixture"]

MODEL = "local/eight-k"


def configure(agent_dir: Path, base_url: str, compaction: dict[str, Any] | None = None) -> None:
    models = {
        "providers": {
            "local": {
                "baseUrl": base_url,
                "api": "openai-completions",
                "apiKey": "none",
                "models": [{"id": "eight-k", "contextWindow": 8192, "maxTokens": 1024}],
            }
        }
    }
    (agent_dir / "models.json").write_text(json.dumps(models))
    settings: dict[str, Any] = {"retry": {"baseDelayMs": 1}}
    if compaction is not None:
        settings["compaction"] = compaction
    (agent_dir / "settings.json").write_text(json.dumps(settings))


def run(project: Path, *prompts: str) -> list[dict[str, Any]]:
    result = subprocess.run(
        [sys.executable, "-m", "knightcode", "--model", MODEL, "--mode", "json", *prompts],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.split("\n") if line]


def test_an_8k_model_does_not_compact_on_a_short_conversation(
    server: ScriptedServer, agent_dir: Path, project_dir: Path
) -> None:
    configure(agent_dir, server.base_url)
    # 1,200 to 2,400 tokens of context: far below 8,192 - 2,457 (30% of the window)
    for turn, tokens in enumerate((1200, 1800, 2400)):
        server.add(text_reply(f"answer {turn}", usage=usage(input=tokens, output=40)))
    records = run(project_dir, "one", "two", "three")
    assert len(server.requests) == 3  # the three prompts, no summary request
    assert not [r for r in records if r["type"].startswith("compaction")]


def test_a_reserve_the_user_sets_is_kept(
    server: ScriptedServer, agent_dir: Path, project_dir: Path
) -> None:
    # the same short turn, with reserveTokens set: 8,192 - 7,000 = 1,192 < 1,200 compacts
    configure(agent_dir, server.base_url, {"reserveTokens": 7000})
    server.add(text_reply("answer", usage=usage(input=1200, output=40)), summary_reply())
    records = run(project_dir, "one")
    assert len(server.requests) == 2  # the prompt and the summary
    assert [r["reason"] for r in records if r["type"] == "compaction_end"] == ["threshold"]


def test_the_rule() -> None:
    unset = CompactionSettings()
    assert unset.for_window(8192).reserve_tokens == 2457  # 30% of the window
    assert unset.for_window(4096).reserve_tokens == 1228
    assert unset.for_window(200_000).reserve_tokens == 16384  # the default caps it
    assert unset.for_window(0).reserve_tokens == 16384  # unknown window: unchanged
    chosen = CompactionSettings(reserve_tokens=16384, reserve_tokens_set=True)
    assert chosen.for_window(8192).reserve_tokens == 16384  # the user's value wins
