"""``/tools``: the tools and tools.json through the extension UI (a menu of ``ctx.ui.select``).

::

    Tools: 5 of 9 on                    -> every tool, on/off, origin; enter switches one
    Brave key: set (tools.json)         -> set it (masked input) or clear it
    Scratchpad: inlineChars 40000 · …   -> type a value
    Gate: enabled off · classifier …    -> switch, pick a classifier, type a threshold
    Codemode: enabled off · …           -> switch, type a value

Esc goes back one level and closes the menu at the top. It uses only ``ctx.ui``, so it works
wherever someone can answer: the terminal UI and an RPC client. A value is checked like the file
(:mod:`.edit`): a wrong one is reported with the file and the key and nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from knightcode import KnightcodeError

from .config import (
    ToolsConfig,
    ToolsConfigError,
    describe_config,
    load_tools_config,
    tools_json_path,
)
from .edit import flat_settings, format_value, parse_value, set_value, settable_keys

if TYPE_CHECKING:
    from pathlib import Path

    from knightcode import HookContext

__all__ = ["tools_command"]


@dataclass(frozen=True)
class _Setting:
    """One editable value of a section: its key in the section and what it means."""

    key: str
    meaning: str


@dataclass(frozen=True)
class _Section:
    """A tools.json section the menu edits."""

    name: str
    title: str
    settings: tuple[_Setting, ...]


_SECTIONS = (
    _Section(
        "scratchpad",
        "Scratchpad",
        (
            _Setting("inlineChars", "results up to this many characters go to the context whole"),
            _Setting("headChars", "of a bigger result, the context gets this many characters"),
            _Setting("dir", "where the files go; none: the session's scratchpad directory"),
        ),
    ),
    _Section(
        "gate",
        "Gate",
        (
            _Setting("enabled", "ask a classifier before fetched pages and matching calls"),
            _Setting("classifier", "the classifier model asked"),
            _Setting("thresholds.allow", "a probability below this lets it through (0 to 1)"),
            _Setting("thresholds.block", "a probability above this blocks it (0 to 1)"),
        ),
    ),
    _Section(
        "codemode",
        "Codemode",
        (
            _Setting("enabled", "one code tool that calls the others from a Python script"),
            _Setting("timeout", "seconds a script may run"),
            _Setting("maxOutputChars", "characters of a script's output kept"),
        ),
    ),
)

_NO_CLASSIFIER = "none (no classifier)"
_OTHER_CLASSIFIER = "another one (type its provider/id)…"


async def tools_command(args: str, ctx: HookContext) -> None:
    """``/tools``: the menu; without anyone to answer, where to go instead."""
    if not ctx.has_ui:
        ctx.ui.notify(
            "/tools is a menu for the interactive UI or an RPC client; here use "
            "'knightcode tools' (list, enable, disable, set, set-key, show)",
            "warning",
        )
        return
    await _Menu(ctx).run()


class _Menu:
    """The menu's levels; each ``async`` method is one level and returns when Esc is pressed."""

    def __init__(self, ctx: HookContext) -> None:
        self.ctx = ctx
        self.ui = ctx.ui
        self.path: Path = tools_json_path(ctx.agent_dir)

    def load(self) -> ToolsConfig | None:
        """tools.json as it is now (another process may have changed it); None when broken,
        after saying why.
        """
        try:
            return load_tools_config(self.ctx.agent_dir)
        except ToolsConfigError as exc:
            self.ui.notify(f"{exc} (fix the file to edit it here)", "error")
            return None

    async def run(self) -> None:
        """The top level: one line per part, with what it is set to now."""
        while True:
            try:
                config: ToolsConfig | None = load_tools_config(self.ctx.agent_dir)
            except ToolsConfigError:
                config = None  # the tool list still works; a section says why when opened
            options = [self.tools_label(), *self.config_labels(config)]
            choice = await self.ui.select(f"/tools · {self.path}", options)
            if choice is None:
                return
            index = options.index(choice)
            if index == 0:
                await self.tools()
            elif index == 1:
                await self.brave_key()
            else:
                await self.section(_SECTIONS[index - 2])

    # --- labels -----------------------------------------------------------------------------

    def tools_label(self) -> str:
        agent = self.ctx.agent
        if agent is None:
            return "Tools"
        tools = agent.available_tools()
        return f"Tools: {sum(tool.active for tool in tools)} of {len(tools)} on"

    def config_labels(self, config: ToolsConfig | None) -> list[str]:
        """The Brave key and section lines; ``?`` values when the file is broken."""
        if config is None:
            return ["Brave key: ?", *(f"{s.title}: tools.json has an error" for s in _SECTIONS)]
        values = flat_settings(config)
        lines = [f"Brave key: {_key_state(config)}"]
        for section in _SECTIONS:
            shown = " · ".join(
                f"{item.key} {format_value(values[f'{section.name}.{item.key}'])}"
                for item in section.settings
            )
            lines.append(f"{section.title}: {shown}")
        return lines

    # --- the tools --------------------------------------------------------------------------

    async def tools(self) -> None:
        """Every tool with its state and origin; choosing one switches it for this session (from
        the next request) and makes that the default of new sessions (settings
        ``tools.enabled``).
        """
        agent = self.ctx.agent
        if agent is None:  # a command runs in a session; this is for safety only
            self.ui.notify("no session is running: use 'knightcode tools enable/disable'", "error")
            return
        while True:
            tools = agent.available_tools()
            width = max(len(tool.name) for tool in tools)
            options = [
                f"{tool.name:<{width}}  {'on ' if tool.active else 'off'}  {tool.origin}"
                for tool in tools
            ]
            choice = await self.ui.select("Tools · enter switches one on or off", options)
            if choice is None:
                return
            tool = tools[options.index(choice)]
            try:
                agent.set_tool_enabled(tool.name, not tool.active, save=True)
            except (ValueError, KnightcodeError) as exc:  # gone on a reload; settings unwritable
                self.ui.notify(str(exc), "error")
                continue
            state = "off" if tool.active else "on"
            self.ui.notify(
                f"{tool.name} {state} from the next request, and for new sessions "
                f"(tools.enabled in {self.ctx.agent_dir / 'settings.json'})",
                "info",
            )

    # --- the Brave key ----------------------------------------------------------------------

    async def brave_key(self) -> None:
        """Set (masked) or clear the key; only ever shown as set or not set, and where from."""
        while True:
            config = self.load()
            if config is None:
                return
            options = ["Set a new key"]
            if config.brave_api_key:
                options.append("Clear the key in tools.json")
            choice = await self.ui.select(f"Brave Search key: {_key_state(config)}", options)
            if choice is None:
                return
            if choice == options[0]:
                await self.set_brave_key()
            else:
                self.store_brave_key(None)

    async def set_brave_key(self) -> None:
        key = await self.ui.input(
            "Brave Search API key (stored in tools.json, mode 0600)",
            "paste the key; it is not shown",
            secret=True,
        )
        if key is None or not key.strip():
            return
        self.store_brave_key(key)

    def store_brave_key(self, key: str | None) -> None:
        from .config import set_brave_key

        try:
            path = set_brave_key(self.ctx.agent_dir, key)
        except ToolsConfigError as exc:
            self.ui.notify(str(exc), "error")
            return
        done = "Stored the Brave key in" if key is not None else "Removed the Brave key from"
        self.ui.notify(f"{done} {path} (mode 0600)", "info")

    # --- tools.json sections ----------------------------------------------------------------

    async def section(self, section: _Section) -> None:
        """One section's values; a switch toggles, a classifier is picked, the rest typed."""
        while True:
            config = self.load()
            if config is None:
                return
            values = flat_settings(config)
            options = [
                f"{item.key}: {format_value(values[f'{section.name}.{item.key}'])}"
                for item in section.settings
            ]
            choice = await self.ui.select(f"{section.title} · {self.path}", options)
            if choice is None:
                return
            item = section.settings[options.index(choice)]
            key = f"{section.name}.{item.key}"
            current = values[key]
            if isinstance(current, bool):
                self.store(key, not current)
            elif key == "gate.classifier":
                await self.pick_classifier(current)
            else:
                await self.type_value(key, item, current)

    async def type_value(self, key: str, item: _Setting, current: object) -> None:
        """Ask for a new value: empty restores the default, Esc keeps the current one."""
        default = format_value(settable_keys()[key])
        text = await self.ui.input(
            f"{key}: {item.meaning}",
            f"now {format_value(current)}; empty for the default ({default})",
        )
        if text is None:
            return
        self.store(key, parse_value(key, text) if text.strip() else None)

    async def pick_classifier(self, current: object) -> None:
        """The registry's classifier models, none, or one typed (its server may be down now)."""
        registry = self.ctx.model_registry
        refs = [model.ref for model in registry.classifiers] if registry is not None else []
        options = [*refs, _NO_CLASSIFIER, _OTHER_CLASSIFIER]
        choice = await self.ui.select(f"gate.classifier: now {format_value(current)}", options)
        if choice is None:
            return
        if choice == _NO_CLASSIFIER:
            self.store("gate.classifier", None)
        elif choice == _OTHER_CLASSIFIER:
            typed = await self.ui.input("gate.classifier", "provider/model id")
            if typed is not None and typed.strip():
                self.store("gate.classifier", typed.strip())
        else:
            self.store("gate.classifier", choice)

    def store(self, key: str, value: object) -> None:
        """Write one value; a wrong one is refused with the file's message, nothing written."""
        try:
            path = set_value(self.ctx.agent_dir, key, value)
        except ToolsConfigError as exc:
            self.ui.notify(str(exc), "error")
            return
        shown = "the default" if value is None else format_value(value)
        self.ui.notify(f"{key} = {shown} (in {path})", "info")
        if key == "codemode.enabled":  # like a tool switch: from the next request
            from .codemode.enable import sync_codemode

            sync_codemode(self.ctx, announce=True)


def _key_state(config: ToolsConfig) -> str:
    """``set (tools.json)``, ``set (BRAVE_API_KEY)`` or ``not set``: never the key."""
    return str(describe_config(config)["braveApiKey"])
