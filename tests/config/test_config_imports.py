"""Reading the configuration must not import pydantic: every run reads it, and pydantic costs
about 25 ms to import (RPC mode alone still uses it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def test_settings_and_models_json_are_read_without_pydantic(
    agent_dir: Path, project_dir: Path
) -> None:
    (agent_dir / "settings.json").write_text(
        '{"extensions": ["a.py"], "sessionDir": "s", "compaction": {"reserveTokens": 1}}'
    )
    (agent_dir / "models.json").write_text(
        '{"providers": {"local": {"baseUrl": "http://x/v1", "api": "openai-completions",'
        ' "models": [{"id": "m", "contextWindow": 8000}]}}}'
    )
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        import knightcode._config.context_files
        import knightcode._config.edit_settings
        import knightcode._config.system_prompt
        from knightcode._config.loading import Settings
        from knightcode._config.trust import resolve_trust
        from knightcode._llm.registry import ModelRegistry

        agent, cwd = Path({str(agent_dir)!r}), Path({str(project_dir)!r})
        decision = resolve_trust(agent, cwd, approve=False)
        settings = Settings.load(agent, cwd, project_trusted=decision.trusted)
        assert settings.extension_entries() == [("a.py", agent)]
        assert settings.session_dir(cwd) == cwd / "s"
        assert settings.compaction_for("p", "m").reserve_tokens == 1
        assert settings.model.compaction.reserve_tokens == 1
        assert ModelRegistry(agent, environ={{}}).find_known("local", "m").context_window == 8000
        assert "pydantic" not in sys.modules, "pydantic imported while reading configuration"
    """)
    result = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
