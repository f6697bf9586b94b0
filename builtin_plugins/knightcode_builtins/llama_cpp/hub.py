"""Searching Hugging Face for GGUF models: repositories, quantizations, gated access.

Only reads the Hub's public JSON API (``GET /api/models?search=…&filter=gguf``,
``GET /api/models/<repo>``); the download itself is the router's job. A token is sent when one
is found — ``HF_TOKEN``, then the files ``$HF_TOKEN_PATH``, ``$HF_HOME/token``,
``$XDG_CACHE_HOME/huggingface/token`` and ``~/.cache/huggingface/token`` — for higher rate
limits and private repositories; search works without one. ``HF_ENDPOINT`` points the client at
a mirror (or a test server), as it does for the ``huggingface_hub`` library.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

__all__ = [
    "HubClient",
    "HubError",
    "HubModel",
    "HubUnreachable",
    "find_token",
    "parse_exact",
    "quantizations",
]

DEFAULT_ENDPOINT = "https://huggingface.co"
_EXACT = re.compile(r"^([\w.-]+/[\w.-]+)(?::([\w.-]+))?$")
# The quantization tag in a GGUF file name: "Model-Q4_K_M.gguf", "model.IQ4_XS-00001-of-00002.gguf".
_QUANT = re.compile(
    r"[-_.]((?:UD-)?(?:I?Q\d(?:_[A-Z0-9]+)*|F16|BF16|F32|MXFP4(?:_[A-Z0-9]+)*))"
    r"(?:-\d{5}-of-\d{5})?\.gguf$",
    re.IGNORECASE,
)


class HubError(Exception):
    """The Hub said no (unknown repository, bad token …); ``str()`` says why."""


class HubUnreachable(HubError):
    """No answer from the Hub at all (offline, blocked, wrong ``HF_ENDPOINT``)."""


@dataclass(frozen=True)
class HubModel:
    """A repository: its id, popularity, gated state and files (when asked for them).

    :param gated: ``False``, or how access is granted (``"auto"``, ``"manual"``)
    """

    id: str
    downloads: int = 0
    likes: int = 0
    gated: bool | str = False
    files: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """One line for a picker: id, downloads and whether access is gated."""
        gated = " · gated" if self.gated else ""
        return f"{self.id} ({self.downloads:,} downloads{gated})"


def find_token(environ: Mapping[str, str]) -> str | None:
    """The Hugging Face token, searched in the documented order; None when there is none."""
    if environ.get("HF_TOKEN", "").strip():
        return environ["HF_TOKEN"].strip()
    home = Path(environ.get("HOME") or Path.home())
    cache = Path(environ["XDG_CACHE_HOME"]) if environ.get("XDG_CACHE_HOME") else home / ".cache"
    candidates = [
        environ.get("HF_TOKEN_PATH"),
        str(Path(environ["HF_HOME"]) / "token") if environ.get("HF_HOME") else None,
        str(cache / "huggingface" / "token"),
        str(home / ".cache" / "huggingface" / "token"),
    ]
    for candidate in candidates:
        if not candidate:
            continue
        try:
            token = Path(candidate).expanduser().read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if token:
            return token
    return None


def parse_exact(text: str) -> tuple[str, str | None] | None:
    """``("owner/repo", "Q4_K_M")`` for ``owner/repo:Q4_K_M`` (quant optional), else None."""
    match = _EXACT.match(text.strip())
    return (match.group(1), match.group(2)) if match else None


def quantizations(files: tuple[str, ...] | list[str]) -> list[str]:
    """The quantizations offered by a repository's GGUF files (projector files excluded)."""
    found: dict[str, None] = {}
    for name in files:
        base = name.rsplit("/", 1)[-1]
        if base.lower().startswith("mmproj"):
            continue
        match = _QUANT.search(base)
        if match:
            found.setdefault(match.group(1).upper(), None)
    return sorted(found)


class HubClient:
    """The Hub's JSON API. Use as ``async with HubClient.from_environ(os.environ) as hub``."""

    def __init__(self, endpoint: str, token: str | None, timeout: float = 15.0) -> None:
        self.endpoint = endpoint.rstrip("/")
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.AsyncClient(base_url=self.endpoint, headers=headers, timeout=timeout)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> HubClient:
        """A client for ``HF_ENDPOINT`` (or the Hub) with the token :func:`find_token` finds."""
        return cls(environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT, find_token(environ))

    async def __aenter__(self) -> HubClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._http.aclose()

    def page(self, repo: str) -> str:
        """The repository's page, where gated access is requested."""
        return f"{self.endpoint}/{repo}"

    async def _get(self, path: str, params: Mapping[str, str] | None = None) -> object:
        try:
            response = await self._http.get(path, params=params)
        except httpx.HTTPError as exc:
            raise HubUnreachable(
                f"Hugging Face is not reachable at {self.endpoint} ({exc})"
            ) from exc
        if response.status_code == 401:
            raise HubError("Hugging Face rejected the token (401): check HF_TOKEN")
        if response.status_code == 404:
            raise HubError(f"not found on Hugging Face: {path.removeprefix('/api/models/')}")
        if response.status_code >= 400:
            raise HubError(f"Hugging Face answered {response.status_code}: {response.text[:200]}")
        return response.json()

    async def search(self, query: str, limit: int = 20) -> list[HubModel]:
        """GGUF repositories matching ``query``, most downloaded first."""
        params = {
            "search": query,
            "filter": "gguf",
            "sort": "downloads",
            "direction": "-1",
            "limit": str(limit),
        }
        data = await self._get("/api/models", params)
        items = data if isinstance(data, list) else []
        return [_model(item) for item in items if isinstance(item, dict) and item.get("id")]

    async def model(self, repo: str) -> HubModel:
        """One repository with its file list and gated state."""
        data = await self._get(f"/api/models/{repo}")
        if not isinstance(data, dict):
            raise HubError(f"unexpected answer from Hugging Face for {repo}")
        return _model(data)


def _model(data: Mapping[str, object]) -> HubModel:
    siblings = data.get("siblings")
    files = tuple(
        str(s["rfilename"])
        for s in (siblings if isinstance(siblings, list) else ())
        if isinstance(s, dict) and "rfilename" in s
    )
    gated = data.get("gated", False)
    return HubModel(
        id=str(data["id"]),
        downloads=_count(data.get("downloads")),
        likes=_count(data.get("likes")),
        gated=gated if isinstance(gated, (bool, str)) else bool(gated),
        files=files,
    )


def _count(value: object) -> int:
    return int(value) if isinstance(value, (int, float)) else 0
