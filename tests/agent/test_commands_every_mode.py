"""Plugin, template and skill commands in every mode, end to end (issue 17): the shipped
``plugins_examples/hello_command.py`` in print, JSON and RPC mode, a command that opens dialogs
where nobody can answer them, and ``/skill:name`` in JSON mode.
"""

from __future__ import annotations

import json
from pathlib import Path

from knightcode.testing import text_reply
from tests.agent.conftest import Scripted
from tests.resources.test_resources_e2e import user_texts, write_skill
from tests.rpc.conftest import Rpc, rpc  # noqa: F401 (the fixture)

HELLO = Path(__file__).resolve().parents[2] / "plugins_examples" / "hello_command.py"

DIALOGS = """
from pathlib import Path
from knightcode import hookimpl


async def ask(args, ctx):
    answers = (
        await ctx.ui.confirm("Proceed?", args),
        await ctx.ui.select("Colour?", ["red", "green"]),
        await ctx.ui.input("Name?", "your name"),
        await ctx.ui.editor("Edit", "prefilled"),
    )
    Path(ctx.cwd, "answers.txt").write_text(repr(answers))


@hookimpl
def register_commands(register):
    register(name="ask", description="Ask the user things", handler=ask)
"""


def test_hello_example_runs_in_print_mode(scripted: Scripted) -> None:
    result = scripted.run("-p", "/hello Bob", "-e", str(HELLO))
    assert result.returncode == 0, result.stderr
    assert "Hello, Bob!" in result.stderr
    assert result.stdout == ""
    assert scripted.server.requests == []  # the command was not sent to the model


def test_hello_example_uses_its_flag_in_print_mode(scripted: Scripted) -> None:
    result = scripted.run("-e", str(HELLO), "--hello-name", "Grace", "-p", "/hello")
    assert result.returncode == 0, result.stderr
    assert "Hello, Grace!" in result.stderr
    assert scripted.server.requests == []


def test_hello_example_runs_in_json_mode(scripted: Scripted) -> None:
    scripted.server.add(text_reply("and then"))
    records, result = scripted.run_json("-e", str(HELLO), "/hello Bob", "next")
    assert result.returncode == 0, result.stderr
    assert "Hello, Bob!" in result.stderr
    assert "/hello" not in json.dumps(records)  # no user message was recorded for it
    (request,) = scripted.server.requests
    assert user_texts(request.body) == ["next"]
    assert records[-1]["type"] == "agent_settled"


async def test_hello_example_runs_as_an_rpc_prompt(rpc: Rpc) -> None:  # noqa: F811
    client = await rpc.start("-e", str(HELLO))
    mark = client.mark()
    await client.prompt("/hello Bob")
    notice = await client.wait_for(
        lambda r: r["type"] == "extension_ui_request" and r["method"] == "notify", since=mark
    )
    assert notice["message"] == "Hello, Bob!"
    assert rpc.server.requests == []
    assert await client.get_messages() == []


def test_dialogs_answer_their_defaults_in_print_and_json_mode(
    scripted: Scripted, tmp_path: Path
) -> None:
    plugin = tmp_path / "dialogs.py"
    plugin.write_text(DIALOGS)
    answers = scripted.project / "answers.txt"
    for mode in (("-p",), ("--mode", "json")):
        answers.unlink(missing_ok=True)
        result = scripted.run("-e", str(plugin), *mode, "/ask deploy", timeout=30)
        assert result.returncode == 0, result.stderr
        assert answers.read_text() == "(False, None, None, None)"
        assert result.stderr.splitlines() == [
            "knightcode: nobody can answer 'Proceed?' here (confirm): no",
            "knightcode: nobody can answer 'Colour?' here (select): no choice",
            "knightcode: nobody can answer 'Name?' here (input): no text",
            "knightcode: nobody can answer 'Edit' here (editor): no text",
        ]
    assert scripted.server.requests == []


def test_skill_in_json_mode_is_expanded(scripted: Scripted) -> None:
    skill = write_skill(scripted.agent_dir / "skills", "pdf-tools", "PDFs", "Use pdftotext.")
    scripted.server.add(text_reply("done"))
    records, result = scripted.run_json("/skill:pdf-tools convert a.pdf")
    assert result.returncode == 0, result.stderr
    sent = user_texts(scripted.server.requests[0].body)[-1]
    assert sent.startswith(f'<skill name="pdf-tools" location="{skill.as_posix()}">')
    assert sent.endswith("</skill>\n\nconvert a.pdf")
    users = [r for r in records if r["type"] == "message_end" and r["message"]["role"] == "user"]
    assert users and "Use pdftotext." in json.dumps(users[0])
