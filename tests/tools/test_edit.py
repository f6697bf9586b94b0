"""The edit tool: the reference's tools.test.ts edit, fuzzy and CRLF cases, plus multi-edit."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from knightcode._tools import ToolContext, ToolError, create_edit_tool, prepare_edit_arguments

from .helpers import run, text_of, write


async def edit(ctx: ToolContext, path: str, old: str, new: str) -> str:
    return text_of(await run("edit", {"path": path, "oldText": old, "newText": new}, ctx))


# --- basics (tools.test.ts "edit tool") ---


async def test_replaces_text(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "e.txt", "Hello, world!")
    result = await run(
        "edit", {"path": "e.txt", "edits": [{"oldText": "world", "newText": "testing"}]}, ctx
    )
    assert text_of(result) == "Successfully replaced 1 block(s) in e.txt."
    assert (project_dir / "e.txt").read_text() == "Hello, testing!"
    assert result["details"] == {
        "diff": "-1 Hello, world!\n+1 Hello, testing!",
        "firstChangedLine": 1,
    }


async def test_not_found(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "e.txt", "Hello, world!")
    with pytest.raises(ToolError) as info:
        await edit(ctx, "e.txt", "nonexistent", "testing")
    assert str(info.value) == (
        "Could not find the exact text in e.txt. The old text must match "
        "exactly including all whitespace and newlines."
    )


async def test_duplicates(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "e.txt", "foo foo foo")
    with pytest.raises(ToolError) as info:
        await edit(ctx, "e.txt", "foo", "bar")
    assert str(info.value) == (
        "Found 3 occurrences of the text in e.txt. The text must be unique. "
        "Please provide more context to make it unique."
    )
    assert (project_dir / "e.txt").read_text() == "foo foo foo"


async def test_missing_file(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"^Could not edit file: gone\.txt\. Error code: ENOENT\.$"):
        await edit(ctx, "gone.txt", "a", "b")


async def test_identical_replacement(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "e.txt", "same")
    with pytest.raises(
        ToolError,
        match=r"^No changes made to e\.txt\. The replacement produced identical content\.",
    ):
        await edit(ctx, "e.txt", "same", "same")


async def test_empty_old_text(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "e.txt", "x")
    with pytest.raises(ToolError, match=r"^oldText must not be empty in e\.txt\.$"):
        await edit(ctx, "e.txt", "", "y")


async def test_no_edits_is_invalid(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "e.txt", "x")
    with pytest.raises(ToolError, match="edits must contain at least one replacement"):
        await run("edit", {"path": "e.txt", "edits": []}, ctx)


async def test_dollar_signs_are_literal(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "e.txt", "price: X")
    await edit(ctx, "e.txt", "X", "$1 $& \\1")
    assert (project_dir / "e.txt").read_text() == "price: $1 $& \\1"


# --- fuzzy matching (tools.test.ts "edit tool fuzzy matching") ---


async def test_fuzzy_trailing_whitespace(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "t.txt", "line one   \nline two  \nline three\n")
    assert "Successfully replaced" in await edit(ctx, "t.txt", "line one\nline two\n", "replaced\n")
    assert (project_dir / "t.txt").read_text() == "replaced\nline three\n"


async def test_fuzzy_smart_single_quotes(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "q.txt", "console.log(\u2018hello\u2019);\n")
    await edit(ctx, "q.txt", "console.log('hello');", "console.log('world');")
    assert (project_dir / "q.txt").read_text() == "console.log('world');\n"


async def test_fuzzy_smart_double_quotes(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "q.txt", "const msg = \u201cHello World\u201d;\n")
    await edit(ctx, "q.txt", 'const msg = "Hello World";', 'const msg = "Goodbye";')
    assert (project_dir / "q.txt").read_text() == 'const msg = "Goodbye";\n'


async def test_fuzzy_unicode_dashes(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "d.txt", "range: 1\u20135\nbreak\u2014here\n")
    await edit(ctx, "d.txt", "range: 1-5\nbreak-here", "range: 10-50\nbreak--here")
    assert (project_dir / "d.txt").read_text() == "range: 10-50\nbreak--here\n"


async def test_fuzzy_non_breaking_space(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "s.txt", "hello\u00a0world\n")
    await edit(ctx, "s.txt", "hello world", "hello universe")
    assert (project_dir / "s.txt").read_text() == "hello universe\n"


async def test_fuzzy_full_width_characters(ctx: ToolContext, project_dir: Path) -> None:
    # Full-width Latin letters and an ideographic space fold to ASCII under NFKC.
    write(project_dir / "w.txt", "名前\uff1a\uff21\uff22\uff23\u3000値\n")
    await edit(ctx, "w.txt", "名前:ABC 値", "名前:XYZ 値")
    assert (project_dir / "w.txt").read_text() == "名前:XYZ 値\n"


async def test_fuzzy_nfkc_compatibility_forms(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "n.txt", "the \ufb01le is \u2460\n")  # "ﬁ" ligature, circled one
    await edit(ctx, "n.txt", "the file is 1", "the file is 2")
    assert (project_dir / "n.txt").read_text() == "the file is 2\n"


async def test_exact_match_preferred(ctx: ToolContext, project_dir: Path) -> None:
    # The file has trailing spaces elsewhere: an exact match must not normalise them away.
    write(project_dir / "x.txt", "const x = 'exact';\nconst y = 'other';   \n")
    await edit(ctx, "x.txt", "const x = 'exact';", "const x = 'changed';")
    assert (project_dir / "x.txt").read_text() == "const x = 'changed';\nconst y = 'other';   \n"


async def test_fuzzy_rewrites_whole_file_normalised(ctx: ToolContext, project_dir: Path) -> None:
    # Reference behaviour: a fuzzy match works on (and writes) the normalised content.
    write(project_dir / "x.txt", "a = \u201cq\u201d  \nb = 1\n")
    await edit(ctx, "x.txt", "b = 1", "b = 2")
    assert (project_dir / "x.txt").read_text() == "a = \u201cq\u201d  \nb = 2\n"  # exact: untouched
    await edit(ctx, "x.txt", 'a = "q"', 'a = "r"')
    assert (project_dir / "x.txt").read_text() == 'a = "r"\nb = 2\n'


async def test_fuzzy_still_fails_when_absent(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "n.txt", "completely different content\n")
    with pytest.raises(ToolError, match="Could not find the exact text"):
        await edit(ctx, "n.txt", "this does not exist", "replacement")


async def test_fuzzy_duplicates(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "dup.txt", "hello world   \nhello world\n")
    with pytest.raises(ToolError, match=r"^Found 2 occurrences of the text in dup\.txt"):
        await edit(ctx, "dup.txt", "hello world", "replaced")


# --- line endings and BOM (tools.test.ts "edit tool CRLF handling") ---


async def test_lf_old_text_matches_crlf_file(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "c.txt", "line one\r\nline two\r\nline three\r\n")
    assert "Successfully replaced" in await edit(ctx, "c.txt", "line two\n", "replaced line\n")
    assert (project_dir / "c.txt").read_bytes() == b"line one\r\nreplaced line\r\nline three\r\n"


async def test_crlf_preserved(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "c.txt", "first\r\nsecond\r\nthird\r\n")
    await edit(ctx, "c.txt", "second\n", "REPLACED\n")
    assert (project_dir / "c.txt").read_bytes() == b"first\r\nREPLACED\r\nthird\r\n"


async def test_lf_preserved(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "l.txt", "first\nsecond\nthird\n")
    await edit(ctx, "l.txt", "second\n", "REPLACED\n")
    assert (project_dir / "l.txt").read_bytes() == b"first\nREPLACED\nthird\n"


async def test_duplicates_across_crlf_and_lf(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "m.txt", "hello\r\nworld\r\n---\r\nhello\nworld\n")
    with pytest.raises(ToolError, match="Found 2 occurrences"):
        await edit(ctx, "m.txt", "hello\nworld\n", "replaced\n")


async def test_bom_preserved(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "b.txt", "\ufefffirst\r\nsecond\r\nthird\r\n")
    await edit(ctx, "b.txt", "second\n", "REPLACED\n")
    assert (project_dir / "b.txt").read_bytes() == "\ufefffirst\r\nREPLACED\r\nthird\r\n".encode()


async def test_file_without_newlines(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "one.txt", "single line content")
    await edit(ctx, "one.txt", "line", "LINE")
    assert (project_dir / "one.txt").read_text() == "single LINE content"


async def test_lone_cr_becomes_lf(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "cr.txt", "first\rsecond\rthird\r")
    await edit(ctx, "cr.txt", "second\n", "REPLACED\n")
    assert (project_dir / "cr.txt").read_bytes() == b"first\nREPLACED\nthird\n"


# --- several edits per call ---


async def test_multi_edit_applied_against_original(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "m.py", "a = 1\nb = 2\nc = 3\n")
    result = await run(
        "edit",
        {
            "path": "m.py",
            "edits": [
                {"oldText": "c = 3", "newText": "c = 30"},
                {"oldText": "a = 1", "newText": "a = 10\nextra = 0"},
            ],
        },
        ctx,
    )
    assert text_of(result) == "Successfully replaced 2 block(s) in m.py."
    assert (project_dir / "m.py").read_text() == "a = 10\nextra = 0\nb = 2\nc = 30\n"
    assert result["details"]["firstChangedLine"] == 1


async def test_multi_edit_overlap(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "o.txt", "alpha beta gamma")
    with pytest.raises(ToolError) as info:
        await run(
            "edit",
            {
                "path": "o.txt",
                "edits": [
                    {"oldText": "beta gamma", "newText": "x"},
                    {"oldText": "alpha beta", "newText": "y"},
                ],
            },
            ctx,
        )
    assert str(info.value) == (
        "edits[1] and edits[0] overlap in o.txt. Merge them into one edit "
        "or target disjoint regions."
    )
    assert (project_dir / "o.txt").read_text() == "alpha beta gamma"


async def test_multi_edit_errors_name_the_edit(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "e.txt", "one two two")

    def both(old: str) -> list[dict[str, str]]:
        return [{"oldText": "one", "newText": "1"}, {"oldText": old, "newText": "x"}]

    with pytest.raises(
        ToolError, match=r"^Could not find edits\[1\] in e\.txt\. The oldText must match"
    ):
        await run("edit", {"path": "e.txt", "edits": both("three")}, ctx)
    with pytest.raises(
        ToolError,
        match=r"^Found 2 occurrences of edits\[1\] in e\.txt\. Each oldText must be unique",
    ):
        await run("edit", {"path": "e.txt", "edits": both("two")}, ctx)
    with pytest.raises(ToolError, match=r"^edits\[1\]\.oldText must not be empty in e\.txt\.$"):
        await run("edit", {"path": "e.txt", "edits": both("")}, ctx)


async def test_one_fuzzy_edit_switches_all_to_normalised_space(
    ctx: ToolContext, project_dir: Path
) -> None:
    write(project_dir / "f.txt", "x = \u201chi\u201d\ny = 1   \n")
    await run(
        "edit",
        {
            "path": "f.txt",
            "edits": [
                {"oldText": 'x = "hi"', "newText": 'x = "ho"'},
                {"oldText": "y = 1", "newText": "y = 2"},
            ],
        },
        ctx,
    )
    assert (project_dir / "f.txt").read_text() == 'x = "ho"\ny = 2\n'


async def test_legacy_form_and_json_string_edits(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "l.txt", "one two three")
    edits = json.dumps([{"oldText": "one", "newText": "1"}])
    result = await run(
        "edit", {"path": "l.txt", "edits": edits, "oldText": "three", "newText": "3"}, ctx
    )
    assert text_of(result) == "Successfully replaced 2 block(s) in l.txt."
    assert (project_dir / "l.txt").read_text() == "1 two 3"


def test_prepare_arguments_shapes() -> None:
    assert prepare_edit_arguments({"path": "p", "oldText": "a", "newText": "b"}) == {
        "path": "p",
        "edits": [{"oldText": "a", "newText": "b"}],
    }
    assert prepare_edit_arguments({"path": "p", "edits": '[{"oldText":"a","newText":"b"}]'}) == {
        "path": "p",
        "edits": [{"oldText": "a", "newText": "b"}],
    }
    assert prepare_edit_arguments({"path": "p", "edits": "not json"}) == {
        "path": "p",
        "edits": "not json",
    }
    assert prepare_edit_arguments("raw") == "raw"
    tool = create_edit_tool()
    assert tool.prepare_arguments is prepare_edit_arguments
    assert tool.parameters["additionalProperties"] is False


async def test_concurrent_edits_of_one_file_are_serialised(
    ctx: ToolContext, project_dir: Path
) -> None:
    write(project_dir / "c.txt", "".join(f"line {i}\n" for i in range(20)))
    await asyncio.gather(*(edit(ctx, "c.txt", f"line {i}\n", f"LINE {i}\n") for i in range(20)))
    assert (project_dir / "c.txt").read_text() == "".join(f"LINE {i}\n" for i in range(20))


async def test_aborted(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "a.txt", "a")
    ctx.signal.abort()
    with pytest.raises(ToolError, match=r"^Operation aborted$"):
        await edit(ctx, "a.txt", "a", "b")
    assert (project_dir / "a.txt").read_text() == "a"
