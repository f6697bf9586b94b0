"""Short excerpts of tool arguments with what looks like a secret replaced by ``***``.

The gate records its decisions in the session file and shows them in the transcript; the
arguments it judged may carry the very secret it was asked about (a token in a URL). So it keeps
only an excerpt, cut short, from which URL credentials, query values, ``key=value`` pairs whose
key names a secret, bearer tokens, well-known key formats and long random-looking strings are
removed. This is best effort — which is why the full arguments are never stored at all.
"""

from __future__ import annotations

import re

__all__ = ["excerpt", "redact"]

_SECRET_WORDS = (
    r"token|secret|passw(?:or)?d|pwd|api[_-]?key|apikey|auth\w*|credential\w*|session\w*|cookie"
    r"|signature|sig|private[_-]?key|access[_-]?key|client[_-]?secret"
)
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # user:password@ in a URL
    (re.compile(r"(?<=://)[^/\s@\"']+@"), "***@"),
    # every query and fragment value: ?a=1&b=2#c=3
    (re.compile(r"([?&#;][^=&#\s\"']*=)[^&#\s\"']*"), r"\1***"),
    # Authorization: Bearer …, token …
    (re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}"), r"\1 ***"),
    # KEY=value, "key": "value", key: value where the key names a secret
    (
        re.compile(
            rf"(?i)\b([\w.-]*(?:{_SECRET_WORDS})[\w.-]*)(\"?\s*[=:]\s*\"?)[^\s\"'&;,]+",
        ),
        r"\1\2***",
    ),
    # well-known key formats
    (
        re.compile(
            r"\b(?:(?:AKIA|ASIA)[0-9A-Z]{16}|sk-[A-Za-z0-9_-]{10,}|gh[pousr]_[A-Za-z0-9]{20,}"
            r"|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{30,})"
        ),
        "***",
    ),
    # long random-looking strings (letters and digits mixed)
    (re.compile(r"(?=[A-Za-z_\-+=]*[0-9])(?=[0-9_\-+=]*[A-Za-z])[A-Za-z0-9_\-+=]{24,}"), "***"),
)


def redact(text: str) -> str:
    """``text`` with what looks like a secret replaced by ``***``."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


def excerpt(text: str, limit: int = 200) -> str:
    """``text`` redacted, on one line, cut to ``limit`` characters (an ellipsis says so)."""
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
