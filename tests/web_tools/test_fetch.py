"""web_fetch against a real loopback site: extraction, the SSRF guard, redirects, caps, timeouts."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from knightcode import ToolContext, __version__
from knightcode_builtins.web_tools.fetch import (
    FetchError,
    FetchSettings,
    fetch,
    web_fetch_tool,
)
from knightcode_builtins.web_tools.netguard import is_public_address
from knightcode_builtins.web_tools.scratchpad import ScratchpadSettings

from .pages.site import BIG_BYTES, PNG, Site, serve

# The site runs on loopback, so the guard is switched off per test where it is not the subject.
OPEN = FetchSettings(allow_private=True)


@pytest.fixture
def site() -> Iterator[Site]:
    with serve() as running:
        yield running


async def call(url: str, settings: FetchSettings, cwd: Path) -> dict[str, object]:
    tool = web_fetch_tool(settings)
    result = await tool.execute("call-1", {"url": url}, ToolContext.local(cwd), None)
    assert isinstance(result, dict)
    return result


def text_of(result: dict[str, object]) -> str:
    content = result["content"]
    assert isinstance(content, list)
    return "".join(block["text"] for block in content if block["type"] == "text")


async def test_boilerplate_page_comes_through_as_markdown(site: Site, tmp_path: Path) -> None:
    result = await call(site.url("/docs/frob"), OPEN, tmp_path)
    text = text_of(result)
    assert "# Configuring the frobnicator" in text
    assert "## Installing" in text
    assert "1. Download the FIRST-STEP-ARCHIVE" in text
    assert "```\nfrob --check --config ~/.frob.toml" in text
    assert "| speed | TABLE-CELL-FAST |" in text
    assert "](https://docs.example.com/frob/reference)" in text
    for boilerplate in ("NAV-PRICING", "FOOTER-COPYRIGHT", "FOOTER-PRIVACY", "TRACKING-SCRIPT"):
        assert boilerplate not in text
    assert result["details"]["kind"] == "html"  # type: ignore[index]


async def test_user_agent_names_knightcode(site: Site, tmp_path: Path) -> None:
    await call(site.url("/data.json"), OPEN, tmp_path)
    (path, headers) = site.requests[-1]
    assert path == "/data.json"
    assert headers["User-Agent"] == f"knightcode/{__version__}"
    assert headers["Host"] == f"127.0.0.1:{site.port}"


async def test_loopback_is_refused_by_default(site: Site, tmp_path: Path) -> None:
    for url in (site.url("/docs/frob"), site.url("/docs/frob", host="localhost")):
        with pytest.raises(FetchError, match="private, loopback or link-local"):
            await call(url, FetchSettings(), tmp_path)
    assert site.requests == []  # refused before connecting


async def test_redirect_from_an_allowed_host_to_loopback_is_refused(
    site: Site, tmp_path: Path
) -> None:
    # ``localhost`` is allowed by name; the redirect goes to 127.0.0.1, which is not.
    settings = FetchSettings(allow_hosts=frozenset({"localhost"}))
    with pytest.raises(FetchError, match=r"127\.0\.0\.1.*redirected from") as error:
        await call(site.url("/to-loopback", host="localhost"), settings, tmp_path)
    assert "refused" in str(error.value)
    assert [path for path, _ in site.requests] == ["/to-loopback"]
    # and to the cloud metadata address, even with loopback allowed by address
    settings = FetchSettings(allow_hosts=frozenset({"127.0.0.0/8"}))
    with pytest.raises(FetchError, match=r"169\.254\.169\.254"):
        await call(site.url("/to-metadata"), settings, tmp_path)


async def test_allow_list_by_network_admits_loopback(site: Site, tmp_path: Path) -> None:
    settings = FetchSettings(allow_hosts=frozenset({"127.0.0.0/8"}))
    result = await call(site.url("/data.json"), settings, tmp_path)
    assert '"answer": 42' in text_of(result)


def test_guard_address_classes() -> None:
    import ipaddress

    for private in (
        "127.0.0.1",
        "10.1.2.3",
        "192.168.0.1",
        "169.254.169.254",
        "::1",
        "fe80::1",
        "fd00::1",
        "0.0.0.0",
        "100.64.0.1",
        "::ffff:127.0.0.1",
        "224.0.0.1",
    ):
        assert not is_public_address(ipaddress.ip_address(private)), private
    for public in ("93.184.216.34", "2606:4700::1111", "8.8.8.8"):
        assert is_public_address(ipaddress.ip_address(public)), public


async def test_redirect_loop_is_reported(site: Site, tmp_path: Path) -> None:
    with pytest.raises(FetchError, match=r"redirect loop: .*/loop-a → .*/loop-b → .*/loop-a"):
        await call(site.url("/loop-a"), OPEN, tmp_path)


async def test_redirect_limit(site: Site, tmp_path: Path) -> None:
    result = await call(site.url("/chain/3"), OPEN, tmp_path)
    assert "end of the chain" in text_of(result)
    assert len(result["details"]["redirects"]) == 3  # type: ignore[index]
    with pytest.raises(FetchError, match=r"too many redirects \(more than 2\)"):
        await call(
            site.url("/chain/5"), FetchSettings(allow_private=True, max_redirects=2), tmp_path
        )


async def test_fifty_megabyte_body_is_capped(site: Site) -> None:
    started = time.monotonic()
    fetched = await fetch(site.url("/big"), OPEN)
    assert len(fetched.body) == OPEN.max_bytes < BIG_BYTES
    assert fetched.truncated
    assert time.monotonic() - started < 20


async def test_capped_body_says_so_and_goes_to_the_scratchpad(site: Site, tmp_path: Path) -> None:
    settings = FetchSettings(allow_private=True, max_bytes=1024 * 1024)
    result = await call(site.url("/big"), settings, tmp_path)
    text = text_of(result)
    assert "cut at the 1.0 MB cap" in text
    saved = Path(result["details"]["scratchpad"])  # type: ignore[index]
    assert saved.stat().st_size == 1024 * 1024


async def test_binary_body_is_refused(site: Site, tmp_path: Path) -> None:
    with pytest.raises(FetchError, match=r"binary content \(application/octet-stream"):
        await call(site.url("/binary"), OPEN, tmp_path)


async def test_image_refused_unless_the_model_takes_images(site: Site, tmp_path: Path) -> None:
    with pytest.raises(FetchError, match=r"is an image .*does not accept images"):
        await call(site.url("/image.png"), OPEN, tmp_path)
    result = await call(
        site.url("/image.png"), FetchSettings(allow_private=True, accept_images=True), tmp_path
    )
    import base64

    images = [b for b in result["content"] if b["type"] == "image"]  # type: ignore[attr-defined]
    assert images and base64.b64decode(images[0]["data"]) == PNG
    assert images[0]["mimeType"] == "image/png"


async def test_pdf_body_becomes_text(site: Site, tmp_path: Path) -> None:
    result = await call(site.url("/doc.pdf"), OPEN, tmp_path)
    assert "Hello from the PDF body" in text_of(result)
    assert result["details"]["kind"] == "pdf"  # type: ignore[index]


async def test_json_and_text_as_they_are(site: Site, tmp_path: Path) -> None:
    result = await call(site.url("/data.json"), OPEN, tmp_path)
    assert text_of(result).endswith('{"answer": 42, "items": [1, 2]}')


async def test_http_error_status_is_an_error(site: Site, tmp_path: Path) -> None:
    with pytest.raises(FetchError, match=r"HTTP 404 Not Found .*\n.*No such page"):
        await call(site.url("/missing"), OPEN, tmp_path)


async def test_slow_server_hits_the_read_timeout(site: Site, tmp_path: Path) -> None:
    settings = FetchSettings(allow_private=True, read_timeout=0.5)
    started = time.monotonic()
    with pytest.raises(FetchError, match="read timeout"):
        await call(site.url("/slow"), settings, tmp_path)
    assert time.monotonic() - started < 2.5


async def test_trickling_server_hits_the_overall_deadline(site: Site, tmp_path: Path) -> None:
    settings = FetchSettings(allow_private=True, read_timeout=5, total_timeout=1)
    started = time.monotonic()
    with pytest.raises(FetchError, match="longer than 1 s"):
        await call(site.url("/trickle"), settings, tmp_path)
    assert time.monotonic() - started < 3


async def test_only_http_and_https(tmp_path: Path) -> None:
    for url in ("file:///etc/passwd", "ftp://example.com/x", "gopher://x"):
        with pytest.raises(FetchError, match="only http and https"):
            await call(url, FetchSettings(), tmp_path)


async def test_long_result_head_in_context_whole_in_scratchpad(site: Site, tmp_path: Path) -> None:
    from .pages.site import LONG_TEXT

    pad = tmp_path / "pad"
    settings = FetchSettings(
        allow_private=True,
        scratchpad=ScratchpadSettings(inline_chars=10_000, head_chars=2_000, directory=str(pad)),
    )
    result = await call(site.url("/long.txt"), settings, tmp_path)
    text = text_of(result)
    saved = Path(result["details"]["scratchpad"])  # type: ignore[index]
    assert saved.parent == pad
    assert saved.read_text() == LONG_TEXT
    assert "line 000000" in text and "line 019999" not in text
    assert f"of {len(LONG_TEXT):,} characters" in text and str(saved) in text
    assert len(text) < 3_000


@pytest.mark.parametrize(("chunks", "truncated"), [([512, 512], False), ([512, 512, 1], True)])
async def test_a_body_ending_or_going_on_exactly_at_the_cap(
    chunks: list[int], truncated: bool
) -> None:
    # The network decides where chunks end: one ending exactly at the cap must not read the
    # stream a second time (httpx refuses that), and the byte after it says "cut".
    import httpx

    from knightcode_builtins.web_tools.fetch import _read_capped

    async def body() -> AsyncIterator[bytes]:
        for size in chunks:
            yield b"x" * size

    response = httpx.Response(200, content=body())
    data, more = await _read_capped(response, 1024)
    assert (len(data), more) == (1024, truncated)
