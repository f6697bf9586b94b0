"""Syntax highlighting and markdown for the exported session page, done once at export time.

The page must work offline and run no code of the session's, so highlighting happens here, with
the small grammars of :mod:`.export_grammars`, rather than with a highlighter shipped into the
page. Every piece of text is escaped as it is emitted; markdown-it runs with raw HTML switched
off (so HTML in a message is shown as text) and markdown images switched off too, since loading
one would reach the network. Very long blocks are shown plain, so an export stays fast.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

from markdown_it import MarkdownIt

from knightcode._modes.rpc.export_grammars import grammar_for_language, grammar_for_path

__all__ = ["HIGHLIGHT_CSS", "MAX_HIGHLIGHT_CHARS", "code_block", "markdown"]

MAX_HIGHLIGHT_CHARS = 200_000
"""Blocks longer than this are escaped but not highlighted (keeps big exports fast)."""


def _span(match: re.Match[str]) -> str:
    return f'<span class="{match.lastgroup}">{match.group()}</span>'


def _highlighted(text: str, grammar: re.Pattern[str] | None) -> str:
    """``text`` escaped, then its tokens wrapped in spans.

    The grammars run on the escaped text (one escape and one ``re.sub`` per block, no Python
    work between tokens). That is safe because escaping only turns ``&``, ``<`` and ``>`` into
    ``&amp;``, ``&lt;`` and ``&gt;``, and no grammar can start or end a token inside one of
    those (the markup grammar matches the escaped brackets themselves).
    """
    escaped = html.escape(text, quote=False)
    if grammar is None or len(text) > MAX_HIGHLIGHT_CHARS:
        return escaped
    return grammar.sub(_span, escaped)


def code_block(text: str, *, path: str | None = None, language: str | None = None) -> str:
    """``<pre class="hl">`` holding ``text`` highlighted for ``path``'s extension or the named
    ``language`` (plain, escaped text when neither is known).
    """
    grammar = grammar_for_path(path) if path else None
    if grammar is None and language:
        grammar = grammar_for_language(language)
    return f'<pre class="hl">{_highlighted(text, grammar)}</pre>'


def _fence(code: str, language: str, _attributes: str) -> str:
    # markdown-it wraps what this returns in <pre><code> unless it already starts with <pre.
    name = language.strip().split(maxsplit=1)[0] if language.strip() else ""
    return code_block(code, language=name or None)


@lru_cache(maxsize=1)
def _markdown_parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "highlight": _fence})
    parser.enable(["table", "strikethrough"])
    parser.disable("image")
    return parser


def markdown(text: str) -> str:
    """Markdown as safe HTML: raw HTML is shown as text, ``javascript:`` links are dropped (by
    markdown-it's link validation), code fences are highlighted.
    """
    rendered: str = _markdown_parser().render(text)
    return rendered


HIGHLIGHT_CSS = """
.hl .c{color:#6a737d;font-style:italic}.hl .cp,.hl .nd{color:#8250df}.hl .k{color:#cf222e}
.hl .s{color:#0a3069}.hl .m,.hl .na,.hl .nv{color:#0550ae}.hl .nb,.hl .nt{color:#116329}
.hl .gd{color:#82071e;background:#ffebe9}.hl .gi{color:#116329;background:#dafbe1}
.hl .gh{color:#0550ae;font-weight:600}.hl .gs{font-weight:600}
"""
"""Colours of the grammars' classes (:mod:`.export_grammars`) in ``pre.hl`` blocks."""
