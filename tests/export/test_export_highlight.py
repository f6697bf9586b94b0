"""The export's highlighter: every grammar keeps the text intact and escaped."""

from __future__ import annotations

import html
import re

import pytest

from knightcode._modes.rpc.export_grammars import _LANGUAGES, grammar_for_path
from knightcode._modes.rpc.export_highlight import MAX_HIGHLIGHT_CHARS, code_block, markdown

TRICKY = """\
#include <stdio.h> // a < b && c > d
def f(x): return "a<b" if x else 'c>&d'  # x < 3 & amp;
<div class="x">&amp; &lt;not a tag&gt;</div><!-- <b> -->
SELECT * FROM t WHERE a <> 'x&y'; -- lt gt amp
key: "<value>" # comment & more
@@ -1,2 +1,2 @@
-old <line>
+new &line
echo "$HOME" <<EOF > out && ls 0x1F 3.14e10
{"lt": 1, "gt": [true, null], "amp": "&"}
## Heading <b> & `code <i>`
color: #fff; @media (max-width: 10px) { a { b: c } } /* < */
"""

FAMILIES = sorted(_LANGUAGES)
SPAN = re.compile(r'<span class="[a-z]+">|</span>')


@pytest.mark.parametrize("family", FAMILIES)
def test_each_grammar_keeps_the_text_and_never_splits_an_entity(family: str) -> None:
    language = _LANGUAGES[family].split()[0]
    block = code_block(TRICKY, language=language)
    assert block.startswith('<pre class="hl">') and block.endswith("</pre>")
    inner = block[len('<pre class="hl">') : -len("</pre>")]
    assert "<span" in inner, family  # something was highlighted
    assert html.unescape(SPAN.sub("", inner)) == TRICKY
    # a span boundary inside &lt; (e.g. "&l<span" or "&lt</span>;") would break the entity
    assert not re.search(r"&[a-z]*<", inner)
    assert "<" not in SPAN.sub("", inner)  # no markup but the spans


@pytest.mark.parametrize(
    ("path", "token"),
    [
        ("src/app.py", '<span class="k">def</span>'),
        ("web/App.tsx", '<span class="k">return</span>'),
        ("Makefile", '<span class="c"># comment &amp; more</span>'),
        ("q.sql", '<span class="k">SELECT</span>'),
        ("x.json", '<span class="nb">true</span>'),
        ("page.html", '<span class="nt">&lt;div</span>'),
    ],
)
def test_files_are_highlighted_by_extension(path: str, token: str) -> None:
    assert grammar_for_path(path) is not None
    assert token in code_block(TRICKY, path=path)


def test_unknown_and_huge_blocks_are_plain_escaped_text() -> None:
    assert (
        code_block("<x> & y", path="notes.unknownext") == '<pre class="hl">&lt;x&gt; &amp; y</pre>'
    )
    huge = "def x(): pass\n" * (MAX_HIGHLIGHT_CHARS // 10)
    assert "<span" not in code_block(huge, language="python")


def test_markdown_is_rendered_without_raw_html_links_to_script_or_images() -> None:
    rendered = markdown(
        "# Title\n\n**bold** <script>alert(1)</script> [a](javascript:alert(1)) "
        "[b](https://example.com) ![img](https://example.com/x.png)\n\n"
        "```js\nlet a = '<b>';\n```\n"
    )
    assert "<h1>Title</h1>" in rendered and "<strong>bold</strong>" in rendered
    assert "&lt;script&gt;" in rendered and "<script" not in rendered
    assert 'href="javascript' not in rendered and "<img" not in rendered
    assert '<a href="https://example.com">b</a>' in rendered
    assert '<span class="k">let</span>' in rendered and "&lt;b&gt;" in rendered
