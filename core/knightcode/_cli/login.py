"""``knightcode login PROVIDER`` / ``knightcode logout PROVIDER``: logins from a terminal or a
script, without the UI.

Subscription providers run their OAuth flow (the URL and instructions go to stderr; a redirect URL
may be pasted on stdin). Other providers read an API key: hidden from the terminal, or one line
from stdin (``printf %s "$KEY" | knightcode login openai``). Nothing secret is ever printed.
"""

from __future__ import annotations

import asyncio
import getpass
import sys
import threading

import click

from knightcode._auth.flow import LoginCancelled, LoginError
from knightcode._auth.providers import OAUTH_PROVIDERS

__all__ = ["login", "logout"]


class _TerminalIO:
    """:class:`~knightcode._auth.flow.LoginIO` on stderr and stdin."""

    def __init__(self, browser: bool) -> None:
        self.browser = browser

    def show(self, url: str, instructions: str) -> None:
        from knightcode._auth.login import open_browser

        _say(f"Open this URL in a browser:\n\n  {url}\n\n{instructions}")
        if self.browser:
            open_browser(url)

    def progress(self, message: str) -> None:
        _say(message)

    async def prompt(self, message: str, placeholder: str = "") -> str | None:
        if sys.stdin.isatty():
            _say(f"{message}:")
        # A daemon thread: a pending read must not keep the process alive after the callback.
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()

        def read() -> None:
            line = sys.stdin.readline()
            loop.call_soon_threadsafe(_settle, answer, line.strip())

        threading.Thread(target=read, daemon=True).start()
        return await answer


def _settle(future: asyncio.Future[str], value: str) -> None:
    if not future.done():
        future.set_result(value)


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@click.command("login")
@click.argument("provider")
@click.option("--enterprise", metavar="DOMAIN", help="GitHub Enterprise host (github-copilot).")
@click.option("--no-browser", is_flag=True, help="Print the URL only; do not open a browser.")
def login(provider: str, enterprise: str | None, no_browser: bool) -> None:
    """Log in to PROVIDER: a subscription (anthropic, openai-codex, github-copilot) through
    its browser or device login, any other provider by storing its API key. Credentials go to
    <agent-dir>/auth.json (readable by you only).
    """
    from knightcode._auth.copilot import normalize_domain
    from knightcode._auth.login import log_in
    from knightcode._config.paths import agent_dir
    from knightcode._llm.registry import ModelRegistry

    registry = ModelRegistry(agent_dir())
    if provider not in registry.providers:
        raise click.UsageError(
            f"unknown provider {provider!r}; known: {', '.join(registry.providers)}"
        )
    assert registry.auth is not None and registry.oauth is not None
    if provider not in OAUTH_PROVIDERS:
        key = _read_key(provider)
        registry.auth.set(provider, key)
        click.echo(f"saved the {provider} API key in {registry.auth.path}")
        return
    try:
        domain = normalize_domain(enterprise or "")
        models = [model.id for model in registry.models if model.provider == provider]
        io = _TerminalIO(not no_browser)
        asyncio.run(log_in(registry.oauth, provider, io, enterprise=domain, model_ids=models))
    except KeyboardInterrupt:
        raise LoginCancelled("login cancelled") from None
    except LoginError as exc:
        raise LoginError(f"login to {provider} failed: {exc}") from None
    click.echo(f"logged in to {OAUTH_PROVIDERS[provider].name}; saved in {registry.auth.path}")


def _read_key(provider: str) -> str:
    if sys.stdin.isatty():
        key = getpass.getpass(f"API key for {provider}: ", stream=sys.stderr)
    else:
        key = sys.stdin.readline()
    key = key.strip()
    if not key:
        raise click.UsageError("no API key given (type it, or pipe it on stdin)")
    return key


@click.command("logout")
@click.argument("provider")
def logout(provider: str) -> None:
    """Remove what auth.json holds for PROVIDER (a subscription login or an API key)."""
    from knightcode._config.paths import agent_dir
    from knightcode._llm.keys import AUTH_FILENAME, AuthStorage

    auth = AuthStorage(agent_dir() / AUTH_FILENAME)
    if auth.remove(provider):
        click.echo(f"logged out of {provider}")
    else:
        click.echo(f"{provider} had no stored login or key")
