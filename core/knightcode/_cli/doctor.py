"""``knightcode doctor``: every configuration file validated and every configured provider
reached, all problems listed at once (exit 2 when there is any, else 0).

Keys are never printed: a provider's line names where its key comes from.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

__all__ = ["doctor"]

_MARKS = {"ok": "ok", "problem": "PROBLEM", "warning": "warning", "skipped": "skipped"}


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option("--offline", is_flag=True, help="Check the files only; no network requests.")
def doctor(as_json: bool, offline: bool) -> None:
    """Validate settings.json (yours and the project's), models.json, auth.json (and that only
    you can read it), keybindings.json, tools.json, mcp.json and themes; then ask each
    configured provider for its model list with its key (5 s at most). Exit 2 on any problem.
    """
    import asyncio

    from knightcode._cli.doctor_checks import check_files
    from knightcode._config.paths import agent_dir
    from knightcode._errors import KnightcodeError
    from knightcode._llm.provider_check import check_providers
    from knightcode._llm.registry import ModelRegistry

    home, cwd = agent_dir(), Path.cwd()
    rows: list[dict[str, str]] = [
        {
            "check": f.check,
            "path": "" if f.path is None else str(f.path),
            "status": f.status,
            "detail": f.detail,
        }
        for f in check_files(home, cwd)
    ]
    try:
        registry = ModelRegistry(home, proxy=_proxy(home, cwd))
    except KnightcodeError as error:  # models.json: already reported above
        rows.append({"check": "providers", "path": "", "status": "skipped", "detail": f"{error}"})
    else:
        for warning in registry.load_errors:
            rows.append(
                {"check": "models.json", "path": "", "status": "warning", "detail": warning}
            )
        for finding in asyncio.run(check_providers(registry, offline=offline)):
            rows.append(
                {
                    "check": f"provider {finding.provider}",
                    "path": "",
                    "status": finding.status,
                    "detail": finding.detail,
                }
            )
    problems = sum(row["status"] == "problem" for row in rows)
    if as_json:
        json.dump({"problems": problems, "checks": rows}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for row in rows:
            where = f" {row['path']}" if row["path"] else ""
            click.echo(f"{_MARKS[row['status']]:8} {row['check']}{where}: {row['detail']}")
        click.echo(f"{problems} problem{'s' if problems != 1 else ''} found")
    sys.exit(2 if problems else 0)


def _proxy(home: Path, cwd: Path) -> str | None:
    """Settings ``httpProxy``, when the settings can be read (a broken file is reported above)."""
    from knightcode._config.loading import Settings
    from knightcode._errors import KnightcodeError

    try:
        return Settings.load(home, cwd, project_trusted=False).model.http_proxy
    except KnightcodeError:
        return None
