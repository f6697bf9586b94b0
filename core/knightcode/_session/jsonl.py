r"""JSON Lines exactly as the reference tool writes and reads them: knightcode's one JSON writer.

Session files and the JSON/RPC stream are both written here, so both spell values the same way:
JavaScript ``JSON.stringify``, byte for byte. Compact separators, raw UTF-8 (U+2028/U+2029 stay
raw), lone surrogates escaped as ``\udXXX``, and numbers formatted like JavaScript (``1`` not
``1.0``, ``0.000003`` not ``3e-06``; see :mod:`knightcode._session.jsnumber`). Reading splits on LF
bytes only, so U+2028 inside a string never splits a line, and tolerates one trailing CR.

Why it is fast: the standard library's C encoder already writes strings, integers, ``true``,
``false`` and ``null`` as JavaScript does; its float spellings differ only in forms that contain
``.0`` before a delimiter (``1.0``, ``-0.0``) or an exponent sign (``3e-06``, ``1e+16``). So the C
encoder's output is searched for those three forms (substring searches in C, no Python walk over the
values); only on a match — a float, or text inside a string that looks like one — is the value
walked, and re-encoded in Python if it really holds such a float.

A value holding a large list (a ``get_messages`` response, ``agent_end`` with a whole run) is
encoded element by element (:func:`iter_line`): a false alarm or a real float then costs one
element, not the whole value, and a writer can send the line in chunks instead of building a
100 MB string (which CPython stores at 4 bytes per character as soon as it holds one emoji).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import NoReturn, TypeAlias

from knightcode._session.jsnumber import encode_js, js_number

__all__ = [
    "JsonObject",
    "JsonValue",
    "dumps",
    "encode_line",
    "holds_large_list",
    "iter_line",
    "js_number",
    "parse_line",
]

JsonValue: TypeAlias = "dict[str, JsonValue] | list[JsonValue] | str | int | float | bool | None"
"""A value as :func:`parse_line` returns it: what the JSON decoder makes, nothing else. Code
reading a file narrows it (``type(value) is dict``) before trusting any shape."""

JsonObject: TypeAlias = "dict[str, JsonValue]"
"""A JSON object as parsed, not yet known to have any particular keys."""

LARGE_LIST = 64
"""A list at least this long (within two levels of dicts) is encoded element by element."""

_CHUNK_BYTES = 1 << 20  # iter_line yields chunks of about this size

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
# One C encoder for every call: JSONEncoder.encode would build a new one (and a closure) each time.
# Without a markers dict it does not detect cycles; a cycle ends in RecursionError, after which the
# value is encoded again by the checking encoder to raise the usual ValueError.
_make_c_encoder = getattr(json.encoder, "c_make_encoder", None)  # absent outside CPython
_encode_c: Callable[[object, int], Sequence[str]] | None = None
_encode_c_ascii: Callable[[object, int], Sequence[str]] | None = None
if _make_c_encoder is not None:
    _encode_c = _make_c_encoder(
        None, _encoder.default, encode_basestring, None, ":", ",", False, False, False
    )
    _encode_c_ascii = _make_c_encoder(
        None, _encoder.default, encode_basestring_ascii, None, ":", ",", False, False, False
    )
_INTEGRAL = re.compile(r"\.0[,\]}]")  # Python's 1.0 and -0.0 inside a container
_NEG_EXPONENT = re.compile(r"e-\d")  # Python's 3e-06 and 1e-07
_POS_EXPONENT = re.compile(r"e\+\d")  # Python's 1e+16
_SURROGATE = re.compile("[\ud800-\udfff]")


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


_decoder = json.JSONDecoder(parse_constant=_reject_constant)


def _c_text(value: object) -> str:
    if _encode_c is None:  # not CPython: the pure-Python encoder, same output
        return _encoder.encode(value)
    try:
        return "".join(_encode_c(value, 0))
    except RecursionError:
        return _encoder.encode(value)  # raises ValueError for a cycle; else recurses the same


def _may_hold_python_floats(text: str) -> bool:
    # One-character tests first (memchr): most records have no "." "-" or "+" outside their text.
    return (
        ("." in text and (_INTEGRAL.search(text) is not None or text.endswith(".0")))
        or ("-" in text and _NEG_EXPONENT.search(text) is not None)
        or ("+" in text and _POS_EXPONENT.search(text) is not None)
    )


def _differing_floats(value: object) -> list[float]:
    # Every float of the value whose Python spelling differs from JavaScript's (see
    # jsnumber.float_differs, inlined: this loop runs over every value of a suspect record).
    found: list[float] = []
    stack: list[object] = [value]
    while stack:
        container = stack.pop()
        if isinstance(container, dict):
            items: Iterable[object] = container.values()
        elif isinstance(container, (list, tuple)):
            items = container
        else:
            items = (container,)  # the value itself is not a container
        for item in items:
            kind = type(item)
            if kind is str or kind is int:
                continue
            if isinstance(item, float):
                magnitude = abs(item)
                if (
                    magnitude < 1e-4
                    or (magnitude < 1e21 and item.is_integer())
                    or magnitude != magnitude
                    or magnitude == math.inf
                ):
                    found.append(item)
            elif isinstance(item, (dict, list, tuple)):
                stack.append(item)
    return found


@functools.lru_cache(maxsize=256)
def _number_tokens(spellings: tuple[str, ...]) -> re.Pattern[str]:
    # These spellings as number tokens: followed by a delimiter, so never a key (keys are quoted).
    # Leftmost-longest alternatives match a whole token: a token that ends in one of them (10.0,
    # 1.5e-07) is itself a spelling to replace, so it is in the set and matches from its start.
    alternatives = "|".join(re.escape(text) for text in sorted(spellings, key=len, reverse=True))
    return re.compile(rf"(?:{alternatives})(?=[,\]}}])")


@functools.lru_cache(maxsize=1024)
def _js_spelling(python: str) -> str:
    return js_number(float(python))


def _fix_floats(value: object, text: str) -> str:
    # The C encoder's text with Python float spellings replaced by JavaScript's. Each float of the
    # value is one token match; more matches mean a string holds one of the spellings before a
    # delimiter, and then the value is encoded in Python instead.
    floats = _differing_floats(value)
    if not floats:
        return text  # a false alarm: text inside a string looked like a float
    if isinstance(value, float):
        return js_number(value)
    spellings = {float.__repr__(number) for number in floats}  # finite: C refused NaN
    pattern = _number_tokens(tuple(sorted(spellings)))
    if len(spellings) == 1:
        fixed, count = pattern.subn(_js_spelling(spellings.pop()), text)
    else:
        fixed, count = pattern.subn(lambda match: _js_spelling(match[0]), text)
    return fixed if count == len(floats) else encode_js(value)


def _encode_element(value: object) -> str:
    # _encode_value for an element of a large list. The C encoder is ~30% faster when it may
    # escape non-ASCII text, and most elements have none: their text is then the same either
    # way. An element whose text has a \u escape (non-ASCII, a control character, a surrogate)
    # is encoded again with raw Unicode.
    if _encode_c_ascii is None:
        return _encode_value(value)
    try:
        text = "".join(_encode_c_ascii(value, 0))
    except (ValueError, RecursionError):
        return _encode_value(value)  # NaN, infinity or a cycle: the usual path says which
    if "\\u" in text:
        return _encode_value(value)
    return _fix_floats(value, text) if _may_hold_python_floats(text) else text


def _encode_value(value: object) -> str:
    # JavaScript-compatible text of one value; lone surrogates not yet escaped.
    try:
        text = _c_text(value)
    except ValueError as error:
        if "Circular" in str(error):
            raise
        return encode_js(value)  # NaN or an infinity, which JavaScript writes as null
    return _fix_floats(value, text) if _may_hold_python_floats(text) else text


def holds_large_list(value: object) -> bool:
    """Whether ``value`` is a dict with a list of :data:`LARGE_LIST` items or more, directly or in
    a dict value (the shapes of ``{"messages": [...]}`` and ``{"data": {"messages": [...]}}``).
    """
    if type(value) is not dict:
        return False
    for item in value.values():
        kind = type(item)
        if kind is list:
            if len(item) >= LARGE_LIST:
                return True
        elif kind is dict:
            for inner in item.values():
                if type(inner) is list and len(inner) >= LARGE_LIST:
                    return True
    return False


def _key_text(key: object) -> str:
    if isinstance(key, str):
        return encode_basestring(key)
    return _c_text({key: 0})[1:-2]  # the C encoder's own spelling of a non-string key


def _pieces(value: object) -> Iterator[str]:
    # The text of a value holding a large list, in pieces: dicts down to the list, then one piece
    # per element.
    if type(value) is dict:
        separator = "{"
        for key, item in value.items():
            yield separator + _key_text(key) + ":"
            separator = ","
            kind = type(item)
            if (kind is list and len(item) >= LARGE_LIST) or (
                kind is dict and holds_large_list(item)
            ):
                yield from _pieces(item)
            else:
                yield _encode_value(item)
        yield "}"  # not empty: it holds the large list
    else:
        assert type(value) is list
        separator = "["
        for item in value:
            yield separator
            separator = ","
            yield _encode_element(item)
        yield "]"


def _escape_surrogates(text: str) -> str:
    # A high+low pair held as two code points is one character to JavaScript: join them first,
    # then escape what is left alone, as well-formed JSON.stringify does.
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", joined)


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # only lone surrogates cannot be encoded
        return _escape_surrogates(text).encode("utf-8")


def dumps(value: object) -> str:
    """Serialise ``value`` exactly like JavaScript ``JSON.stringify`` (compact, raw Unicode).

    :raises TypeError: for a value JSON cannot hold (a set, an object)
    :raises ValueError: for a value that contains itself
    """
    text = "".join(_pieces(value)) if holds_large_list(value) else _encode_value(value)
    if not text.isascii() and _SURROGATE.search(text):
        text = _escape_surrogates(text)
    return text


def encode_line(value: object) -> bytes:
    """One JSONL record: ``dumps(value)`` as UTF-8 plus a single LF."""
    if holds_large_list(value):
        return b"".join(iter_line(value))
    return _utf8(_encode_value(value) + "\n")


def iter_line(value: object) -> Iterator[bytes]:
    """:func:`encode_line` in chunks of about a megabyte, encoded as they are consumed.

    A writer sends a large record this way without holding it whole; a small one is one chunk.
    """
    if not holds_large_list(value):
        yield encode_line(value)
        return
    group: list[bytes] = []
    size = 0
    for piece in _pieces(value):
        # Each piece to UTF-8 at once (a copy for the ASCII-only most): a piece holding an emoji
        # does not widen a whole chunk's text to 4 bytes per character.
        data = _utf8(piece)
        group.append(data)
        size += len(data)
        if size >= _CHUNK_BYTES:
            yield b"".join(group)
            group.clear()
            size = 0
    group.append(b"\n")
    yield b"".join(group)


def parse_line(line: bytes) -> JsonValue:
    """Parse one line (with or without its LF; one trailing CR tolerated).

    Invalid UTF-8 is replaced by U+FFFD, as the reference's ``readFileSync(…, "utf8")`` does, so
    one bad byte does not cost a whole entry. Raises :class:`ValueError` if the line is not JSON
    (nesting too deep for the decoder included).
    ``NaN``/``Infinity`` literals, which JavaScript rejects, are rejected too.
    """
    # The decoder is typed as returning Any; it makes only what JsonValue describes.
    try:
        value: JsonValue = _decoder.decode(line.decode("utf-8", "replace"))
    except RecursionError:
        # Nested deeper than the decoder can go (~1,000 levels): a bad line like any other.
        raise ValueError("JSON nested too deeply") from None
    return value
