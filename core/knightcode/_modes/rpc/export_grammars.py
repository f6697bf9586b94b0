"""Small regular grammars for the export's syntax highlighting, by language and file extension.

Pygments was measured at about 25 s for a 10,000-entry session (its lexers run a Python loop
per token); one compiled alternation per language, matched by ``re.finditer``, does the same
session in well under a second. The grammars are deliberately shallow — comments, strings,
keywords, numbers, a few language-specific marks — which is what makes code readable at a glance
in a transcript. Each named group is the CSS class of what it matches (see ``HIGHLIGHT_CSS``).
They run on HTML-escaped text (see ``export_highlight._highlighted``), so no token may start or
end inside ``&amp;``, ``&lt;`` or ``&gt;``; ``tests/export`` checks that for every grammar.
"""

from __future__ import annotations

import re
from functools import cache

__all__ = ["grammar_for_language", "grammar_for_path"]

_NUMBER = r"(?P<m>\b(?:0[xX][0-9a-fA-F_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)\b)"
_DQ = r'"(?:[^"\\\n]|\\.)*"'
_SQ = r"'(?:[^'\\\n]|\\.)*'"


def _words(words: str) -> str:
    return r"\b(?:" + "|".join(sorted(set(words.split()), key=len, reverse=True)) + r")\b"


_C_KEYWORDS = """
abstract as async await break case catch class const continue default defer delete do else enum
export extends final finally fn for foreach from func function go goto if impl implements import
in instanceof interface internal let loop match mod module mut namespace new of override package
private protected pub public readonly return select static struct super switch this throw throws
trait try type typedef typeof union unsafe use using var virtual void volatile where while with
yield
"""
_C_CONSTANTS = "true false null nil None undefined self Self NaN Infinity"
_PY_KEYWORDS = """
and as assert async await break class continue def del elif else except finally for from global
if import in is lambda match nonlocal not or pass raise return try while with yield case
"""
_SH_KEYWORDS = """
if then else elif fi for while until do done case esac in function return local export readonly
declare unset exit break continue source alias select time
"""
_SQL_KEYWORDS = """
select from where insert into values update set delete create table drop alter index view join
left right inner outer on group by order having limit offset as and or not null is in exists
union all distinct primary key foreign references default case when then else end begin commit
rollback with returning
"""

_SPECS: dict[str, str] = {
    "c": (
        r"(?P<c>//[^\n]*|/\*.*?\*/)|(?P<s>" + _DQ + "|" + _SQ + r"|`(?:[^`\\]|\\.)*`)|"
        r"(?P<k>" + _words(_C_KEYWORDS) + r")|(?P<nb>" + _words(_C_CONSTANTS) + r")|"
        r"(?P<cp>^[ \t]*#[a-z]+\b[^\n]*)|" + _NUMBER
    ),
    "python": (
        r"(?P<c>#[^\n]*)|(?P<s>(?:\b[rRbBuUfF]{1,2})?(?:\"\"\".*?\"\"\"|'''.*?'''|"
        + _DQ
        + "|"
        + _SQ
        + r"))|(?P<k>"
        + _words(_PY_KEYWORDS)
        + r")|(?P<nb>"
        + _words("True False None self cls print len range")
        + r")|(?P<nd>^[ \t]*@[\w.]+)|"
        + _NUMBER
    ),
    "shell": (
        r"(?P<c>(?:^|(?<=\s))#[^\n]*)|(?P<s>"
        + _DQ
        + r"|'[^']*')|(?P<k>"
        + _words(_SH_KEYWORDS)
        + r")|(?P<nv>\$\{[^}\n]*\}|\$[\w@#?$!*-])|"
        + _NUMBER
    ),
    "hash": (  # YAML, TOML, INI, Ruby, Perl, R, Makefiles, Dockerfiles: # comments
        r"(?P<c>(?:^|(?<=\s))#[^\n]*)|(?P<s>" + _DQ + "|" + _SQ + r")|"
        r"(?P<na>^[ \t]*[\w.-]+(?=[ \t]*[:=]))|(?P<gh>^[ \t]*\[[^\]\n]+\])|"
        r"(?P<nb>\b(?:true|false|null|yes|no|nil)\b)|" + _NUMBER
    ),
    "json": r"(?P<na>" + _DQ + r"(?=\s*:))|(?P<s>" + _DQ + r")|(?P<nb>\b(?:true|false|null)\b)|"
    r"(?P<m>-?\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b)",
    "diff": r"(?P<gh>^(?:@@|\+\+\+|---|diff |index )[^\n]*)|(?P<gd>^-[^\n]*)|(?P<gi>^\+[^\n]*)",
    "markdown": r"(?P<gh>^#{1,6} [^\n]*)|(?P<s>`[^`\n]+`)|(?P<gs>\*\*[^*\n]+\*\*)",
    # markup is matched after escaping: its brackets are &lt; and &gt; here
    "markup": r"(?P<c>&lt;!--.*?--&gt;)|(?P<nt>&lt;/?[\w:.-]+|/?&gt;)|(?P<s>"
    + _DQ
    + "|"
    + _SQ
    + r")",
    "css": r"(?P<c>/\*.*?\*/)|(?P<s>" + _DQ + "|" + _SQ + r")|(?P<k>@[\w-]+)|"
    r"(?P<na>[\w-]+(?=\s*:[^:]))|(?P<m>#[0-9a-fA-F]{3,8}\b|\b\d+(?:\.\d+)?(?:px|em|rem|%|s|ms)?\b)",
    "sql": r"(?P<c>--[^\n]*|/\*.*?\*/)|(?P<s>"
    + _SQ
    + r")|(?P<k>(?i:"
    + _words(_SQL_KEYWORDS)
    + r"))|"
    + _NUMBER,
}

_LANGUAGES = {
    "c": "c c++ cpp cc cxx h hpp cs csharp java javascript js mjs cjs jsx typescript ts tsx go "
    "golang rust rs kotlin kt swift scala php dart zig groovy gradle proto",
    "python": "python py py3 pyi pyw python3 ipython",
    "shell": "bash sh shell zsh console shell-session fish ksh",
    "hash": "yaml yml toml ini cfg conf ruby rb perl pl r makefile make mk dockerfile "
    "properties env nix tf hcl cmake",
    "json": "json jsonl json5 jsonc ipynb",
    "diff": "diff patch udiff",
    "markdown": "markdown md mdx",
    "markup": "html htm xml xhtml svg vue svelte xsd xsl plist",
    "css": "css scss less sass",
    "sql": "sql psql mysql sqlite",
}
_BY_NAME = {name: family for family, names in _LANGUAGES.items() for name in names.split()}
_WHOLE_NAMES = {"makefile": "hash", "dockerfile": "hash", "gnumakefile": "hash"}


@cache
def _compiled(family: str) -> re.Pattern[str]:
    return re.compile(_SPECS[family], re.MULTILINE | re.DOTALL)


def grammar_for_language(name: str) -> re.Pattern[str] | None:
    """The grammar for a code fence's language name (``py``, ``typescript``, ``bash``, …)."""
    family = _BY_NAME.get(name.lower())
    return _compiled(family) if family else None


def grammar_for_path(path: str) -> re.Pattern[str] | None:
    """The grammar for a file by its extension (or its whole name: ``Makefile``)."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    family = _WHOLE_NAMES.get(name)
    if family is None and "." in name:
        family = _BY_NAME.get(name.rsplit(".", 1)[1])
    return _compiled(family) if family else None
