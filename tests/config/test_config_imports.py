"""The configuration start-up path must not import pydantic (``--help`` must stay cheap)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def test_start_up_readers_do_not_import_pydantic(agent_dir: Path, project_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(
        '{"extensions": ["a.py"], "sessionDir": "s", "compaction": {"reserveTokens": 1}}'
    )
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        import knightcode._config.context_files
        import knightcode._config.edit_settings
        import knightcode._config.system_prompt
        from knightcode._config.loading import Settings
        from knightcode._config.trust import resolve_trust

        agent, cwd = Path({str(agent_dir)!r}), Path({str(project_dir)!r})
        decision = resolve_trust(agent, cwd, approve=False)
        settings = Settings.load(agent, cwd, project_trusted=decision.trusted)
        assert settings.extension_entries() == [("a.py", agent)]
        assert settings.session_dir(cwd) == cwd / "s"
        assert settings.compaction_for("p", "m").reserve_tokens == 1
        assert "pydantic" not in sys.modules, "pydantic imported on the start-up path"
        _ = settings.model
        assert "pydantic" in sys.modules
    """)
    result = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
