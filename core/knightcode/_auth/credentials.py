"""OAuth credentials as stored in ``auth.json``, in the reference's shape.

``{"type": "oauth", "refresh": "…", "access": "…", "expires": <ms since the epoch>}`` plus a
provider's own fields (Codex ``accountId``, Copilot ``enterpriseUrl``), which are kept as they
are so that a file written by the reference, or by a newer knightcode, survives a refresh.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["OAuthCredentials", "now_ms"]

#: Refresh this long before the stored expiry, so a request never starts with a token that
#: runs out in flight.
REFRESH_MARGIN_MS = 60_000


def now_ms() -> int:
    """The current time in milliseconds since the epoch (the unit of ``expires``)."""
    return int(time.time() * 1000)


@dataclass(frozen=True)
class OAuthCredentials:
    """One provider's tokens.

    :param refresh: the long-lived token that gets new access tokens (for Copilot: the GitHub
        token that is exchanged for a Copilot token)
    :param access: the token sent with requests
    :param expires: when ``access`` runs out, in ms since the epoch
    :param extra: every other stored field (``accountId``, ``enterpriseUrl`` …)
    """

    refresh: str
    access: str
    expires: int
    extra: Mapping[str, object] = field(default_factory=dict)

    @classmethod
    def from_entry(cls, entry: Mapping[str, object]) -> OAuthCredentials | None:
        """The credentials in an auth.json entry, or None when it is not a complete OAuth one."""
        refresh, access, expires = entry.get("refresh"), entry.get("access"), entry.get("expires")
        if entry.get("type") != "oauth" or not isinstance(refresh, str) or not refresh:
            return None
        if not isinstance(access, str) or not isinstance(expires, int | float):
            return None
        known = {"type", "refresh", "access", "expires"}
        extra = {key: value for key, value in entry.items() if key not in known}
        return cls(refresh, access, int(expires), extra)

    def to_entry(self) -> dict[str, object]:
        """The auth.json entry."""
        return {
            "type": "oauth",
            "refresh": self.refresh,
            "access": self.access,
            "expires": self.expires,
            **self.extra,
        }

    def text(self, name: str) -> str | None:
        """The extra field ``name`` when it is a non-empty string."""
        value = self.extra.get(name)
        return value if isinstance(value, str) and value else None

    @property
    def expiring(self) -> bool:
        """Whether the access token runs out within the refresh margin."""
        return now_ms() + REFRESH_MARGIN_MS >= self.expires
