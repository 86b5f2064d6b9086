"""A reply ends at its format's end-of-turn text however the model splits it into tokens, and the reader
never sees part of the marker."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from gui.core.stop_text import StopText


def split(text: str, cuts: list[int]) -> list[str]:
    """``text`` cut into tokens at the given places."""
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def run(stops: tuple[str, ...], pieces: list[str]) -> tuple[list[str], bool]:
    """What is shown after each piece (and, when no stop text came, the held text at the end)."""
    matcher = StopText(stops)
    shown = [matcher.feed(piece) for piece in pieces]
    if not matcher.stopped:
        shown.append(matcher.flush())
    return shown, matcher.stopped


def test_a_marker_written_as_ordinary_tokens_ends_the_reply_and_is_never_shown() -> None:
    shown, stopped = run(("<|im_end|>",), ["Paris", ".", "<", "|", "im", "_", "end", "|", ">", "junk"])
    assert stopped
    assert shown == ["Paris", ".", "", "", "", "", "", "", "", ""]  # and nothing after the marker
    assert "".join(shown) == "Paris."


def test_the_marker_may_share_a_token_with_text_before_it() -> None:
    matcher = StopText(("<end_of_turn>",))
    assert matcher.feed("It is 4.<end") == "It is 4."
    assert matcher.held == "<end"
    assert matcher.feed("_of_turn>\n<start_of_turn>user") == ""
    assert matcher.stopped and matcher.feed("more") == "" and matcher.flush() == ""


def test_a_false_start_is_shown_as_soon_as_it_is_not_a_marker() -> None:
    matcher = StopText(("<|eot_id|>",))
    assert matcher.feed("a <") == "a "
    assert matcher.feed("|") == ""
    assert matcher.feed("b") == "<|b"  # "<|b" begins no marker: released with the token that showed it
    assert matcher.feed(" x <|eot") == " x "
    assert not matcher.stopped
    assert matcher.flush() == "<|eot"  # the reply ended another way: the held text was the model's


def test_the_earliest_of_several_stop_texts_wins() -> None:
    matcher = StopText(("<|im_end|>", "</s>"))
    assert matcher.feed("one</s>two<|im_end|>") == "one"
    assert matcher.stopped


def test_without_stop_texts_everything_passes_at_once() -> None:
    matcher = StopText(())
    assert matcher.feed("<|im_end|>") == "<|im_end|>" and not matcher.stopped and matcher.held == ""
    assert StopText(("", "")).stops == ()


def test_what_is_held_is_always_shorter_than_the_marker() -> None:
    matcher = StopText(("<|im_end|>",))
    for piece in ["<", "<", "<|", "<|im", "_", "<|im_en"]:
        matcher.feed(piece)
        assert len(matcher.held) < len("<|im_end|>")


def test_what_one_token_costs_does_not_grow_with_the_reply() -> None:
    # Each feed looks at the held text and the new token only; the held text stays shorter than a marker
    # however long the reply, so a token's work is bounded by its own length and the markers'.
    matcher = StopText(("<|im_end|>", "<end_of_turn>"))
    for _ in range(20_000):
        assert matcher.feed("word <|im ") == "word <|im " and matcher.held == ""
        assert matcher.feed("x <end_of") == "x " and matcher.held == "<end_of"
        matcher.feed("f")
    assert not matcher.stopped


@given(
    before=st.text(alphabet="ab<|_endim>", max_size=30),
    after=st.text(alphabet="ab<|_endim>", max_size=10),
    cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=12),
)
def test_any_split_shows_exactly_the_text_before_the_first_marker(before: str, after: str, cuts: list[int]) -> None:
    stop = "<|im_end|>"
    text = before + stop + after
    shown, stopped = run((stop,), split(text, cuts))
    assert stopped and "".join(shown) == text[: text.index(stop)]


@given(text=st.text(alphabet="ab<|_endim>", max_size=40), cuts=st.lists(st.integers(0, 40), max_size=12))
def test_text_without_the_marker_comes_through_whole(text: str, cuts: list[int]) -> None:
    stop = "<|im_end|>"
    if stop in text:
        return
    shown, stopped = run((stop,), split(text, cuts))
    assert not stopped and "".join(shown) == text
