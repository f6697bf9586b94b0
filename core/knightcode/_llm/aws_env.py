"""The environment that configures Amazon Bedrock: credential markers and the region.

Kept apart from :mod:`~knightcode._llm.bedrock_auth` (which builds signers) so the built-in
provider table can name the variables without loading the client at start-up.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

__all__ = ["AWS_CREDENTIAL_ENV", "BEARER_ENV", "bedrock_region"]

BEARER_ENV = "AWS_BEARER_TOKEN_BEDROCK"
AWS_CREDENTIAL_ENV = (
    BEARER_ENV,
    "AWS_ACCESS_KEY_ID",
    "AWS_PROFILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
)
"""Variables that make the built-in provider count as configured (the reference's markers)."""
_DEFAULT_REGION = "us-east-1"
_AWS_HOST = re.compile(r"bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com")


def bedrock_region(
    environ: Mapping[str, str] | None = None, base_url: str = "", profile_region: str | None = None
) -> str:
    """The region requests go to and are signed for: ``AWS_REGION``, else ``AWS_DEFAULT_REGION``,
    else the one in ``base_url``'s ``bedrock-runtime.<region>.amazonaws.com`` host, else the
    AWS profile's, else us-east-1 (the reference's default).
    """
    env = os.environ if environ is None else environ
    from_env = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if from_env:
        return from_env
    host = _AWS_HOST.search(base_url)
    if host:
        return host.group(1)
    return profile_region or _DEFAULT_REGION
