"""The ``find`` tool: files by glob pattern, from ``rg --files`` filtered with fd's glob rules."""

from __future__ import annotations

from typing import TypedDict

from knightcode._plugins.definitions import ToolDefinition
from knightcode._tools.context import ToolContext
from knightcode._tools.errors import ToolError
from knightcode._tools.glob_match import compile_glob, type_glob
from knightcode._tools.path_utils import resolve_to_cwd
from knightcode._tools.results import OnUpdate, ToolResult, raise_if_aborted, text_result, to_int
from knightcode._tools.ripgrep import RipgrepRun, find_ripgrep, rg_failure
from knightcode._tools.truncate import (
    DEFAULT_MAX_BYTES,
    TruncationDetails,
    format_size,
    truncate_head,
)

__all__ = ["DEFAULT_FIND_LIMIT", "create_find_tool", "rg_files_argv"]

DEFAULT_FIND_LIMIT = 1000


class FindDetails(TypedDict, total=False):
    """``details`` of a find result that was cut short."""

    resultLimitReached: int
    truncation: TruncationDetails


FIND_PARAMETERS: dict[str, object] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": (
                "Glob for the files to find, e.g. '*.py', '**/*.json' or 'src/**/test_*.py'"
            ),
        },
        "path": {
            "type": "string",
            "description": "Directory to search (default: the working directory)",
        },
        "limit": {
            "type": "number",
            "description": f"Stop after this many results (default: {DEFAULT_FIND_LIMIT})",
        },
    },
    "required": ["pattern"],
}


def rg_files_argv(rg: str, pattern: str) -> list[str]:
    """The ``rg`` command listing the candidate files for ``pattern`` (run in the search root).

    rg's own ``--glob`` would override .gitignore (fd keeps ignoring), so rg lists the files that
    survive the ignore rules and the pattern is applied to the listing; a file type made from the
    pattern's last component narrows the listing first, because types do respect ignore rules.
    """
    argv = [rg, "--files", "--hidden", "--no-require-git", "--color=never"]
    name_glob = type_glob(pattern)
    if name_glob is not None:
        argv += ["--type-add", f"kcfind:{name_glob}", "--type", "kcfind"]
    return argv


async def execute_find(
    tool_call_id: str, args: dict[str, object], ctx: ToolContext, on_update: OnUpdate = None
) -> ToolResult:
    """Run the find tool (see :func:`create_find_tool`)."""
    raise_if_aborted(ctx)
    backend = ctx.backend
    rg = await find_ripgrep(backend)
    pattern = str(args["pattern"])
    search_path = resolve_to_cwd(str(args.get("path") or "."), ctx.cwd, backend.home())
    info = await backend.stat(search_path)
    if info is None:
        raise ToolError(f"Path not found: {search_path}")
    if not info.is_dir:
        raise ToolError(f"Not a directory: {search_path}")
    limit = max(1, to_int(args.get("limit"), DEFAULT_FIND_LIMIT))
    matcher = compile_glob(pattern)
    argv = rg_files_argv(rg, pattern)
    run = RipgrepRun(ctx)
    found: list[str] = []
    partial = b""
    root = search_path.rstrip("/")

    def on_output(chunk: bytes) -> None:
        nonlocal partial
        if len(found) >= limit:
            return
        data = partial + chunk
        end = data.rfind(b"\n") + 1
        partial = data[end:]
        listing = data[:end].decode("utf-8", "replace")
        if matcher.absolute:
            paths = listing.splitlines()
            hits = [p for p in paths if matcher.regex.fullmatch(f"{root}/{p}")]
        else:
            hits = matcher.matching_lines(listing)
        found.extend(hits)
        if len(found) >= limit:
            run.stop()

    # rg runs in the search directory with no path argument, so it prints relative paths.
    result = await run.run(argv, search_path, on_output)
    if partial and not run.stopped_early:
        on_output(b"\n")
    if not found:
        if not run.stopped_early and result.exit_code not in (0, 1):
            raise rg_failure(result)
        return text_result("No files found matching pattern")
    # rg walks in parallel; sorting makes the listing stable from one call to the next.
    results = sorted(found[:limit])
    truncation = truncate_head("\n".join(results), max_lines=2**62)
    output = truncation.content
    details: FindDetails = {}
    notices = []
    if len(results) >= limit:
        notices.append(
            f"{limit} results limit reached. Use limit={limit * 2} for more, or refine pattern"
        )
        details["resultLimitReached"] = limit
    if truncation.truncated:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        details["truncation"] = truncation.to_details()
    if notices:
        output += f"\n\n[{'. '.join(notices)}]"
    return text_result(output, details or None)


def create_find_tool() -> ToolDefinition:
    """The ``find`` tool definition."""
    return ToolDefinition(
        name="find",
        label="find",
        description=(
            "Find files whose names or paths match a glob pattern; paths are returned relative to "
            "the searched directory. Files ignored by .gitignore are skipped. At most "
            f"{DEFAULT_FIND_LIMIT} results or {DEFAULT_MAX_BYTES // 1024}KB are returned "
            "(whichever comes first)."
        ),
        parameters=FIND_PARAMETERS,
        execute=execute_find,
        prompt_snippet="Find files by glob pattern (skips .gitignore'd files)",
    )
