"""Amazon Bedrock credentials: a bearer token, or SigV4 signing with the AWS credential chain.

Bedrock accepts two kinds of credentials, chosen in this order:

1. a *bearer token* (a Bedrock API key): the key given with ``--api-key``, in ``auth.json`` or as
   a models.json ``apiKey``, else the environment's ``AWS_BEARER_TOKEN_BEDROCK``;
2. otherwise the standard AWS chain (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/
   ``AWS_SESSION_TOKEN``, ``AWS_PROFILE`` and ``~/.aws``, container and web-identity roles …),
   resolved and used for SigV4 signing by botocore, the AWS SDK's own maintained library. It is
   an optional dependency (``knightcode[bedrock]``), imported only when a request is signed.

The built-in ``amazon-bedrock`` provider lists the AWS variables as its "key" variables so that
it counts as configured when any is set; the value the registry then hands over is one of those
markers, not a bearer token, and is recognised as such here.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from knightcode._llm.aws_env import AWS_CREDENTIAL_ENV, BEARER_ENV, bedrock_region
from knightcode._llm.transport import StreamFailed

__all__ = [
    "BedrockAuth",
    "BedrockAuthError",
    "resolve_bedrock_auth",
]

_MISSING_EXTRA = (
    "Amazon Bedrock request signing needs botocore, which is not installed: "
    "pip install 'knightcode[bedrock]' (or set AWS_BEARER_TOKEN_BEDROCK to use a Bedrock API key)"
)


class _Credentials(Protocol):
    """botocore's frozen credentials (botocore ships no type information)."""

    access_key: str
    secret_key: str
    token: str | None


class _Request(Protocol):
    headers: Mapping[str, str]


class _Signer(Protocol):
    def add_auth(self, request: _Request) -> None: ...


class BedrockAuthError(StreamFailed):
    """No usable credentials, or botocore missing; the message says what to do (and becomes
    the stream's error message as it is).
    """


@dataclass(frozen=True)
class BedrockAuth:
    """How one request is authenticated: ``bearer`` or ``credentials`` (for SigV4)."""

    region: str
    bearer: str | None = None
    credentials: _Credentials | None = None

    def headers(self, url: str, chunks: Sequence[bytes]) -> dict[str, str]:
        """The authentication headers for a POST of ``chunks`` (the encoded body) to ``url``."""
        if self.bearer is not None:
            return {"authorization": f"Bearer {self.bearer}"}
        assert self.credentials is not None
        return _sign(self.credentials, self.region, url, chunks)


def resolve_bedrock_auth(
    api_key: str | None, base_url: str = "", environ: Mapping[str, str] | None = None
) -> BedrockAuth:
    """The credentials of a request (see the module docstring); may read files: run it in a
    worker thread.

    :raises BedrockAuthError: botocore is missing or the chain found no credentials
    """
    env = os.environ if environ is None else environ
    region = bedrock_region(env, base_url)
    markers = {env.get(name) for name in AWS_CREDENTIAL_ENV if name != BEARER_ENV}
    if api_key and api_key not in markers:
        return BedrockAuth(region, bearer=api_key)
    if env.get(BEARER_ENV):
        return BedrockAuth(region, bearer=env[BEARER_ENV])
    try:
        session_module = importlib.import_module("botocore.session")
    except ImportError:
        raise BedrockAuthError(_MISSING_EXTRA) from None
    session = session_module.get_session()
    try:
        found = session.get_credentials()
    except Exception as exc:  # botocore's own errors: a missing profile, a failing process …
        raise BedrockAuthError(
            f"AWS credentials for Amazon Bedrock: {type(exc).__name__}: {exc}"
        ) from None
    if found is None:
        raise BedrockAuthError(
            "No AWS credentials found for Amazon Bedrock: set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK"
        )
    region = bedrock_region(env, base_url, session.get_config_variable("region"))
    return BedrockAuth(region, credentials=cast(_Credentials, found.get_frozen_credentials()))


def _sign(
    credentials: _Credentials, region: str, url: str, chunks: Sequence[bytes]
) -> dict[str, str]:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    # With the payload hash given as a header, botocore signs it instead of hashing the body,
    # so a large body is never joined into one copy.
    headers = {"Content-Type": "application/json", "X-Amz-Content-SHA256": digest.hexdigest()}
    auth_module = importlib.import_module("botocore.auth")
    request_module = importlib.import_module("botocore.awsrequest")
    request = cast(_Request, request_module.AWSRequest(method="POST", url=url, headers=headers))
    make_signer = cast(Callable[[_Credentials, str, str], _Signer], auth_module.SigV4Auth)
    make_signer(credentials, "bedrock", region).add_auth(request)
    return {name.lower(): value for name, value in request.headers.items()}
