"""Syntax highlighting and markdown for the exported session page, done once at export time.

The page must work offline and run no code of the session's, so highlighting happens here with
Pygments (already installed with rich) rather than with a highlighter shipped into the page.
Both Pygments' HTML formatter and markdown-it (with raw HTML switched off) escape every piece of
text they emit; markdown images are switched off too, since loading one would reach the network.
Very long blocks are shown plain: highlighting is linear but Pygments is slow per character, and
an export of a big session must stay fast.
"""

from __future__ import annotations

import html
from functools import lru_cache
from pathlib import PurePosixPath

from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

__all__ = ["HIGHLIGHT_CSS", "MAX_HIGHLIGHT_CHARS", "code_block", "lexer_for_path", "markdown"]

MAX_HIGHLIGHT_CHARS = 40_000
"""Blocks longer than this are escaped but not highlighted (keeps big exports fast)."""

_FORMATTER = HtmlFormatter(nowrap=True)


@lru_cache(maxsize=256)
def _lexer_by_name(name: str) -> Lexer | None:
    try:
        return get_lexer_by_name(name, stripnl=False)
    except ClassNotFound:
        return None


@lru_cache(maxsize=256)
def _lexer_by_suffix(file_name: str) -> Lexer | None:
    try:
        return get_lexer_for_filename(file_name, stripnl=False)
    except ClassNotFound:
        return None


def lexer_for_path(path: str) -> Lexer | None:
    """The lexer for a file name's extension (``Makefile``-like names by their whole name)."""
    name = PurePosixPath(path.replace("\\", "/")).name
    if not name:
        return None
    suffix = PurePosixPath(name).suffix
    # Cache by extension, not by full name: a session reads hundreds of distinct files.
    return _lexer_by_suffix(f"x{suffix}" if suffix else name)


def _highlighted(text: str, lexer: Lexer | None) -> str:
    if lexer is None or len(text) > MAX_HIGHLIGHT_CHARS:
        return html.escape(text, quote=True)
    return highlight(text, lexer, _FORMATTER)


def code_block(text: str, *, path: str | None = None, language: str | None = None) -> str:
    """``<pre class="hl">`` holding ``text`` highlighted for ``path``'s extension or the named
    ``language`` (plain, escaped text when neither is known).
    """
    lexer = lexer_for_path(path) if path else None
    if lexer is None and language:
        lexer = _lexer_by_name(language.lower())
    return f'<pre class="hl">{_highlighted(text, lexer)}</pre>'


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
.hl .c,.hl .c1,.hl .cm,.hl .cs,.hl .ch,.hl .cp,.hl .cpf{color:#6a737d;font-style:italic}
.hl .k,.hl .kc,.hl .kd,.hl .kn,.hl .kp,.hl .kr,.hl .ow{color:#cf222e}
.hl .kt,.hl .nc,.hl .nn{color:#953800}
.hl .s,.hl .s1,.hl .s2,.hl .sa,.hl .sb,.hl .sc,.hl .sd,.hl .se,.hl .sh,.hl .si,.hl .sx,
.hl .sr,.hl .ss,.hl .dl{color:#0a3069}
.hl .m,.hl .mi,.hl .mf,.hl .mh,.hl .mo,.hl .il{color:#0550ae}
.hl .nf,.hl .fm,.hl .nd{color:#8250df}.hl .nb,.hl .bp,.hl .nt{color:#116329}
.hl .na,.hl .nv,.hl .vi,.hl .no{color:#0550ae}
.hl .gd{color:#82071e;background:#ffebe9}.hl .gi{color:#116329;background:#dafbe1}
.hl .gh,.hl .gu{color:#0550ae;font-weight:600}.hl .ge{font-style:italic}
.hl .gs{font-weight:600}.hl .err{color:inherit}
"""
"""Token colours for ``pre.hl`` blocks (Pygments' short class names), kept here rather than
generated from a Pygments style so the page looks the same whatever Pygments is installed."""
