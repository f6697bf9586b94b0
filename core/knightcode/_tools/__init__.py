"""The built-in tools (read, bash, edit, write, grep, find, ls) and the execution backend they
run on. See ``docs/tools.md``.
"""

from knightcode._tools.backend import DirEntry, ExecResult, ExecutionBackend, FileInfo
from knightcode._tools.bash import create_bash_tool
from knightcode._tools.builtin import BUILTIN_TOOL_NAMES, DEFAULT_ACTIVE_TOOLS, create_builtin_tools
from knightcode._tools.context import ToolContext
from knightcode._tools.definition import BuiltinToolDefinition
from knightcode._tools.edit import create_edit_tool, prepare_edit_arguments
from knightcode._tools.errors import ToolError
from knightcode._tools.find import create_find_tool
from knightcode._tools.grep import create_grep_tool
from knightcode._tools.local_backend import LocalBackend
from knightcode._tools.ls import create_ls_tool
from knightcode._tools.read import create_read_tool
from knightcode._tools.results import ToolResult
from knightcode._tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    GREP_MAX_LINE_LENGTH,
    format_size,
    truncate_head,
    truncate_tail,
)
from knightcode._tools.write import create_write_tool

__all__ = [
    "BUILTIN_TOOL_NAMES",
    "DEFAULT_ACTIVE_TOOLS",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "GREP_MAX_LINE_LENGTH",
    "BuiltinToolDefinition",
    "DirEntry",
    "ExecResult",
    "ExecutionBackend",
    "FileInfo",
    "LocalBackend",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "create_bash_tool",
    "create_builtin_tools",
    "create_edit_tool",
    "create_find_tool",
    "create_grep_tool",
    "create_ls_tool",
    "create_read_tool",
    "create_write_tool",
    "format_size",
    "prepare_edit_arguments",
    "truncate_head",
    "truncate_tail",
]
