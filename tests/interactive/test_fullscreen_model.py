"""The fullscreen transcript's model: virtualised rendering, viewport moves and search (rich
renders for real; no terminal needed).
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from knightcode._modes.interactive.fullscreen.model import Entry, Line, TranscriptModel
from knightcode._modes.interactive.render.ansi import render_segments


class CountingRenderer:
    """``render_segments``, counting the entries it renders."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, renderable: RenderableType, width: int) -> list[Line]:
        self.calls += 1
        return render_segments(renderable, width)


def _model(exchanges: int, height: int = 10) -> tuple[TranscriptModel, CountingRenderer]:
    render = CountingRenderer()
    model = TranscriptModel(render)
    model.resize(40, height)
    for n in range(exchanges):
        model.append(Entry(lambda n=n: Text(f"question {n}"), prompt=True))
        model.append(Entry(lambda n=n: Text(f"answer {n} one\nanswer {n} two")))
    return model, render


def _texts(model: TranscriptModel) -> list[str]:
    return ["".join(s.text for s in line).rstrip() for _, _, line in model.visible()]


def test_only_what_is_shown_is_rendered() -> None:
    model, render = _model(10_000)
    assert _texts(model)[-2:] == ["answer 9999 two", ""]
    assert render.calls <= 5  # a screen of 10 rows: the last few entries, not 20,000
    model.to_top()
    assert _texts(model)[0] == "question 0"
    assert render.calls <= 10


def test_rendered_lines_are_cached_per_width() -> None:
    model, render = _model(3)
    model.visible()
    before = render.calls
    model.visible()
    assert render.calls == before
    model.resize(30, 10)
    model.visible()
    assert render.calls == before * 2


def test_scrolling_by_lines_and_pages() -> None:
    model, _ = _model(100)
    end = _texts(model)
    model.scroll(-1)
    assert _texts(model)[1:] == end[:-1] and not model.follow
    model.scroll(1)
    assert _texts(model) == end and model.follow  # back at the end: following again
    model.page(-1)
    assert _texts(model)[-1] == end[0]  # a page less one row
    model.scroll(-10_000)
    assert _texts(model)[0] == "question 0"
    model.scroll(10_000)
    assert model.follow and _texts(model) == end


def test_following_shows_new_entries_and_a_scrolled_view_stays() -> None:
    model, _ = _model(50)
    model.append(Entry(lambda: Text("new output")))
    assert "new output" in _texts(model)
    model.page(-1)
    shown = _texts(model)
    model.append(Entry(lambda: Text("more output")))
    assert _texts(model) == shown


def test_prompt_jumps() -> None:
    model, _ = _model(100)
    model.to_top()
    assert model.next_prompt() and _texts(model)[0] == "question 1"
    assert model.previous_prompt() and _texts(model)[0] == "question 0"
    assert not model.previous_prompt()
    model.to_bottom()
    assert _texts(model)[0] == "question 98"  # the last screen starts with it …
    assert model.previous_prompt() and _texts(model)[0] == "question 97"  # … the one above
    assert model.next_prompt() and _texts(model)[0] == "question 98"
    model.next_prompt()  # question 99 cannot come to the top: the view ends at the end
    assert model.follow and _texts(model)[0] == "question 98"
    assert not model.next_prompt() and model.follow


def _rendered(model: TranscriptModel) -> TranscriptModel:
    while not model.prerender(0.01):
        pass
    return model


def test_search_selects_steps_and_wraps() -> None:
    model = _rendered(_model(1_000)[0])
    model.search("ANSWER 500 ")
    assert model.match_count == 2
    assert [(m.entry, m.line) for m in (model.match(0), model.match(1))] == [(1001, 0), (1001, 1)]
    assert "answer 500 two" in _texts(model)  # revealed
    assert model.current == 1  # none below the view (the end): the nearest above it
    model.step(1)
    assert model.current == 0  # wrapped
    model.step(-1)
    assert model.current == 1
    model.to_top()
    model.search("answer 50")
    assert model.match(model.current).entry == 101  # the first below the top: "answer 50"
    model.close_search()
    assert model.match_count == 0 and model.query == "" and model.selected is None


def test_search_counts_matches_in_new_entries_and_after_prerendering() -> None:
    model, render = _model(200)
    _rendered(model)
    calls = render.calls
    model.search("two")
    assert model.match_count == 200 and render.calls == calls  # nothing rendered again
    model.append(Entry(lambda: Text("two more")))
    assert model.match_count == 201
    model.search("two m")  # narrowed: only the entries that matched "two" are looked at
    assert model.match_count == 1 and model.match(0).entry == 400


def test_a_search_before_prerendering_answers_from_what_is_rendered_then_grows() -> None:
    model, render = _model(2_000)
    model.visible()  # the last page is rendered, nothing else
    model.search("answer 1999 two")
    assert model.match_count == 1 and not model.search_complete  # found among the rendered
    before = render.calls
    model.search("answer 5 one")
    assert render.calls == before  # nothing rendered for it …
    assert model.match_count == 0 and not model.search_complete
    _rendered(model)
    assert model.search_complete and model.match_count == 1  # … found as the rest was rendered
    assert model.selected is not None and model.selected.entry == 11
    assert "answer 5 one" in _texts(model)  # and shown
    model.search("answer 5")  # narrowing
    assert model.match_count == 2 * (1 + 10 + 100)  # answers 5, 50-59, 500-599: two lines each


def test_a_resize_searches_again_at_the_new_width() -> None:
    model = _rendered(_model(50)[0])
    model.append(Entry(lambda: Text("needle " * 8)))  # 56 columns: wrapped at 40
    model.search("needle needle")
    narrow = model.match_count
    model.resize(120, 10)
    _rendered(model)
    assert model.match_count == 4 and narrow < 4  # one line now: no match cut by a wrap
