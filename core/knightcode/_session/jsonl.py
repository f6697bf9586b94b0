"""JSON Lines exactly as the reference tool writes and reads them.

Writing matches JavaScript ``JSON.stringify`` byte for byte: compact separators, raw UTF-8
(U+2028/U+2029 stay raw), lone surrogates escaped as ``\\udXXX``, and numbers formatted like
JavaScript (``1`` not ``1.0``, ``0.000003`` not ``3e-06``). Reading splits on LF bytes only, so
U+2028 inside a string never splits a line, and tolerates one trailing CR.

The common case stays on the C encoder: the slower JavaScript-compatible encoder runs only for
values holding a float whose Python spelling differs from JavaScript's, or a lone surrogate.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["dumps", "encode_line", "js_number", "parse_line"]

_fast = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_decoder = json.JSONDecoder(parse_constant=_reject_constant)
_SURROGATE = re.compile("[\ud800-\udfff]")


def js_number(value: float) -> str:
    """Spell a float like JavaScript's ``Number.prototype.toString`` (ECMA-262 7.1.12.1).

    Non-finite numbers become ``null``, as ``JSON.stringify`` writes them.
    """
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"  # also -0, which JavaScript prints as "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)  # shortest round-trip digits, which JavaScript uses too
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exp_text = text.partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    exponent = (int(exp_text) if exp_text else 0) - len(frac_part)  # value = digits * 10**exponent
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = k + exponent  # position of the decimal point relative to the digits
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        body = (
            (digits if k == 1 else digits[0] + "." + digits[1:])
            + ("e+" if e >= 0 else "e-")
            + str(abs(e))
        )
    return sign + body


def _float_differs(value: float) -> bool:
    # Python's repr agrees with JavaScript except for integral values (1.0 vs 1), non-finite
    # values, and magnitudes below 1e-4 (Python switches to 1e-05 where JavaScript writes 0.00001).
    if not math.isfinite(value):
        return True
    magnitude = abs(value)
    return (value.is_integer() and magnitude < 1e21) or magnitude < 1e-4


def _needs_js_encoder(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif kind is float and _float_differs(item):
            return True
    return False


def _encode_js(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_fast.encode(value))
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(js_number(value))
    elif isinstance(value, dict):
        out.append("{")
        first = True
        for key, item in value.items():
            if not first:
                out.append(",")
            first = False
            out.append(_fast.encode(key if isinstance(key, str) else str(key)))
            out.append(":")
            _encode_js(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _encode_js(item, out)
        out.append("]")
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _escape_surrogates(text: str) -> str:
    # A high+low pair held as two code points is one character to JavaScript: join them first,
    # then escape what is left alone, as well-formed JSON.stringify does.
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", joined)


def _encode(value: Any) -> str:
    # JavaScript-compatible text, lone surrogates not yet escaped.
    if not _needs_js_encoder(value):
        return _fast.encode(value)
    parts: list[str] = []
    _encode_js(value, parts)
    return "".join(parts)


def dumps(value: Any) -> str:
    """Serialise ``value`` exactly like JavaScript ``JSON.stringify`` (compact, raw Unicode)."""
    text = _encode(value)
    if not text.isascii() and _SURROGATE.search(text):
        text = _escape_surrogates(text)
    return text


def encode_line(value: Any) -> bytes:
    """One JSONL record: ``dumps(value)`` as UTF-8 plus a single LF."""
    text = _encode(value)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # only lone surrogates cannot be encoded
        return _escape_surrogates(text).encode("utf-8") + b"\n"


def parse_line(line: bytes) -> Any:
    """Parse one line (with or without its LF; one trailing CR tolerated).

    Invalid UTF-8 is replaced by U+FFFD, as the reference's ``readFileSync(…, "utf8")`` does, so
    one bad byte does not cost a whole entry. Raises :class:`ValueError` if the line is not JSON.
    ``NaN``/``Infinity`` literals, which JavaScript rejects, are rejected too.
    """
    return _decoder.decode(line.decode("utf-8", "replace"))
