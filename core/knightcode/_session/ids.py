"""Identifiers and timestamps in the exact shapes the reference tool writes.

Entry ids are the first 8 hex digits of a random UUID, session ids are UUIDv7 (time-ordered, as
the reference's current release writes them), and timestamps are JavaScript
``Date.toISOString()`` strings: millisecond precision, UTC, ending in ``Z``.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Container
from datetime import UTC, datetime

__all__ = [
    "file_timestamp",
    "iso_timestamp",
    "iso_to_epoch_ms",
    "new_entry_id",
    "new_session_id",
]

# How often a colliding short id is re-drawn before falling back to a full UUID (reference value).
_ID_ATTEMPTS = 100
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def new_entry_id(taken: Container[str]) -> str:
    """Return a fresh 8-hex-digit entry id that is not in ``taken``.

    After 100 collisions (practically impossible below millions of entries) a full UUID string
    is returned instead, exactly like the reference.
    """
    for _ in range(_ID_ATTEMPTS):
        candidate = uuid.uuid4().hex[:8]
        if candidate not in taken:
            return candidate
    return str(uuid.uuid4())


def new_session_id() -> str:
    """Return a new UUIDv7 string (48-bit millisecond time, version 7, RFC 4122 variant).

    Python 3.11 has no ``uuid.uuid7``; the layout is simple enough to build from
    ``os.urandom`` and keeps session ids sortable by creation time.
    """
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")  # 80 random bits, 74 of them used
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76  # version
    value |= ((rand >> 62) & 0xFFF) << 64  # rand_a: 12 bits
    value |= 0b10 << 62  # variant
    value |= rand & ((1 << 62) - 1)  # rand_b: 62 bits
    return str(uuid.UUID(int=value))


def iso_timestamp(when: datetime | None = None) -> str:
    """Format ``when`` (default: now) like JavaScript ``toISOString()``.

    ``datetime.isoformat()`` would give microseconds and ``+00:00``; the file format needs
    ``2026-11-29T16:55:23.723Z``.
    """
    moment = when.astimezone(UTC) if when is not None else datetime.now(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def file_timestamp(iso: str) -> str:
    """The timestamp part of a session file name: ``:`` and ``.`` replaced by ``-``."""
    return iso.replace(":", "-").replace(".", "-")


def iso_to_epoch_ms(value: object) -> int | None:
    """Parse an ISO-8601 timestamp to epoch milliseconds, or ``None`` if it is not one.

    Mirrors ``new Date(s).getTime()`` for the forms session files contain. A timestamp without
    an offset is read as UTC (JavaScript would use local time for date-times; files written by
    either tool always carry ``Z``).
    """
    if not isinstance(value, str) or not value:
        return None
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    # Exact integer arithmetic: float seconds * 1000 can land one millisecond off.
    delta = moment - _EPOCH
    return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000
