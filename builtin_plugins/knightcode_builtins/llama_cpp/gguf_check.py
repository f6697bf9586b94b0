"""Is a model file a valid GGUF file? Tells a corrupt download from other load failures.

The router only says that a load failed (``failed: true``, an exit code); the reason is in its
log. When the router runs on this machine, the plugin can read the file itself: a bad magic
number, a header that runs past the end of the file or tensor data cut short mean the file is
corrupt (an interrupted download, a truncated copy), and the user should fetch it again rather
than lower ``-c``. Only the header is read, never the tensor data.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import BinaryIO

__all__ = ["diagnose_gguf"]

_MAGIC = b"GGUF"
# ggml type id -> (elements per block, bytes per block), as in gguf-py's GGML_QUANT_SIZES.
# fmt: off
_TYPE_SIZES = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
    9: (32, 40), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210),
    15: (256, 292), 16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18),
    21: (256, 110), 22: (256, 82), 23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4),
    27: (1, 8), 28: (1, 8), 29: (256, 56), 30: (1, 2), 34: (256, 54), 35: (256, 66),
    39: (32, 17), 40: (64, 36), 41: (128, 18),
}
# fmt: on
# Metadata value type id -> struct format of a scalar (8 = string, 9 = array).
_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
_LIMIT = 1 << 24  # no sane header has a string or an array this long: it is garbage


class _Corrupt(Exception):
    pass


def diagnose_gguf(path: str | Path) -> str | None:
    """Why ``path`` is not a valid GGUF file, or None when its header and size look right.

    None also when the file cannot be read here (another machine's path, no permission): only
    evidence of corruption is reported.
    """
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as handle:
            return _check(handle, size)
    except OSError:
        return None
    except _Corrupt as exc:
        return str(exc)


def _check(handle: BinaryIO, size: int) -> str | None:
    magic = handle.read(4)
    if magic != _MAGIC:
        return f"is not a GGUF file (it starts with {magic!r}, not {_MAGIC!r})"
    version = _read(handle, "I")
    if version not in (2, 3):
        return f"has an unsupported GGUF version {version}"
    tensors, entries = _read(handle, "Q"), _read(handle, "Q")
    if tensors > _LIMIT or entries > _LIMIT:
        return "has a damaged header (impossible tensor or metadata counts)"
    alignment = 32
    for _ in range(entries):
        key = _string(handle)
        value = _value(handle, _read(handle, "I"))
        if key == "general.alignment" and isinstance(value, int) and value > 0:
            alignment = value
    end = 0
    for _ in range(tensors):
        _string(handle)
        dims = [_read(handle, "Q") for _ in range(_read(handle, "I"))]
        kind, offset = _read(handle, "I"), _read(handle, "Q")
        block, nbytes = _TYPE_SIZES.get(kind, (0, 0))
        if block:
            count = 1
            for dim in dims:
                count *= dim
            end = max(end, offset + count // block * nbytes)
    data_start = -(-handle.tell() // alignment) * alignment
    if data_start + end > size:
        return f"is truncated: its tensors need {data_start + end} bytes, the file has {size}"
    return None


def _read(handle: BinaryIO, fmt: str) -> int:
    width = struct.calcsize("<" + fmt)
    raw = handle.read(width)
    if len(raw) != width:
        raise _Corrupt("is truncated inside its header")
    value: int = struct.unpack("<" + fmt, raw)[0]
    return value


def _string(handle: BinaryIO) -> str:
    length = _read(handle, "Q")
    if length > _LIMIT:
        raise _Corrupt("has a damaged header (an impossible string length)")
    raw = handle.read(length)
    if len(raw) != length:
        raise _Corrupt("is truncated inside its header")
    return raw.decode("utf-8", "replace")


def _value(handle: BinaryIO, kind: int) -> object:
    if kind in _SCALARS:
        return _read(handle, _SCALARS[kind])
    if kind == 8:
        return _string(handle)
    if kind == 9:
        item_kind, count = _read(handle, "I"), _read(handle, "Q")
        if count > _LIMIT:
            raise _Corrupt("has a damaged header (an impossible array length)")
        for _ in range(count):
            _value(handle, item_kind)
        return None
    raise _Corrupt(f"has a damaged header (unknown metadata type {kind})")
