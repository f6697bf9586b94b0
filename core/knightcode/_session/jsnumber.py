"""JavaScript's spelling of numbers, and the exact (slow) encoder for values whose floats need it.

Python's ``repr`` and JavaScript's ``Number.prototype.toString`` pick the same shortest digits
but lay them out differently: Python writes ``1.0``, ``3e-06``, ``1e+16`` and ``-0.0`` where
JavaScript writes ``1``, ``0.000003``, ``10000000000000000`` and ``0``. :mod:`~._session.jsonl`
encodes with the C encoder and calls :func:`encode_js` only for the rare value that holds such a
float (or NaN/infinity, which ``JSON.stringify`` writes as ``null``).
"""

from __future__ import annotations

import math
from json.encoder import encode_basestring

__all__ = ["encode_js", "float_differs", "js_number"]

_EXACT_INTEGERS = 2.0**53  # below this, an integral float's digits are those of int(value)


def js_number(value: float) -> str:
    """Spell a float like JavaScript's ``Number.prototype.toString`` (ECMA-262 7.1.12.1).

    Non-finite numbers become ``null``, as ``JSON.stringify`` writes them.
    """
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"  # also -0, which JavaScript prints as "0"
    if value.is_integer() and abs(value) < _EXACT_INTEGERS:
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
        # 2**60 is "1152921504606847000" (shortest digits, then zeros), not int()'s digits.
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


def float_differs(value: float) -> bool:
    """Whether Python's ``repr`` of ``value`` differs from JavaScript's spelling.

    They agree except for integral values below 1e21 (``1.0``, ``1e+16``), non-finite values,
    and magnitudes below 1e-4 (Python switches to ``1e-05`` where JavaScript writes ``0.00001``).
    """
    if not math.isfinite(value):
        return True
    magnitude = abs(value)
    return (value.is_integer() and magnitude < 1e21) or magnitude < 1e-4


def _key(key: object) -> str:
    # Non-string keys as the C encoder writes them, so both paths agree.
    if isinstance(key, str):
        return encode_basestring(key)
    if key is True:
        return '"true"'
    if key is False:
        return '"false"'
    if key is None:
        return '"null"'
    if isinstance(key, int):
        return f'"{int.__repr__(key)}"'
    if isinstance(key, float):
        return f'"{float.__repr__(key)}"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _encode(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif isinstance(value, dict):
        separator = "{"
        for key, item in value.items():
            out.append(separator)
            separator = ","
            out.append(_key(key))
            out.append(":")
            _encode(item, out)
        out.append("}" if separator == "," else "{}")
    elif isinstance(value, (list, tuple)):
        separator = "["
        for item in value:
            out.append(separator)
            separator = ","
            _encode(item, out)
        out.append("]" if separator == "," else "[]")
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(js_number(value) if float_differs(value) else float.__repr__(value))
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def encode_js(value: object) -> str:
    """``JSON.stringify(value)`` in pure Python (lone surrogates not yet escaped)."""
    out: list[str] = []
    _encode(value, out)
    return "".join(out)
