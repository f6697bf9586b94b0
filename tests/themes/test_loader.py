"""Theme files: parsing, variables, and errors that name the file and the token."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.color import Color

from knightcode._themes.build import build_theme
from knightcode._themes.loader import ThemeFileError, load_theme_file, parse_theme
from tests.themes.support import add_vars, valid_theme, write_theme


def problems_of(data: object) -> list[str]:
    with pytest.raises(ThemeFileError) as caught:
        parse_theme(data, "t.json")
    return caught.value.problems


def test_vars_resolve_through_other_vars_and_values_keep_their_kind() -> None:
    data = valid_theme(accent="primary", muted=244, text="")
    add_vars(data, primary="base", base="#00AAFF")
    spec = parse_theme(data, "t.json")
    assert spec.colours["accent"] == "#00aaff"
    assert spec.colours["muted"] == 244
    assert spec.colours["text"] == ""
    theme = build_theme(spec)
    assert theme.accent.color == Color.parse("#00aaff")
    assert theme.muted.color == Color.from_ansi(244)
    assert theme.text.color is None


def test_unknown_token_is_named() -> None:
    assert "colors.accnet: unknown token" in problems_of(valid_theme(accnet="#ffffff"))


def test_missing_required_tokens_are_listed() -> None:
    data = valid_theme()
    colours = data["colors"]
    assert isinstance(colours, dict)
    del colours["mdHeading"], colours["syntaxType"]
    assert "colors: missing required tokens mdHeading, syntaxType" in problems_of(data)


def test_optional_tokens_may_be_left_out() -> None:
    data = valid_theme()
    colours = data["colors"]
    assert isinstance(colours, dict)
    del colours["thinkingMax"]
    theme = build_theme(parse_theme(data, "t.json"))
    assert theme.thinking_max == theme.thinking_xhigh


@pytest.mark.parametrize("value", ["#ff00", "crimson", 256, -1, True, None, [1]])
def test_bad_colour_values_are_named(value: object) -> None:
    (problem,) = problems_of(valid_theme(error=value))
    assert problem.startswith("colors.error: ")
    if value == "crimson":
        assert 'undefined variable "crimson"' in problem
    else:
        assert "bad colour value" in problem


def test_a_bad_var_is_reported_at_the_token_that_uses_it() -> None:
    data = valid_theme(accent="primary")
    add_vars(data, primary="#12")
    (problem,) = problems_of(data)
    assert problem.startswith("colors.accent: bad colour value")
    assert "vars.primary" in problem


def test_a_var_loop_is_reported_not_followed_forever() -> None:
    data = valid_theme(accent="a")
    add_vars(data, a="b", b="a")
    (problem,) = problems_of(data)
    assert "loop (a -> b -> a)" in problem


def test_every_problem_of_a_file_is_reported_at_once() -> None:
    data = valid_theme(accent="nope", bogus=1, error="#zzzzzz")
    data["extra"] = True
    del data["name"]
    problems = problems_of(data)
    assert len(problems) == 5, problems


def test_not_an_object() -> None:
    assert problems_of([]) == ["a theme file is a JSON object"]
    assert "colors: required, an object" in problems_of({"name": "x"})


def test_invalid_json_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "name": "x",\n  "colors": {,}\n}', encoding="utf-8")
    with pytest.raises(ThemeFileError) as caught:
        load_theme_file(path)
    assert str(path) in str(caught.value)
    assert "line 3" in str(caught.value)


def test_the_error_message_names_the_file(tmp_path: Path) -> None:
    path = write_theme(tmp_path, valid_theme(mdHr="grey"))
    with pytest.raises(ThemeFileError) as caught:
        load_theme_file(path)
    assert str(caught.value).startswith(f"{path}: colors.mdHr: undefined variable")


def test_syntax_and_markdown_tokens_reach_the_renderers() -> None:
    spec = parse_theme(valid_theme(syntaxKeyword="#010203", mdHeading="#040506"), "t.json")
    theme = build_theme(spec)
    keyword = theme.code_theme.get_style_for_token(("Keyword", "Namespace"))
    assert keyword.color == Color.parse("#010203")
    assert theme.markdown.styles["markdown.h2"].color == Color.parse("#040506")
