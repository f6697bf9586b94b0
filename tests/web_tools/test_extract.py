"""HTML to markdown and PDF to text, on fixture pages (no network)."""

from __future__ import annotations

import pytest

from knightcode_builtins.web_tools.extract import ExtractionError, html_to_markdown, pdf_to_text

from .pages.site import PAGES, tiny_pdf


def test_main_content_keeps_structure_and_drops_boilerplate() -> None:
    html = (PAGES / "boilerplate.html").read_text()
    text = html_to_markdown(html, "https://docs.example.com/frob")
    lines = text.splitlines()
    assert lines[0] == "# Configuring the frobnicator"
    assert "## Settings" in lines
    assert "2. Unpack it next to your project and run the SECOND-STEP-CHECKER." in lines
    assert "frob --print-defaults" in lines
    assert any(line.startswith("|") and "retries" in line for line in lines)
    for junk in ("HEADER-BRAND", "NAV-LOGIN", "SIDEBAR-OTHER-PAGE", "FOOTER-TERMS", "font-family"):
        assert junk not in text


def test_page_without_main_content_falls_back_to_the_whole_page() -> None:
    # Too little text for a main-content extractor; the fallback still gives the model the
    # content, as markdown, without the navigation.
    html = (
        "<html><body><nav><a href='/x'>NAV-ONLY</a></nav>"
        "<h2>Tiny</h2><ul><li><a href='https://a.example/1'>one</a></li></ul></body></html>"
    )
    text = html_to_markdown(html)
    assert "Tiny" in text
    assert "[one](https://a.example/1)" in text
    assert "NAV-ONLY" not in text


def test_pdf_text_by_page() -> None:
    text = pdf_to_text(tiny_pdf("Quarterly report text"))
    assert text.startswith("--- page 1 ---\n")
    assert "Quarterly report text" in text


def test_broken_pdf_is_an_extraction_error() -> None:
    with pytest.raises(ExtractionError, match="cannot read the PDF"):
        pdf_to_text(b"%PDF-1.4\nthis is not a pdf at all")
