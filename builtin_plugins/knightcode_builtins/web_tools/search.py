"""``web_search``: the Brave Search API, its results as compact markdown for the model.

One GET of ``<baseUrl>/web/search`` with the key in ``X-Subscription-Token``. The key comes from
tools.json (``knightcode tools set-key brave``), else ``BRAVE_API_KEY``. What can go wrong is
said in words the model (and the user reading the transcript) can act on:

* no key → how to set one;
* 401/403 → the key is refused (which source it came from, never the key itself);
* 429 → a rate limit is retried after ``Retry-After`` when that is short enough (a bounded
  number of times), a monthly quota that is used up is reported as such and not retried;
* anything else → the status and Brave's own ``detail``.

httpx is imported on the first search, so registering the tool costs nothing at start-up.
The request runs in the knightcode process (it reads no file and runs no command, so a sandbox
has nothing to hold), and the call's abort signal stops it and any wait.
"""

from __future__ import annotations

import email.utils
import html
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode import ToolDefinition, __version__

from . import definitions
from .config import SearchConfig, ToolsConfigError, load_tools_config
from .definitions import SAFE_SEARCH, SEARCH_PARAMETERS
from .settings import agent_dir_of
from .tls import tls_context

if TYPE_CHECKING:
    import httpx

    from knightcode import AbortSignal, ToolContext, ToolResult

__all__ = [
    "PARAMETERS",
    "SearchResult",
    "WebSearchError",
    "brave_search",
    "format_results",
    "web_search_definition",
    "web_search_tool",
]

USER_AGENT = f"knightcode/{__version__} (web_search)"
FRESHNESS = re.compile(r"^(pd|pw|pm|py|\d{4}-\d{2}-\d{2}to\d{4}-\d{2}-\d{2})$")
NO_KEY = (
    "web_search needs a Brave Search API key: run 'knightcode tools set-key brave' "
    "(stored in <agent-dir>/tools.json, mode 0600) or set the BRAVE_API_KEY environment "
    "variable. Keys: https://brave.com/search/api/"
)

PARAMETERS = SEARCH_PARAMETERS


class WebSearchError(Exception):
    """A search that failed; the message is for the model and the user."""


@dataclass(frozen=True)
class SearchResult:
    """One web result."""

    title: str
    url: str
    snippet: str
    age: str | None


@dataclass(frozen=True)
class SearchRequest:
    """The checked arguments of one call."""

    query: str
    count: int
    freshness: str | None
    country: str | None
    safe_search: str


def _request(args: Mapping[str, object], config: SearchConfig) -> SearchRequest:
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        raise WebSearchError("query must be a non-empty string")
    count = args.get("count", config.count)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 20:
        raise WebSearchError("count must be a whole number from 1 to 20")
    freshness = args.get("freshness", config.freshness)
    if freshness is not None and (not isinstance(freshness, str) or not FRESHNESS.match(freshness)):
        raise WebSearchError("freshness must be pd, pw, pm, py or YYYY-MM-DDtoYYYY-MM-DD")
    country = args.get("country", config.country)
    if country is not None and (
        not isinstance(country, str) or len(country) != 2 or not country.isalpha()
    ):
        raise WebSearchError("country must be a two-letter country code such as 'us'")
    safe = args.get("safesearch", config.safe_search)
    if safe not in SAFE_SEARCH or not isinstance(safe, str):
        raise WebSearchError(f"safesearch must be one of {', '.join(SAFE_SEARCH)}")
    return SearchRequest(
        query.strip(), count, freshness, country.lower() if country else None, safe
    )


def _retry_after(response: httpx.Response) -> float | None:
    """``Retry-After`` in seconds (a number or an HTTP date); None when absent or unreadable."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_detail(response: httpx.Response) -> tuple[str | None, str | None]:
    """Brave's ``error.code`` and ``error.detail`` when the body has them."""
    try:
        body: object = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None, None
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None, None
    code, detail = error.get("code"), error.get("detail")
    return (code if isinstance(code, str) else None, detail if isinstance(detail, str) else None)


def _quota_used_up(response: httpx.Response, code: str | None) -> bool:
    """Whether a 429 is the plan's quota (not a per-second limit): Brave says QUOTA_LIMITED,
    or its ``X-RateLimit-Remaining`` (per-second, per-month) has the month at zero.
    """
    if code is not None and "QUOTA" in code.upper():
        return True
    remaining = [
        part.strip() for part in response.headers.get("x-ratelimit-remaining", "").split(",")
    ]
    return len(remaining) > 1 and remaining[-1] == "0"


async def brave_search(
    request: SearchRequest,
    config: SearchConfig,
    key: str,
    key_source: str,
    signal: AbortSignal,
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[SearchResult]:
    """Ask Brave; the results, or :class:`WebSearchError` saying why not."""
    import httpx  # here, not at the top: the plugin registers the tool on every start

    params: dict[str, str | int] = {
        "q": request.query,
        "count": request.count,
        "safesearch": request.safe_search,
    }
    if request.freshness:
        params["freshness"] = request.freshness
    if request.country:
        params["country"] = request.country
    headers = {
        "Accept": "application/json",
        "X-Subscription-Token": key,
        "User-Agent": USER_AGENT,
    }
    url = f"{config.base_url}/web/search"
    async with httpx.AsyncClient(
        timeout=config.timeout, transport=transport, verify=tls_context()
    ) as client:
        attempt = 0
        while True:
            try:
                response = await signal.guard(client.get(url, params=params, headers=headers))
            except httpx.TimeoutException as exc:
                raise WebSearchError(
                    f"Brave Search did not answer within {config.timeout:g} s"
                ) from exc
            except httpx.HTTPError as exc:
                raise WebSearchError(f"cannot reach Brave Search at {url}: {exc}") from exc
            if response.status_code == 200:
                return _parse(response)
            code, detail = _error_detail(response)
            said = f" ({detail})" if detail else ""
            if response.status_code in (401, 403):
                raise WebSearchError(
                    f"Brave Search refused the API key from {key_source} "
                    f"(HTTP {response.status_code}){said}; set a valid one with "
                    "'knightcode tools set-key brave'"
                )
            if response.status_code == 429:
                if _quota_used_up(response, code):
                    raise WebSearchError(
                        f"the Brave Search API quota of this key is used up (HTTP 429){said}; "
                        "it renews with the plan's period, or use another key"
                    )
                wait = _retry_after(response)
                if (
                    wait is not None
                    and wait <= config.max_retry_wait
                    and attempt < config.max_retries
                ):
                    attempt += 1
                    if not await signal.sleep(wait):
                        raise WebSearchError("web_search was aborted")
                    continue
                after = f"; retry after {wait:g} s" if wait is not None else ""
                tries = f" after {attempt} retr{'y' if attempt == 1 else 'ies'}" if attempt else ""
                raise WebSearchError(
                    f"Brave Search rate limit reached (HTTP 429){tries}{said}{after}"
                )
            raise WebSearchError(f"Brave Search failed with HTTP {response.status_code}{said}")


def _text(value: object) -> str:
    """A Brave string field as plain text: its ``<strong>`` highlights and entities removed."""
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(re.sub(r"</?[a-zA-Z][^>]*>", "", value)).split())


def _parse(response: httpx.Response) -> list[SearchResult]:
    try:
        body: object = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise WebSearchError("Brave Search answered with something that is not JSON") from exc
    web = body.get("web") if isinstance(body, dict) else None
    items = web.get("results") if isinstance(web, dict) else None
    results: list[SearchResult] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("url"), str):
            continue
        age = _text(item.get("age")) or _text(item.get("page_age")) or None
        results.append(
            SearchResult(
                title=_text(item.get("title")) or str(item["url"]),
                url=str(item["url"]),
                snippet=_text(item.get("description")),
                age=age,
            )
        )
    return results


def format_results(query: str, results: list[SearchResult]) -> str:
    """The results as a numbered markdown list: title linked to its URL, age, snippet."""
    if not results:
        return f"No web results for {query!r}."
    lines = [f"Web results for {query!r}:", ""]
    for number, result in enumerate(results, 1):
        age = f" — {result.age}" if result.age else ""
        lines.append(f"{number}. [{result.title}]({result.url}){age}")
        lines.append(f"   {result.url}")
        if result.snippet:
            lines.append(f"   {result.snippet}")
    return "\n".join(lines)


def _agent_dir(ctx: ToolContext) -> Path:
    agent_dir = agent_dir_of(ctx)
    if agent_dir is None:
        raise WebSearchError(
            "web_search runs inside a session: no agent directory to read tools.json"
        )
    return agent_dir


async def web_search_tool(
    tool_call_id: str, args: Mapping[str, object], ctx: ToolContext, on_update: object
) -> ToolResult:
    """The tool's ``execute``: search, and return the markdown list with the results as details."""
    agent_dir = _agent_dir(ctx)
    try:
        config = load_tools_config(agent_dir)
    except ToolsConfigError as exc:  # the model and the user see which key is wrong
        raise WebSearchError(str(exc)) from exc
    key = config.brave_key()
    if key is None:
        raise WebSearchError(NO_KEY)
    source = f"{config.source}" if config.brave_api_key else "BRAVE_API_KEY"
    request = _request(args, config.search)
    results = await brave_search(request, config.search, key, source, ctx.signal)
    return {
        "content": [{"type": "text", "text": format_results(request.query, results)}],
        "details": {
            "query": request.query,
            "results": [
                {"title": item.title, "url": item.url, "age": item.age} for item in results
            ],
        },
    }


def web_search_definition() -> ToolDefinition:
    """The ``web_search`` tool (built in ``definitions.py``, which imports this module on the
    first call).
    """
    return definitions.web_search_definition()
