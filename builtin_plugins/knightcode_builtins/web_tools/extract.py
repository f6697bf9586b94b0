"""Turning fetched bodies into text the model can read: HTML to markdown, PDF to text.

HTML goes through trafilatura, a maintained main-content extractor: it drops navigation,
footers, sidebars and cookie banners and writes the rest as markdown with headings, lists, code
blocks, tables and links. Where it finds little or no main content (a fragment, a list of
links, an app shell), the whole page also goes through markdownify, after BeautifulSoup removed
the elements that are never content (``script``, ``style``, ``nav``, ``footer`` …), and the
fuller of the two is kept, so the model gets something rather than nothing. No regular
expressions parse HTML here.

The libraries are heavy (lxml, dateparser …), so they are imported on first use, never when the
plugin loads.
"""

from __future__ import annotations

import io

__all__ = ["ExtractionError", "html_to_markdown", "pdf_to_text"]

# Elements that never hold a page's main content, removed before the markdownify fallback.
_BOILERPLATE_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "nav",
    "footer",
    "header",
    "aside",
    "form",
    "iframe",
)

_SHORT_EXTRACT = 500
"""Below this many characters the extraction is compared with the whole-page fallback."""


class ExtractionError(Exception):
    """The body could not be turned into text (a broken PDF, say)."""


def html_to_markdown(html: str, url: str | None = None) -> str:
    """The readable main text of ``html`` as markdown (``url`` resolves relative links)."""
    import trafilatura

    extracted = trafilatura.extract(
        html,
        url=url,
        output_format="markdown",
        include_links=True,
        include_tables=True,
        include_formatting=True,
        include_images=False,
        include_comments=False,
        favor_recall=True,
        with_metadata=False,
    )
    text = (extracted or "").strip()
    if len(text) >= _SHORT_EXTRACT:
        return text + "\n"
    # Little or nothing found: the extractor may have judged a short page (a fragment, a list of
    # links) all boilerplate. The whole page, minus what is never content, is then at least as
    # useful; keep whichever says more.
    fallback = _fallback_markdown(html)
    return fallback if len(fallback.strip()) > len(text) else text + "\n"


def _fallback_markdown(html: str) -> str:
    """The whole page as markdown, minus the elements that are never content."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "lxml")
    for element in soup.find_all(_BOILERPLATE_TAGS):
        element.decompose()
    body = soup.body if soup.body is not None else soup
    text = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(body)
    lines = [line.rstrip() for line in text.splitlines()]
    compact: list[str] = []
    for line in lines:
        if line or (compact and compact[-1]):
            compact.append(line)
    return "\n".join(compact).strip() + "\n"


def pdf_to_text(data: bytes) -> str:
    """The text of every page of a PDF, pages separated by a ``--- page N ---`` line."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, TypeError) as error:
        raise ExtractionError(f"cannot read the PDF: {error}") from error
    parts = [f"--- page {number} ---\n{text.strip()}" for number, text in enumerate(pages, 1)]
    return "\n\n".join(parts).strip() + "\n"
