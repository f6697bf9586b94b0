"""The numbered display diff of an edit (details.diff), as the reference formats it."""

from __future__ import annotations

from knightcode._tools.edit_diff import generate_diff, normalize_for_fuzzy_match


def lines(count: int, changed: dict[int, str] | None = None) -> str:
    changed = changed or {}
    return "".join(f"{changed.get(i, f'line {i}')}\n" for i in range(1, count + 1))


def test_context_is_four_lines_with_ellipses() -> None:
    diff, first = generate_diff(lines(20), lines(20, {10: "CHANGED"}))
    assert first == 10
    assert diff.split("\n") == [
        "    ...",
        "  6 line 6",
        "  7 line 7",
        "  8 line 8",
        "  9 line 9",
        "-10 line 10",
        "+10 CHANGED",
        " 11 line 11",
        " 12 line 12",
        " 13 line 13",
        " 14 line 14",
        "    ...",
    ]


def test_close_changes_share_context() -> None:
    diff, _ = generate_diff(lines(12), lines(12, {3: "A", 7: "B"}))
    assert diff.split("\n")[:9] == [
        "  1 line 1",
        "  2 line 2",
        "- 3 line 3",
        "+ 3 A",
        "  4 line 4",
        "  5 line 5",
        "  6 line 6",
        "- 7 line 7",
        "+ 7 B",
    ]


def test_distant_changes_elide_the_middle() -> None:
    diff, _ = generate_diff(lines(40), lines(40, {5: "A", 30: "B"}))
    body = diff.split("\n")
    assert body.count("    ...") == 2
    assert "+ 5 A" in body and "+30 B" in body
    assert " 13 line 13" not in body
    assert " 34 line 34" in body and " 35 line 35" not in body


def test_insertion_line_numbers_follow_the_new_file() -> None:
    diff, first = generate_diff("a\nb\n", "a\nx\ny\nb\n")
    assert first == 2
    assert diff == " 1 a\n+2 x\n+3 y\n 2 b"


def test_normalisation_for_fuzzy_match() -> None:
    assert (
        normalize_for_fuzzy_match("a\u00a0b  \n\u201cq\u201d \u2014 \u2018s\u2019\t")
        == "a b\n\"q\" - 's'"
    )
