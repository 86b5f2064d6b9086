"""Sentences composed from figures in the Qt-free layers (gui/core/words.py): English wherever a str goes,
translated by template in the window, collected by the extraction, refused as an f-string."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

from gui.core.chat import format_stats
from gui.core.protocol import ReplyStats
from gui.core.words import Words, joined, words
from gui.core.words import english as english_of
from gui.ui.i18n import core_text
from tests.i18n_kit import chinese, english, english_words, extract

__all__ = ["chinese", "english"]  # fixtures, used by name


def test_a_sentence_is_not_a_str_but_reads_as_its_english() -> None:
    """A sentence is its own type (the type checker tells it from plain text); it compares, hashes and prints
    as its English, and composes with words() and joined() rather than str's own joining."""
    said = words("Put {n} of {total} layers on the GPU", n=30, total=63)
    assert not isinstance(said, str) and said.english == "Put 30 of 63 layers on the GPU" == str(said)
    assert said == "Put 30 of 63 layers on the GPU" and hash(said) == hash(said.english) and "30 of 63" in said
    assert said.template == "Put {n} of {total} layers on the GPU" and said.fields == {"n": "30", "total": "63"}
    for again in (pickle.loads(pickle.dumps(said)), copy.deepcopy(said)):
        assert again == said and isinstance(again, Words) and again.template == said.template
    with pytest.raises(AttributeError):
        said.english = "changed"  # type: ignore[misc]  # frozen
    both = joined("; ", [said, "plain"])
    assert both == "Put 30 of 63 layers on the GPU; plain" and len(both.fields) == 2
    assert joined("; ", []) == ""
    nested = words("{what}.", what=said)
    assert nested.fields["what"] is said and nested == "Put 30 of 63 layers on the GPU."
    assert english_of(nested) == "Put 30 of 63 layers on the GPU." and english_of("plain") == "plain"


def _reply_stats(finish_reason: str) -> ReplyStats:
    # 80 of 100 prompt tokens computed in 0.2 s, 51 tokens generated, 50 intervals in 1 s.
    return ReplyStats(
        n_prompt=100, n_prompt_evaluated=80, n_gen=51, ttft_ms=250.0, prompt_ms=200.0, gen_ms=1000.0,
        engine_decode_tok_s=50.0, finish_reason=finish_reason,
    )  # fmt: skip


def test_the_window_translates_the_template_and_the_fields_that_are_sentences(chinese: None) -> None:
    """A reply's stats line: each part's template in Chinese, its figures as they are, the word chosen by code
    (why the reply ended) translated as a field, the list's separator kept."""
    line = format_stats(_reply_stats("length"))
    assert line == (
        "51 tokens · first token 250 ms · prompt 400.0 tok/s (80 of 100 computed) · generation 50.0 tok/s · "
        "hit max tokens"
    )  # the English, unchanged for the CLI
    shown = core_text("chat", line)
    for chinese_words in (
        "51 个词元",
        "首个词元 250 ms",
        "提示词 400.0 tok/s",
        "80 / 100",
        "生成 50.0 tok/s",
        "达到最大词元数",
    ):
        assert chinese_words in shown, (chinese_words, shown)
    assert english_words(shown) == [], shown


def test_the_english_window_shows_the_stats_line_as_composed(english: None) -> None:
    line = format_stats(_reply_stats("cancelled"))
    assert core_text("chat", line) == line and line.endswith(" · stopped")


def test_a_translation_that_does_not_fit_its_fields_shows_the_english(chinese: None) -> None:
    odd = Words("{unknown_field}", {"other": "1"}.copy() | {"unknown_field": "x"})
    assert core_text("anything", odd) == "x"


def test_the_english_window_shows_the_sentence_as_composed(english: None) -> None:
    said = words("context {n} is past the trained {trained}", n=8192, trained=4096)
    assert core_text("planner", said) == "context 8192 is past the trained 4096"


def test_the_extraction_collects_templates_and_refuses_an_f_string(tmp_path: Path) -> None:
    core = tmp_path / "core.py"
    core.write_text('n = 3\nwords("Put {n} layers", n=n)\n')
    assert [m.source for m in extract._words_messages(core)] == ["Put {n} layers"]
    core.write_text('n = 3\nwords(f"Put {n} layers")\n')
    with pytest.raises(extract.Problem, match="f-string"):
        list(extract._words_messages(core))


def test_an_error_raised_with_a_sentence_shows_it_translated_and_any_other_as_written(english: None) -> None:
    from gui.ui.i18n import error_text

    said = words("context {n} is past the trained {trained}", n=8192, trained=4096)
    error = ValueError(said)
    assert str(error) == "context 8192 is past the trained 4096" and type(str(error)) is str
    assert isinstance(error.args[0], Words) and error_text(error) == "context 8192 is past the trained 4096"
    assert error_text(OSError(2, "No such file")) == "[Errno 2] No such file"
