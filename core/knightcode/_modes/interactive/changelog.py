"""``/changelog``: the CHANGELOG shipped with the package (or the source checkout's)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["read_changelog"]


def read_changelog() -> str | None:
    """The changelog's markdown, newest first as written, or None when it is not installed."""
    from importlib import resources

    try:
        shipped = resources.files("knightcode").joinpath("CHANGELOG.md")
        if shipped.is_file():
            return shipped.read_text(encoding="utf-8")
    except (OSError, ModuleNotFoundError):
        pass
    # A source checkout (editable install): core/knightcode/../../CHANGELOG.md
    checkout = Path(__file__).resolve().parents[4] / "CHANGELOG.md"
    return checkout.read_text(encoding="utf-8") if checkout.is_file() else None
