"""The three tools' definitions, cheap to build: names, descriptions and argument schemas here,
the work in modules imported on the first call.

``register_tools`` runs on every start, and the modules behind the tools (httpx set-up, the
tools.json dataclasses, the codemode runtime) cost about 20 ms to import — more than the rest of
the plugin. A session that never searches, fetches or runs a script never pays it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal

from knightcode import ToolDefinition

if TYPE_CHECKING:
    from knightcode import ToolContext, ToolResult

    from .fetch import FetchSettings

__all__ = [
    "SAFE_SEARCH",
    "code_definition",
    "web_fetch_definition",
    "web_search_definition",
]

SafeSearch = Literal["off", "moderate", "strict"]
SAFE_SEARCH: tuple[SafeSearch, ...] = ("off", "moderate", "strict")

SEARCH_PARAMETERS: dict[str, object] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to search the web for"},
        "count": {
            "type": "integer",
            "minimum": 1,
            "maximum": 20,
            "description": "How many results (1-20; default from tools.json, else 5)",
        },
        "freshness": {
            "type": "string",
            "description": (
                "Only results this recent: pd (a day), pw (a week), pm (a month), py (a year) "
                "or a range YYYY-MM-DDtoYYYY-MM-DD"
            ),
        },
        "country": {
            "type": "string",
            "description": "Two-letter country code the results are for, e.g. us, de",
        },
        "safesearch": {
            "type": "string",
            "enum": list(SAFE_SEARCH),
            "description": "Adult content filter (default moderate)",
        },
    },
    "required": ["query"],
}

FETCH_PARAMETERS: Mapping[str, object] = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "description": "The http or https URL to fetch"},
        "raw": {
            "type": "boolean",
            "description": "Return HTML as it came instead of the extracted markdown",
        },
    },
    "required": ["url"],
}

CODE_DESCRIPTION = """\
Run a short Python 3 script whose functions are your other tools, and get back what it prints.
Do several steps in one script — read files, grep, run commands, fetch pages, classify — instead \
of one tool call each, and print only what you need.

- Each tool is a function returning the tool's text, with its arguments as keywords \
(required ones may be positional): `read("src/app.py", limit=40)`, `bash("pytest -q")`, \
`grep(pattern="TODO", path="src")`. The functions of this session are listed in the system \
prompt under "Codemode functions"; `help(read)` prints one's description.
- A failed or blocked call raises `ToolError` (`str(error)` says why); catch it to carry on.
- `classify(model, state, questions)` asks a classifier model typed questions and returns \
the probabilities.
- The script runs in the working directory with a timeout; stdout and stderr come back (long \
output is cut in the middle); an uncaught exception returns its traceback as an error."""

CODE_PARAMETERS: dict[str, object] = {
    "type": "object",
    "properties": {
        "script": {
            "type": "string",
            "description": "Python 3 source; call the tools as functions and print the results",
        },
        "timeout": {
            "type": "number",
            "description": "Seconds before the script is killed (default: tools.json "
            "codemode.timeout, 120)",
        },
    },
    "required": ["script"],
}

OnUpdate = Callable[["ToolResult"], object]


def web_search_definition() -> ToolDefinition:
    """The ``web_search`` tool (``search.py`` does the work)."""

    async def execute(
        tool_call_id: str, args: Mapping[str, object], ctx: ToolContext, on_update: object
    ) -> ToolResult:
        from .search import web_search_tool

        return await web_search_tool(tool_call_id, args, ctx, on_update)

    return ToolDefinition(
        name="web_search",
        label="Web search",
        description=(
            "Search the web (Brave Search). Returns titles, URLs, snippets and ages as a "
            "markdown list; fetch a result with web_fetch to read it."
        ),
        parameters=SEARCH_PARAMETERS,
        execute=execute,
        prompt_snippet="web_search: search the web for current information",
    )


def web_fetch_definition(
    settings: FetchSettings | Callable[[ToolContext], FetchSettings] | None = None,
) -> ToolDefinition:
    """The ``web_fetch`` tool (``fetch.py`` does the work).

    :param settings: fixed settings, or a function of the call's context that returns them (read
        ``tools.json`` there, so edits apply without a restart); None: the defaults
    """

    async def execute(
        tool_call_id: str, args: Mapping[str, object], ctx: ToolContext, on_update: object
    ) -> ToolResult:
        from .fetch import FetchSettings, fetch_for_tool

        if settings is None:
            chosen = FetchSettings()
        elif isinstance(settings, FetchSettings):
            chosen = settings
        else:
            chosen = settings(ctx)
        return await fetch_for_tool(args, chosen, ctx)

    return ToolDefinition(
        name="web_fetch",
        label="Fetch",
        description=(
            "Fetch a web page or file by URL and return it as readable text: HTML as markdown "
            "(main content only), PDF as text, text and JSON as they are. Long results are "
            "saved whole to a scratchpad file whose path is given; read or grep that file "
            "rather than fetching again."
        ),
        parameters=FETCH_PARAMETERS,
        execute=execute,
        prompt_snippet="web_fetch: fetch a URL as readable markdown/text",
    )


def code_definition() -> ToolDefinition:
    """Codemode's ``code`` tool (``codemode/tool.py`` does the work)."""

    async def execute(
        tool_call_id: str, args: dict[str, object], ctx: ToolContext, on_update: OnUpdate
    ) -> ToolResult:
        from .codemode.tool import run_code

        return await run_code(tool_call_id, args, ctx, on_update)

    return ToolDefinition(
        name="code",
        description=CODE_DESCRIPTION,
        parameters=CODE_PARAMETERS,
        execute=execute,
        label="Code",
        prompt_snippet="Run a Python script that calls the other tools as functions",
        default_active=False,  # offered in codemode (enable.py), or when switched on by hand
    )
