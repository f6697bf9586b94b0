"""A provider's ``Retry-After`` never holds a run longer than the configured maximum delays.

Through the real executable: ``retry.provider.maxRetryDelayMs`` turns a longer server delay into
an immediate failure that says what the server asked (as the reference documents), and
``retry.maxAgentDelayMs`` caps every wait between attempts, the server's request included.
"""

from __future__ import annotations

import json
import time

from knightcode.testing import error_reply, text_reply
from tests.agent.conftest import Scripted


def _settings(s: Scripted, retry: dict[str, object]) -> None:
    (s.agent_dir / "settings.json").write_text(json.dumps({"retry": retry}))


def test_a_day_long_retry_after_fails_at_once_and_retries_on_the_capped_backoff(
    scripted: Scripted,
) -> None:
    _settings(
        scripted,
        {
            "baseDelayMs": 10,
            "maxRetries": 2,
            "maxAgentDelayMs": 5000,
            "provider": {"maxRetryDelayMs": 5000},
        },
    )
    day = {"retry-after": "86400"}
    scripted.server.add(*(error_reply(429, "Rate limited", headers=day) for _ in range(3)))
    started = time.monotonic()
    records, result = scripted.run_json("-p", "hi")
    elapsed = time.monotonic() - started
    assert elapsed < 30, f"the run waited {elapsed:.0f} s"
    assert result.returncode == 1, result.stderr
    assert len(scripted.server.requests) == 3
    retries = [r for r in records if r["type"] == "auto_retry_start"]
    # Not the server's 86400 s: the agent's own backoff (10 ms, 20 ms).
    assert [r["delayMs"] for r in retries] == [10, 20]
    message = retries[0]["errorMessage"]
    assert message.startswith("429")
    assert "86400 s retry delay" in message and "retry.provider.maxRetryDelayMs" in message
    (end,) = [r for r in records if r["type"] == "auto_retry_end"]
    assert end["success"] is False and "86400 s retry delay" in end["finalError"]


def test_print_mode_reports_the_refused_delay_in_seconds(scripted: Scripted) -> None:
    _settings(
        scripted,
        {"baseDelayMs": 10, "maxRetries": 0, "provider": {"maxRetryDelayMs": 5000}},
    )
    scripted.server.add(error_reply(429, "Slow down", headers={"retry-after": "86400"}))
    started = time.monotonic()
    result = scripted.run("-p", "hi", timeout=30)
    assert time.monotonic() - started < 20
    assert result.returncode == 1
    assert "86400 s retry delay" in result.stderr and "Traceback" not in result.stderr


def test_retry_after_within_the_provider_limit_is_capped_by_max_agent_delay(
    scripted: Scripted,
) -> None:
    # 30 s is within the provider limit (60 s by default), so it is a wait hint; the agent's
    # limit of 300 ms wins.
    _settings(scripted, {"baseDelayMs": 10, "maxAgentDelayMs": 300})
    scripted.server.add(
        error_reply(429, "Rate limited", headers={"retry-after": "30"}), text_reply("done")
    )
    started = time.monotonic()
    records, result = scripted.run_json("-p", "hi")
    assert time.monotonic() - started < 20
    assert result.returncode == 0, result.stderr
    (retry,) = [r for r in records if r["type"] == "auto_retry_start"]
    assert retry["delayMs"] == 300
    assert "retry delay" not in retry["errorMessage"]  # honoured as a hint, not refused


def test_a_zero_provider_limit_honours_the_server_delay_up_to_the_agent_cap(
    scripted: Scripted,
) -> None:
    _settings(
        scripted,
        {"baseDelayMs": 10, "maxAgentDelayMs": 400, "provider": {"maxRetryDelayMs": 0}},
    )
    scripted.server.add(
        error_reply(429, "Rate limited", headers={"retry-after": "86400"}), text_reply("done")
    )
    records, result = scripted.run_json("-p", "hi")
    assert result.returncode == 0, result.stderr
    (retry,) = [r for r in records if r["type"] == "auto_retry_start"]
    assert retry["delayMs"] == 400
