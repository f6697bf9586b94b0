"""``plugins_examples/custom_compaction.py`` in a real session: a compaction written by another
model, loaded through the real ``-e`` loader next to ``builtin:compaction``."""

from __future__ import annotations

from knightcode.testing import text_reply, usage
from tests.harness import (
    LARGE,
    PROVIDER,
    Builder,
    bounded,
    summary_reply,
)

from ..conftest import REPO

EXAMPLE = REPO / "plugins_examples" / "custom_compaction.py"
SETTINGS = {"compaction": {"reserveTokens": 2000, "keepRecentTokens": 100}}


async def test_the_example_summarizes_with_the_chosen_model(build: Builder) -> None:
    run = await build(
        settings=SETTINGS, extensions=(EXAMPLE,), flags={"compaction-model": f"{PROVIDER}/{LARGE}"}
    )
    assert run.failures == [] and run.host.records[-1].name.endswith("custom_compaction.py")
    run.server.add(text_reply("answer one", usage=usage(input=100)))
    await bounded(run.agent.prompt("question one"))
    run.server.add(
        text_reply("answer two", usage=usage(input=8500)),
        summary_reply("# Everything so far", 700, 70),
    )
    await bounded(run.agent.prompt("question two " + "q" * 600))

    summary_request = run.requests[2]
    assert summary_request.body["model"] == LARGE  # not the session's model
    prompt = run.prompt_text(2)
    assert "[User]: question one\n\n[Assistant]: answer one" in prompt
    (entry,) = run.entries("compaction")
    assert entry["summary"] == "# Everything so far" and entry["fromHook"] is True
    assert entry["usage"]["totalTokens"] == 770 and entry["details"] == {
        "model": f"{PROVIDER}/{LARGE}"
    }


async def test_without_the_flag_the_built_in_compaction_runs(build: Builder) -> None:
    run = await build(settings=SETTINGS, extensions=(EXAMPLE,))
    run.server.add(text_reply("answer", usage=usage(input=8500)), summary_reply())
    await bounded(run.agent.prompt("question"))
    (entry,) = run.entries("compaction")
    assert "fromHook" not in entry and entry["details"] == {"readFiles": [], "modifiedFiles": []}
