"""The ``grep`` tool: ``rg --json`` over the backend, results as ``path:line: text``."""

from __future__ import annotations

import base64
import json
import posixpath
from typing import TypedDict

from knightcode._plugins.definitions import ToolDefinition
from knightcode._tools.context import ToolContext
from knightcode._tools.errors import ToolError
from knightcode._tools.path_utils import resolve_to_cwd
from knightcode._tools.results import OnUpdate, ToolResult, raise_if_aborted, text_result, to_int
from knightcode._tools.ripgrep import LineSplitter, RipgrepRun, find_ripgrep, rg_failure
from knightcode._tools.truncate import (
    DEFAULT_MAX_BYTES,
    GREP_MAX_LINE_LENGTH,
    TruncationDetails,
    format_size,
    truncate_head,
    truncate_line,
)

__all__ = ["DEFAULT_GREP_LIMIT", "create_grep_tool"]

DEFAULT_GREP_LIMIT = 100


class GrepDetails(TypedDict, total=False):
    """``details`` of a grep result that was cut short."""

    matchLimitReached: int
    truncation: TruncationDetails
    linesTruncated: bool


GREP_PARAMETERS: dict[str, object] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": ("Regular expression to search for (or plain text with literal=true)"),
        },
        "path": {
            "type": "string",
            "description": "Directory or file to search (default: the working directory)",
        },
        "glob": {
            "type": "string",
            "description": "Only search files matching this glob, e.g. '*.py' or '**/test_*.py'",
        },
        "ignoreCase": {
            "type": "boolean",
            "description": "Match regardless of case (default: false)",
        },
        "literal": {
            "type": "boolean",
            "description": "Treat pattern as plain text, not a regex (default: false)",
        },
        "context": {
            "type": "number",
            "description": "Lines of context before and after each match (default: 0)",
        },
        "limit": {
            "type": "number",
            "description": f"Stop after this many matches (default: {DEFAULT_GREP_LIMIT})",
        },
    },
    "required": ["pattern"],
}

_MATCH_PREFIX = b'{"type":"match"'


def _json_text(value: object) -> str | None:
    """Rg's ``{"text": ...}`` or, for bytes that are not UTF-8, ``{"bytes": base64}``."""
    if not isinstance(value, dict):
        return None
    text, data = value.get("text"), value.get("bytes")
    if isinstance(text, str):
        return text
    if isinstance(data, str):
        return base64.b64decode(data).decode("utf-8", "replace")
    return None


class _Formatter:
    """Output lines for matches, reading files (through the backend) only for context."""

    def __init__(self, ctx: ToolContext, search_path: str, is_dir: bool, context: int) -> None:
        self._ctx = ctx
        self._prefix = search_path.rstrip("/") + "/"
        self._root = search_path
        self._is_dir = is_dir
        self._context = context
        self._files: dict[str, list[str]] = {}
        self.lines_truncated = False

    def path(self, file_path: str) -> str:
        if self._is_dir:
            if file_path.startswith(self._prefix):
                return file_path[len(self._prefix) :]
            relative = posixpath.relpath(file_path, self._root)
            if relative and not relative.startswith(".."):
                return relative
        return posixpath.basename(file_path)

    def _cut(self, text: str) -> str:
        cut, was_cut = truncate_line(text, GREP_MAX_LINE_LENGTH)
        self.lines_truncated |= was_cut
        return cut

    async def _file_lines(self, file_path: str) -> list[str]:
        if file_path not in self._files:
            try:
                text = (await self._ctx.backend.read_file(file_path)).decode("utf-8", "replace")
                self._files[file_path] = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            except OSError:
                self._files[file_path] = []
        return self._files[file_path]

    async def format(self, file_path: str, number: int, line_text: str | None) -> list[str]:
        shown = self.path(file_path)
        if self._context == 0 and line_text is not None:
            text = line_text.replace("\r\n", "\n").replace("\r", "")
            text = text.removesuffix("\n")
            return [f"{shown}:{number}: {self._cut(text)}"]
        lines = await self._file_lines(file_path)
        if not lines:
            return [f"{shown}:{number}: (unable to read file)"]
        block = []
        for current in range(
            max(1, number - self._context), min(len(lines), number + self._context) + 1
        ):
            text = self._cut(lines[current - 1].replace("\r", ""))
            block.append(
                f"{shown}:{current}: {text}" if current == number else f"{shown}-{current}- {text}"
            )
        return block


async def execute_grep(
    tool_call_id: str, args: dict[str, object], ctx: ToolContext, on_update: OnUpdate = None
) -> ToolResult:
    """Run the grep tool (see :func:`create_grep_tool`)."""
    raise_if_aborted(ctx)
    backend = ctx.backend
    rg = await find_ripgrep(backend)
    search_path = resolve_to_cwd(str(args.get("path") or "."), ctx.cwd, backend.home())
    info = await backend.stat(search_path)
    if info is None:
        raise ToolError(f"Path not found: {search_path}")
    context = max(0, to_int(args.get("context"), 0))
    limit = max(1, to_int(args.get("limit"), DEFAULT_GREP_LIMIT))
    # --no-require-git: honour .gitignore outside git repositories too, as find does.
    argv = [rg, "--json", "--line-number", "--color=never", "--hidden", "--no-require-git"]
    if args.get("ignoreCase"):
        argv.append("--ignore-case")
    if args.get("literal"):
        argv.append("--fixed-strings")
    if args.get("glob"):
        argv += ["--glob", str(args["glob"])]
    argv += ["--", str(args["pattern"]), search_path]

    run = RipgrepRun(ctx)
    splitter = LineSplitter()
    matches: list[tuple[str, int, str | None]] = []

    def on_output(chunk: bytes) -> None:
        if len(matches) >= limit:
            return
        for line in splitter.feed(chunk):
            # Only match events matter; skipping the rest unparsed keeps this loop cheap.
            if not line.startswith(_MATCH_PREFIX):
                continue
            try:
                data = json.loads(line)["data"]
            except (ValueError, KeyError, TypeError):
                continue
            if not isinstance(data, dict):
                continue
            file_path = _json_text(data.get("path"))
            number = data.get("line_number")
            if file_path is not None and isinstance(number, int):
                matches.append((file_path, number, _json_text(data.get("lines"))))
            if len(matches) >= limit:
                run.stop()
                return

    result = await run.run(argv, None, on_output)
    if not run.stopped_early and result.exit_code not in (0, 1):
        raise rg_failure(result)
    if not matches:
        return text_result("No matches found")
    formatter = _Formatter(ctx, search_path, info.is_dir, context)
    lines: list[str] = []
    for file_path, number, line_text in matches:
        lines += await formatter.format(file_path, number, line_text)
    truncation = truncate_head("\n".join(lines), max_lines=2**62)
    output = truncation.content
    details: GrepDetails = {}
    notices = []
    if len(matches) >= limit and run.stopped_early:
        notices.append(
            f"{limit} matches limit reached. Use limit={limit * 2} for more, or refine pattern"
        )
        details["matchLimitReached"] = limit
    if truncation.truncated:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        details["truncation"] = truncation.to_details()
    if formatter.lines_truncated:
        notices.append(
            f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
        )
        details["linesTruncated"] = True
    if notices:
        output += f"\n\n[{'. '.join(notices)}]"
    return text_result(output, details or None)


def create_grep_tool() -> ToolDefinition:
    """The ``grep`` tool definition."""
    return ToolDefinition(
        name="grep",
        label="grep",
        description=(
            "Search the contents of files for a regular expression (or literal text) and return "
            "the matching lines with their file paths and line numbers. Files ignored by "
            f".gitignore are skipped. At most {DEFAULT_GREP_LIMIT} matches or "
            f"{DEFAULT_MAX_BYTES // 1024}KB are returned (whichever comes first), and lines longer "
            f"than {GREP_MAX_LINE_LENGTH} characters are cut."
        ),
        parameters=GREP_PARAMETERS,
        execute=execute_grep,
        prompt_snippet="Search file contents by regex (skips .gitignore'd files)",
    )
