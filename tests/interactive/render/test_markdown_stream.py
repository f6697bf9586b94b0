"""StreamingMarkdown: where blocks end; streamed blocks show what the whole message shows."""

from __future__ import annotations

import random

import pytest

from knightcode._modes.interactive.render.markdown_stream import StreamingMarkdown
from knightcode._modes.interactive.render.messages import render_assistant_text

from .support import lines, opts


def _feed(text):
    """Feed ``text`` one character at a time; returns (completed blocks, the stream)."""
    stream = StreamingMarkdown()
    done = []
    for char in text:
        stream.append(char)
        done += stream.take_completed()
    return done, stream


def _blocks(text):
    done, stream = _feed(text)
    return done, stream.tail()


def test_a_blank_line_ends_a_paragraph_and_the_next_line_starts_the_tail():
    assert _blocks("one\ntwo\n\nthree") == (["one\ntwo\n\n"], "three")


def test_the_tail_holds_the_open_block_only():
    stream = StreamingMarkdown()
    stream.append("first paragraph\n\nsecond ")
    assert stream.take_completed() == ["first paragraph\n\n"]
    stream.append("paragraph grows")
    assert stream.tail() == "second paragraph grows"
    assert stream.take_completed() == []


def test_blank_lines_inside_a_fence_end_nothing_and_the_closing_fence_ends_it():
    text = "```python\nx = 1\n\n\ny = 2\n```\nafter"
    assert _blocks(text) == (["```python\nx = 1\n\n\ny = 2\n```\n"], "after")


def test_tilde_fences_and_longer_fences_need_their_own_closing_marker():
    text = "~~~ js title=x\na\n\n```\nstill code\n~~~\n````md\n```\ninner\n```\n\n````\n"
    done, tail = _blocks(text)
    assert done == [
        "~~~ js title=x\na\n\n```\nstill code\n~~~\n",
        "````md\n```\ninner\n```\n\n````\n",
    ]
    assert tail == ""


def test_inline_triple_backticks_are_not_a_fence():
    assert _blocks("```x``` is code\n\nnext") == (["```x``` is code\n\n"], "next")


def test_a_fence_interrupts_a_paragraph():
    assert _blocks("Run this:\n```sh\nls\n```\n") == (["Run this:\n", "```sh\nls\n```\n"], "")


def test_a_heading_is_a_block_complete_at_its_newline():
    assert _blocks("# Title\nText") == (["# Title\n"], "Text")
    assert _blocks("para\n## Sub\n") == (["para\n", "## Sub\n"], "")
    assert _blocks("#hashtag\n") == ([], "#hashtag\n")


def test_leading_blank_lines_join_the_next_block():
    assert _blocks("\n\n# H\n") == (["\n\n# H\n"], "")


def test_a_loose_list_stays_one_block_until_an_unindented_line():
    text = (
        "1. one\n\n2. two\n\n   more of two\n\n   ```py\n   a\n\n   b\n   ```\n3. three\n\nAfter.\n"
    )
    done, tail = _blocks(text)
    assert done == [text[: text.index("After.")]]
    assert tail == "After.\n"


def test_a_list_after_a_paragraph_is_kept_with_it():
    done, tail = _blocks("Steps:\n- a\n\n- b\n\nEnd\n")
    assert done == ["Steps:\n- a\n\n- b\n\n"] and tail == "End\n"


def test_an_unindented_heading_or_fence_ends_a_list():
    assert _blocks("- a\n# H\n") == (["- a\n", "# H\n"], "")
    assert _blocks("- a\n```\nx\n```\n") == (["- a\n", "```\nx\n```\n"], "")


def test_a_fence_in_a_list_item_ends_with_the_item():
    text = "- item\n  ```\n  code\n\nplain\n\n"
    done, tail = _blocks(text)
    assert done == ["- item\n  ```\n  code\n\n", "plain\n\n"] and tail == ""


def test_a_thematic_break_after_a_blank_line_is_a_block():
    assert _blocks("para\n\n---\nnext") == (["para\n\n", "---\n"], "next")
    assert _blocks("Title\n---\n") == ([], "Title\n---\n")  # a setext heading underline


def test_finish_returns_the_rest_and_drops_a_blank_remainder():
    stream = StreamingMarkdown()
    stream.append("a\n\nb")
    assert stream.finish() == ["a\n\n", "b"]
    stream.append("c\n\n\n")
    assert stream.finish() == ["c\n\n"]
    assert stream.tail() == "" and stream.finish() == []


def test_an_unclosed_fence_stays_in_the_tail():
    done, tail = _blocks("```\ncode\n\nmore\n")
    assert done == [] and tail == "```\ncode\n\nmore\n"


# --- property: streamed blocks are the input, and render as the whole does -----------------

_WORDS = [
    "alpha",
    "beta",
    "`code`",
    "**bold**",
    "*it*",
    "gamma",
    "delta",
    "x_y",
    "42",
    "[l](http://e.x)",
]


def _words(rng, low=1, high=8):
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(low, high)))


def _fence(rng, indent=""):
    char = rng.choice("`~")
    length = rng.randint(3, 5)
    info = rng.choice(["", "python", "js extra words", "text"])
    body = []
    for _ in range(rng.randint(0, 5)):
        kind = rng.random()
        if kind < 0.2:
            body.append("")
        elif kind < 0.3:
            body.append(char * (length - 1) if length > 3 else ("~~~" if char == "`" else "```"))
        else:
            body.append(f"x = {rng.randint(0, 99)}  # {_words(rng, 1, 3)}")
    fence = char * length
    block = [f"{fence}{info}", *body, char * rng.randint(length, length + 1)]
    return "\n".join(indent + line if line else "" for line in block)


def _list(rng):
    ordered = rng.random() < 0.5
    start = rng.randint(1, 4)
    items = []
    for n in range(rng.randint(1, 4)):
        marker = f"{start + n}." if ordered else rng.choice("-*+")
        pad = " " * (len(marker) + 1)
        item = f"{marker} {_words(rng)}"
        extra = rng.random()
        if extra < 0.25:
            item += f"\n{pad}{_words(rng)}"
        elif extra < 0.4:
            item += f"\n\n{pad}{_words(rng)}"
        elif extra < 0.5:
            item += "\n\n" + _fence(rng, pad)
        items.append(item)
    return rng.choice(["\n", "\n\n"]).join(items)


def _fragment(rng):
    kind = rng.randrange(9)
    if kind == 0:
        return "#" * rng.randint(1, 3) + " " + _words(rng, 1, 4)
    if kind == 1:
        return _fence(rng)
    if kind == 2:
        return _list(rng)
    if kind == 3:
        return "\n".join("> " + _words(rng) for _ in range(rng.randint(1, 3)))
    if kind == 4:
        rows = [f"| {rng.randint(0, 9)} | {_words(rng, 1, 2)} |" for _ in range(rng.randint(1, 3))]
        return "\n".join(["| a | b |", "|---|---|", *rows])
    if kind == 5:
        return "    indented code\n    more code"
    if kind == 6:
        return "---"
    return "\n".join(_words(rng) for _ in range(rng.randint(1, 3)))


def _document(rng):
    parts = [_fragment(rng) for _ in range(rng.randint(1, 8))]
    out = parts[0]
    for part in parts[1:]:
        tight = part.startswith(("#", "```", "~~~")) and rng.random() < 0.4
        gap = "\n" if tight else rng.choice(["\n\n", "\n\n", "\n  \n", "\n\n\n"])
        if part == "---" and tight is False and gap == "\n":
            gap = "\n\n"
        out += gap + part
    return out + rng.choice(["", "\n", "\n\n"])


def _visible(markdown_blocks, width=70):
    shown = []
    for block in markdown_blocks:
        shown += [line.rstrip() for line in lines(render_assistant_text(block, opts()), width)]
    return [line for line in shown if line.strip()]


@pytest.mark.parametrize("seed", range(60))
def test_streamed_blocks_are_the_input_and_render_as_the_whole(seed):
    rng = random.Random(seed)
    for _ in range(5):
        document = _document(rng)
        stream = StreamingMarkdown()
        taken = []
        i = 0
        while i < len(document):
            size = rng.choice([1, 1, 2, 3, 5, 8, 13, 40])
            stream.append(document[i : i + size])
            i += size
            taken += stream.take_completed()
            assert "".join(taken) + stream.tail() == document[:i]
        for block in taken:
            assert block.strip(), "a completed block always has content"
        taken += stream.finish()
        assert "".join(taken).rstrip() == document.rstrip()
        assert _visible(taken) == _visible([document]), document
