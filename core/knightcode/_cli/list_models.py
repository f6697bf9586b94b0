"""``knightcode --list-models [SEARCH]``: the models this set-up can use, as a table, then exit.

The reference prints the models whose provider has a key (``provider model context max-out
thinking images``), narrowed by a fuzzy search over ``provider id`` and sorted by provider then
id; knightcode adds the prices. No session is opened and no agent built, so it answers in the time
``--help`` takes. The only network traffic is asking discovering providers (a llama.cpp router)
for their models, bounded by :data:`DISCOVERY_LIMIT`: a router that does not answer in time is
named on stderr and the rest of the table is printed all the same.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from knightcode._cli.main_command import RunRequest
    from knightcode._llm.registry import ModelRegistry
    from knightcode._llm.types import Model
    from knightcode._plugins.host import PluginHost
    from knightcode._plugins.planning import LoadPlan

__all__ = ["DISCOVERY_LIMIT", "format_tokens", "list_models", "model_table"]

DISCOVERY_LIMIT = 2.0
"""Seconds the discovering providers get, together, before the table is printed without them."""

NO_MODELS = (
    "No models available: set an API key (see docs/models.md) or describe an endpoint in "
    "models.json."
)
HEADERS = ("provider", "model", "context", "max-out", "thinking", "images", "cost-in", "cost-out")


def format_tokens(count: int) -> str:
    """``200000`` -> ``200K``, ``1048576`` -> ``1M``, as the reference writes token counts."""
    for size, suffix in ((1_000_000, "M"), (1_000, "K")):
        if count >= size:
            value = count / size
            return f"{value:.0f}{suffix}" if value.is_integer() else f"{value:.1f}{suffix}"
    return str(count)


def _price(dollars: float) -> str:
    return f"{dollars:g}" if dollars else "-"


def model_table(models: Sequence[Model]) -> list[str]:
    """The table's lines: a header, then one row per model; columns two spaces apart."""
    rows = [HEADERS] + [
        (
            model.provider,
            model.id,
            format_tokens(model.context_window),
            format_tokens(model.max_tokens),
            "yes" if model.reasoning else "no",
            "yes" if "image" in model.input else "no",
            _price(model.cost.input),
            _price(model.cost.output),
        )
        for model in models
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(len(HEADERS))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def matching(models: Sequence[Model], search: str) -> list[Model]:
    """``models`` narrowed by a fuzzy ``search`` over ``provider id`` (every word must match),
    sorted by provider, then id.
    """
    found = list(models)
    if search.strip():  # the fuzzy matcher lives with the UI's selectors: imported only if needed
        from knightcode._modes.interactive.dialogs.fuzzy import fuzzy_filter

        found = fuzzy_filter(models, search, lambda model: f"{model.provider} {model.id}")
    return sorted(found, key=lambda model: (model.provider, model.id))


async def _discover(registry: ModelRegistry, errors: TextIO) -> None:
    """Ask the discovering providers for their models, within :data:`DISCOVERY_LIMIT`."""
    if not registry.discovering_providers:
        return
    try:
        await asyncio.wait_for(registry.refresh_models(), DISCOVERY_LIMIT)
    except TimeoutError:
        names = ", ".join(registry.discovering_providers)
        print(
            f"knightcode: note: {names} did not list its models within {DISCOVERY_LIMIT:g} s",
            file=errors,
        )
        return
    for provider, reason in registry.discovery_errors.items():
        print(f"knightcode: note: {provider} models not listed: {reason}", file=errors)


async def list_models(request: RunRequest, host: PluginHost, plan: LoadPlan) -> int:
    """Print the table of usable models matching ``request.list_models``; exit status 0."""
    from knightcode._modes.setup import model_registry

    assert host.options is not None and request.list_models is not None
    registry = model_registry(host, plan.settings, host.options.agent_dir)
    try:
        for problem in registry.load_errors:
            print(f"knightcode: warning: {problem}", file=sys.stderr)
        if request.api_key and request.provider:
            registry.set_runtime_api_key(request.provider, request.api_key)
        await _discover(registry, sys.stderr)
        available = registry.available()
        found = matching(available, request.list_models)
        if not available:
            lines = [NO_MODELS]
        elif not found:
            lines = [f'No models matching "{request.list_models}"']
        else:
            lines = model_table(found)
        _write("".join(line + "\n" for line in lines), request.output)
        return 0
    finally:
        await registry.aclose()


def _write(text: str, output: IO[bytes] | None) -> None:
    """To stdout, or to the real stdout when ``-p``/``--mode`` took it over before plugins
    loaded (see ``run_main``). A reader that went away (``| head``) had what it wanted.
    """
    try:
        if output is None:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            output.write(text.encode("utf-8"))
            output.flush()
    except BrokenPipeError:
        # Nothing more can be written; point stdout at /dev/null so the interpreter's own
        # flush at exit does not complain about the closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
