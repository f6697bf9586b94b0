"""A client written for the reference works unchanged: the reference's own ``RpcClient`` (npm
``@mariozechner/pi-coding-agent``, exported by the package) drives the real ``knightcode --mode
rpc`` through a Node shim (its ``cliPath``), calling every method it has, against the scripted
model server. Then the shapes it depends on are checked: the prompt's user message as text
blocks (``get_messages``, the events, the fork, the request), ``compat`` in model objects,
``sessionName`` left out while unset, ``max_tokens`` from the model's ``maxTokens``, tool-call
arguments re-sent compact as ``JSON.stringify`` writes them.

The package is installed once per machine under the CI cache (``.ci/run`` does it too), like the
llama-server build; without Node or npm the test is skipped, unless ``KNIGHTCODE_REQUIRE_NODE=1``
(set by ``.ci/run``) makes it fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from knightcode.testing import ScriptedServer, text_reply, tool_call, tool_call_reply

PACKAGE = "@mariozechner/pi-coding-agent"
VERSION = "0.73.1"
HERE = Path(__file__).parent / "reference"
# read at import, before the tests' private HOME is set (as tests/llama_cpp/servers.py does)
CACHE = Path(os.environ.get("KNIGHTCODE_CI_CACHE") or Path.home() / ".cache" / "knightcode-ci")
PROVIDER, MODEL, OTHER = "scripted", "scripted-model", "scripted-large"
NPM_OPTIONS = ("--no-audit", "--no-fund", "--ignore-scripts")  # only the client's JavaScript runs
COMPAT = {"maxTokensField": "max_tokens", "supportsDeveloperRole": False}


def reference_package() -> Path:
    """The installed package directory; installs it into the CI cache when missing."""
    cache = CACHE
    home = cache / f"pi-coding-agent-{VERSION}"
    package = home / "node_modules" / PACKAGE
    if (package / "dist" / "index.js").is_file():
        return package
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        if os.environ.get("KNIGHTCODE_REQUIRE_NODE") == "1":
            pytest.fail("node and npm are needed for the reference RpcClient")
        pytest.skip("node/npm not installed: the reference RpcClient cannot run")
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=cache, prefix=".pi-install-"))
    subprocess.run(
        [npm, "install", "--prefix", str(work), *NPM_OPTIONS, f"{PACKAGE}@{VERSION}"],
        check=True,
        capture_output=True,
        timeout=600,
    )
    if not home.exists():
        work.rename(home)  # appears complete or not at all
    else:
        shutil.rmtree(work)
    return package


def write_config(agent_dir: Path, base_url: str) -> None:
    models = [
        {"id": MODEL, "contextWindow": 32000, "maxTokens": 4096},
        {"id": OTHER, "contextWindow": 64000, "maxTokens": 8192, "reasoning": True},
    ]
    provider = {"baseUrl": base_url, "api": "openai-completions", "compat": COMPAT}
    (agent_dir / "models.json").write_text(
        json.dumps({"providers": {PROVIDER: {**provider, "models": models}}})
    )
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10}}))


def drive(package: Path, project: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(KNIGHTCODE_PYTHON=sys.executable, KNIGHTCODE_LOAD_PLUGINS="builtin:compaction")
    env.update(DRIVE_PROVIDER=PROVIDER, DRIVE_MODEL=MODEL, DRIVE_OTHER_MODEL=OTHER)
    result = subprocess.run(
        ["node", str(HERE / "drive.mjs"), str(package), str(HERE / "shim.mjs"), str(project)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_the_reference_rpc_client_drives_knightcode(agent_dir: Path, project_dir: Path) -> None:
    package = reference_package()
    (project_dir / "a.txt").write_text("alpha\n")
    with ScriptedServer(models=(MODEL, OTHER)) as server:
        write_config(agent_dir, server.base_url)
        # the model's own compact arguments, with a non-ASCII character and a float
        arguments = '{"path":"a.txt","offset":1,"note":"été"}'
        server.add(
            tool_call_reply([tool_call("call_1", "read", arguments)]),
            text_reply("done"),
            text_reply("slow ", "answer ", "here", delay=0.4),
            text_reply("steered ok"),
            text_reply("followed ok"),
            text_reply(*["never ", "finished "] * 10, delay=0.5),
            text_reply("## Goal\nsummary"),
            text_reply("the last"),
        )
        report = drive(package, project_dir)
        requests = [request.body for request in server.requests]

    called, results, events = report["called"], report["results"], report["events"]
    # every method of the reference's RpcClient was called
    methods = subprocess.run(
        ["node", "--input-type=module", "-e", LIST_METHODS, str(package)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert set(methods) - set(called) == set(), called

    # get_state: sessionName left out while unset, there once set; models carry compat
    state = results["getState"]
    assert "sessionName" not in state
    assert results["stateAfterName"]["sessionName"] == "named"
    assert state["model"]["compat"] == COMPAT
    assert all(m["compat"] == COMPAT for m in results["getAvailableModels"])
    assert results["setModel"]["id"] == OTHER and results["setModel"]["compat"] == COMPAT
    assert results["cycleModel"]["model"]["compat"] == COMPAT

    # the prompt's user message: text blocks everywhere the reference has them
    prompt_blocks = [{"type": "text", "text": "Read a.txt"}]
    user = results["getMessages"][0]
    assert (user["role"], user["content"]) == ("user", prompt_blocks)
    starts = [e for e in events if e["type"] in ("message_start", "message_end")]
    assert starts[0]["message"]["content"] == prompt_blocks
    assert starts[1]["message"]["content"] == prompt_blocks
    assert results["messagesAfterFork"][0]["content"] == prompt_blocks
    assert requests[0]["messages"][1]["content"] == prompt_blocks

    # the output limit from the model's maxTokens, in compat's field
    assert requests[0]["max_tokens"] == 4096 and "max_completion_tokens" not in requests[0]
    # the tool call re-sent exactly as the model wrote it (JSON.stringify, not Python's spacing)
    call = requests[1]["messages"][2]["tool_calls"][0]
    assert call["function"]["arguments"] == arguments

    # the rest answered in the reference's shapes
    assert results["getLastAssistantText"] == "done"
    assert results["promptAndWait"][-1] == "agent_end"
    assert results["bash"]["output"].strip() == "from-bash" and results["bash"]["exitCode"] == 0
    assert results["compact"]["summary"].startswith("## Goal")
    assert results["getSessionStats"]["userMessages"] >= 4
    assert Path(results["exportHtml"]["path"]).is_file()
    assert results["fork"]["cancelled"] is False and results["fork"]["text"] == "slow one"
    assert results["clone"] == {"cancelled": False}
    assert results["newSession"] == {"cancelled": False}
    assert results["switchSession"] == {"cancelled": False}
    assert isinstance(results["getCommands"], list)
    assert results["collectEvents"][-1] == "agent_end"
    sent_texts = [m["content"] for b in requests for m in b["messages"] if m["role"] == "user"]
    assert [{"type": "text", "text": "steered"}] in sent_texts
    assert [{"type": "text", "text": "followed"}] in sent_texts


# The RpcClient's own methods, read from the installed package (so a method the reference adds
# is noticed), minus the constructor and its private helpers.
LIST_METHODS = """
import { pathToFileURL } from "node:url";
import { join } from "node:path";
const url = pathToFileURL(join(process.argv[1], "dist", "index.js")).href;
const { RpcClient } = await import(url);
const names = Object.getOwnPropertyNames(RpcClient.prototype)
    .filter((n) => !["constructor", "handleLine", "send", "getData"].includes(n));
console.log(names.join("\\n"));
"""
