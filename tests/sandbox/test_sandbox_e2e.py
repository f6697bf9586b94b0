"""``knightcode --sandbox NAME --mode json`` end to end against the scripted model server, and
``knightcode sandbox doctor``: the real executable, the real sandboxes.

A ``bash`` call writing outside ``/workspace`` does not reach the host; one inside writes through;
a plugin tool's command runs inside; a leaky configuration is reported by the doctor and refused
at session start.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.agent.conftest import Scripted

from .conftest import factory

REPO = Path(__file__).resolve().parents[2]
LINE_COUNT = REPO / "plugins_examples" / "line_count.py"

E2E = ("bwrap", "container", "gondolin")


def configure(s: Scripted, sandbox: dict[str, Any]) -> None:
    (s.agent_dir / "settings.json").write_text(
        json.dumps({"retry": {"baseDelayMs": 10}, "sandbox": sandbox})
    )


def sandbox_settings(name: str) -> dict[str, Any]:
    """The settings the factory's runner uses (the test image, podman's flags …)."""
    module = factory(name)
    settings: dict[str, Any] = dict(getattr(module, "SETTINGS", {}))
    return settings


def tool_ends(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [record for record in records if record["type"] == "tool_execution_end"]


def result_text(end: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in end["result"]["content"])


@pytest.mark.parametrize("name", E2E)
def test_bash_inside_writes_through_and_outside_stays_out(
    scripted: Scripted, name: str, tmp_path: Path
) -> None:
    configure(scripted, sandbox_settings(name))
    outside = tmp_path / f"outside-{secrets.token_hex(4)}"
    outside.mkdir()
    scripted.server.add(
        tool_call_reply(
            [
                tool_call("c1", "bash", {"command": f"echo leak > {outside}/x.txt"}),
                tool_call("c2", "bash", {"command": "echo kept > inside.txt; echo $PATH; pwd"}),
            ]
        ),
        tool_call_reply([tool_call("c3", "line_count", {"paths": ["inside.txt"]})]),
        text_reply("done"),
    )
    records, result = scripted.run_json("--sandbox", name, "-e", str(LINE_COUNT), "-p", "go")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    ends = {end["toolCallId"]: end for end in tool_ends(records)}
    assert ends["c1"]["isError"] is True
    assert not (outside / "x.txt").exists()
    assert ends["c2"]["isError"] is False
    assert result_text(ends["c2"]).strip().endswith("/workspace")
    assert (scripted.project / "inside.txt").read_text() == "kept\n"
    assert str(scripted.agent_dir) not in result_text(ends["c2"])  # no host path on PATH
    assert ends["c3"]["isError"] is False, result_text(ends["c3"])
    assert ends["c3"]["result"]["details"] == {"cwd": "/workspace"}
    assert "1 inside.txt" in result_text(ends["c3"])
    # the model was told where it works
    body = scripted.server.requests[0].body
    assert isinstance(body, dict)
    system = json.dumps(body["messages"][0])
    assert "Current working directory: /workspace (sandbox: " in system


def doctor(s: Scripted, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "knightcode", "sandbox", "doctor", *args],
        cwd=s.project,
        env=s.env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("name", ["local", *E2E])
def test_doctor_passes(scripted: Scripted, name: str) -> None:
    configure(scripted, sandbox_settings(name) if name != "local" else {})
    result = doctor(scripted, "--sandbox", name, "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True and report["backend"] == name
    observed = {probe["name"]: probe["observed"] for probe in report["probes"]}
    assert len(observed) == 6
    want = "reached" if name == "local" else "blocked"
    assert set(observed.values()) == {want}, observed


LEAKY = {
    "bwrap": lambda agent_dir: {"bwrap": {"extraArgs": ["--bind", str(agent_dir), str(agent_dir)]}},
    "container": lambda agent_dir: {"container": {"extraArgs": ["-v", f"{agent_dir}:{agent_dir}"]}},
}


def containers() -> list[str]:
    """The knightcode containers podman has (running or not)."""
    listed = subprocess.run(
        ["podman", "ps", "-a", "--filter", "label=knightcode.session", "--format", "{{.ID}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return sorted(listed.stdout.split())


@pytest.mark.parametrize("name", sorted(LEAKY))
def test_a_leaky_configuration_fails_the_doctor_and_refuses_the_session(
    scripted: Scripted, name: str
) -> None:
    settings = sandbox_settings(name)
    leak = LEAKY[name](scripted.agent_dir)
    for key, value in leak.items():
        settings[key] = {**settings.get(key, {}), **value}
    configure(scripted, settings)
    result = doctor(scripted, "--sandbox", name)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "LEAK  read the agent directory" in result.stdout
    scripted.server.add(text_reply("never"))
    before = containers()
    run = scripted.run("--sandbox", name, "-p", "hello")
    assert run.returncode == 2, run.stderr
    assert containers() == before  # the refused session's container went with it
    assert "leaks (read the agent directory" in run.stderr
    assert "Traceback" not in run.stderr
    assert [r for r in scripted.server.requests if r.method == "POST"] == []  # nothing sent


def test_settings_asking_for_a_sandbox_without_the_plugin_refuse(scripted: Scripted) -> None:
    settings = {
        "retry": {"baseDelayMs": 10},
        "sandbox": {"backend": "bwrap"},
        "extensions": ["-builtin:gondolin"],
    }
    (scripted.agent_dir / "settings.json").write_text(json.dumps(settings))
    scripted.server.add(text_reply("never"))
    run = scripted.run("-p", "hello")
    assert run.returncode == 2
    assert 'sandbox.backend is "bwrap" but no plugin provides a sandbox' in run.stderr


def test_a_wrong_sandbox_name_refuses_clearly(scripted: Scripted) -> None:
    scripted.server.add(text_reply("never"))
    run = scripted.run("--sandbox", "docker-ish", "-p", "hello")
    assert run.returncode == 2
    assert "--sandbox is 'docker-ish'; expected one of: local, bwrap, container, gondolin" in (
        run.stderr
    )
    assert "Traceback" not in run.stderr


async def test_rpc_bash_runs_inside_the_sandbox(agent_dir: Path, project_dir: Path) -> None:
    """RPC ``bash`` (a client's ``!`` command) goes through the sandbox like the tools do."""
    from knightcode.rpc import Client
    from knightcode.testing import ScriptedServer
    from tests.agent.conftest import MODEL, PROVIDER, write_models_json

    factory("bwrap")
    with ScriptedServer(models=(MODEL,)) as server:
        write_models_json(agent_dir, server.base_url)
        client = Client(
            ["--model", f"{PROVIDER}/{MODEL}", "--sandbox", "bwrap"],
            env={
                **{k: v for k, v in os.environ.items() if not k.endswith("_KEY")},
                "KNIGHTCODE_LOAD_PLUGINS": "builtin:gondolin",
            },
            cwd=project_dir,
            timeout=30,
        )
        await client.start()
        try:
            response = await client.send(
                {"id": "b1", "type": "bash", "command": "pwd; echo x > made-inside.txt; ls /root"}
            )
        finally:
            await client.close()
    assert response["success"] is True, response
    output = response["data"]["output"]
    assert output.startswith("/workspace\n") and "No such file" in output
    assert (project_dir / "made-inside.txt").read_text() == "x\n"
