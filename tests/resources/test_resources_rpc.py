"""Skills and prompt templates over RPC: ``prompt`` expands them, ``get_commands`` lists them."""

from __future__ import annotations

from knightcode.testing import text_reply
from tests.rpc.conftest import Rpc, is_type, rpc  # noqa: F401 (the fixture)

from .test_resources_e2e import EXPANDED, REVIEW, TYPED, user_texts, write_skill, write_template


async def test_rpc_prompt_expands_templates_and_skills(rpc: Rpc) -> None:  # noqa: F811
    write_template(rpc.agent_dir / "prompts", "review", REVIEW)
    skill = write_skill(rpc.agent_dir / "skills", "pdf-tools", "PDFs", "Use pdftotext.")
    rpc.server.add(text_reply("one"), text_reply("two"))
    client = await rpc.start()
    for text in (TYPED, "/skill:pdf-tools convert a.pdf"):
        mark = client.mark()
        await client.prompt(text)
        await client.wait_for(is_type("agent_settled"), since=mark)
    first, second = (user_texts(r.body)[-1] for r in rpc.server.requests)
    assert first == EXPANDED
    assert second.startswith(f'<skill name="pdf-tools" location="{skill.as_posix()}">')
    assert second.endswith("</skill>\n\nconvert a.pdf")


async def test_get_commands_lists_templates_and_skills(rpc: Rpc) -> None:  # noqa: F811
    template = write_template(rpc.agent_dir / "prompts", "review", REVIEW)
    skill = write_skill(rpc.agent_dir / "skills", "pdf-tools", "PDFs")
    client = await rpc.start()
    commands = await client.get_commands()
    assert {
        "name": "review",
        "description": "Review code",
        "source": "prompt",
        "location": "user",
        "path": str(template),
    } in commands
    assert {
        "name": "skill:pdf-tools",
        "description": "PDFs",
        "source": "skill",
        "location": "user",
        "path": str(skill),
    } in commands
