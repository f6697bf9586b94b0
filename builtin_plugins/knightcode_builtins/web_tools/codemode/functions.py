"""Tools as Python functions: the signature each tool gets in a codemode script, and the listing
that tells the model about them.

A tool's JSON-schema parameters become ``name(required…, optional=None…)``: required arguments
first, each group in schema order, so ``read("a.txt")`` and ``read(path="a.txt", limit=20)`` both
work. The script side (``runtime.py``) builds the functions from :class:`FunctionSpec` data — no
Python source is generated from tool names or descriptions, so a strange one cannot inject code.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "CLASSIFY_DOC",
    "FunctionSpec",
    "describe_functions",
    "function_name",
    "function_spec",
]

_NOT_IDENTIFIER = re.compile(r"\W")
_SUMMARY_CHARS = 240
_PARAM_CHARS = 160

CLASSIFY_DOC = (
    "classify(model, state, questions, temperature=1.0)\n"
    "    Ask a classifier model typed questions about `state` (any JSON value); returns\n"
    "    {question id: answer}. `model` is 'provider/id'. A question is\n"
    '    {"type": "bool", "instructions": "…"} -> {"value", "probability", "confidence"},\n'
    '    {"type": "choice", "instructions": "…", "criteria": {"key": "description", …}}\n'
    '    -> {"choice", "probabilities", "confidence"}, or {"type": "score", "instructions":\n'
    '    "…", "criteria": ["low", …, "high"]} -> {"score", "level", "probabilities",\n'
    '    "confidence"}. Raises ToolError when the model is unknown or the questions are wrong.'
)


@dataclass(frozen=True)
class FunctionSpec:
    """One tool as a script function.

    :param name: the Python name (the tool's, made an identifier)
    :param tool: the tool's own name
    :param params: argument names in positional order (required ones first)
    :param required: the required ones among them
    :param doc: the function's docstring (the tool's description)
    """

    name: str
    tool: str
    params: tuple[str, ...]
    required: tuple[str, ...]
    doc: str

    def to_json(self) -> dict[str, object]:
        """What the script side reads (``functions.json``)."""
        return {
            "name": self.name,
            "tool": self.tool,
            "params": list(self.params),
            "required": list(self.required),
            "doc": self.doc,
        }

    def signature(self) -> str:
        """``read(path, offset=None, limit=None)``."""
        optional = [f"{name}=None" for name in self.params if name not in self.required]
        return f"{self.name}({', '.join([*self.required, *optional])})"


def function_name(tool: str) -> str:
    """The Python name of ``tool``: non-word characters become ``_``; a keyword or a name
    starting with a digit gets a ``_`` added.
    """
    name = _NOT_IDENTIFIER.sub("_", tool) or "_"
    if name[0].isdigit():
        name = f"_{name}"
    return f"{name}_" if keyword.iskeyword(name) else name


def _properties(parameters: Mapping[str, object]) -> dict[str, Mapping[str, object]]:
    properties = parameters.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    return {
        str(key): value if isinstance(value, Mapping) else {} for key, value in properties.items()
    }


def function_spec(tool: str, description: str, parameters: Mapping[str, object]) -> FunctionSpec:
    """The script function of a tool (arguments that are not Python names can still be passed
    through ``call_tool``).
    """
    names = [name for name in _properties(parameters) if name.isidentifier()]
    names = [name for name in names if not keyword.iskeyword(name)]
    raw_required = parameters.get("required")
    wanted = set(raw_required) if isinstance(raw_required, list) else set()
    required = tuple(name for name in names if name in wanted)
    optional = tuple(name for name in names if name not in wanted)
    return FunctionSpec(function_name(tool), tool, required + optional, required, description)


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _summary(description: str) -> str:
    """The description's first paragraph, on one line."""
    first = description.strip().split("\n\n", 1)[0]
    return _one_line(first, _SUMMARY_CHARS)


def _type_of(schema: Mapping[str, object]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(str(item) for item in kind)
    items = schema.get("items")
    if kind == "array" and isinstance(items, Mapping):
        return f"array of {_type_of(items)}"
    if isinstance(kind, str):
        return kind
    if "enum" in schema and isinstance(schema["enum"], list):
        return " | ".join(repr(item) for item in schema["enum"])
    return "any"


def describe_functions(
    specs: Iterable[tuple[FunctionSpec, Mapping[str, object]]],
) -> str:
    """The listing for the model: each function's signature, what it does, and its
    arguments with their types; ``classify`` last.

    :param specs: each function with its tool's JSON schema
    """
    blocks: list[str] = []
    for spec, parameters in specs:
        lines = [spec.signature(), f"    {_summary(spec.doc)}" if spec.doc.strip() else ""]
        properties = _properties(parameters)
        for name in spec.params:
            schema = properties.get(name, {})
            note = schema.get("description")
            kind = _type_of(schema) + ("" if name in spec.required else ", optional")
            text = f"    {name} ({kind})"
            if isinstance(note, str) and note.strip():
                text += f": {_one_line(note, _PARAM_CHARS)}"
            lines.append(text)
        blocks.append("\n".join(line for line in lines if line))
    blocks.append(CLASSIFY_DOC)
    return "\n\n".join(blocks)
