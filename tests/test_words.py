"""Sentences composed from figures in the Qt-free layers (gui/core/words.py): English wherever a str goes,
translated by template in the window, collected by the extraction, refused as an f-string."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

from gui.core.words import WORDS_CONTEXT, Words, joined, words
from gui.ui.i18n import core_text
from tests.i18n_kit import chinese, english, extract

__all__ = ["chinese", "english"]  # fixtures, used by name


def test_a_sentence_is_its_english_text_everywhere_a_str_goes() -> None:
    said = words("Put {n} of {total} layers on the GPU", n=30, total=63)
    assert said == "Put 30 of 63 layers on the GPU" and isinstance(said, str)
    assert said.template == "Put {n} of {total} layers on the GPU" and said.fields == {"n": "30", "total": "63"}
    assert f"{said}." == "Put 30 of 63 layers on the GPU." and "; ".join([said, said]).count("30") == 2
    for again in (pickle.loads(pickle.dumps(said)), copy.deepcopy(said)):
        assert again == said and isinstance(again, Words) and again.template == said.template
    both = joined("; ", [said, "plain"])
    assert both == "Put 30 of 63 layers on the GPU; plain" and len(both.fields) == 2
    assert joined("; ", []) == ""


def test_the_window_translates_the_template_and_the_fields_that_are_sentences(chinese: None) -> None:
    """Uses a template the .ts holds; a field that is itself a sentence is translated too, a figure is not."""
    entries = {m.source for m in extract.collect().values() if m.context == WORDS_CONTEXT}
    assert entries, "no words() template in gui/core or gui/services"
    template = sorted(entries)[0]
    names = [part.split("}")[0].split(":")[0] for part in template.split("{")[1:] if not part.startswith("{")]
    said = words(template, **dict.fromkeys(names, "7"))
    shown = core_text("anything", said)
    assert shown != str(said) or not any(c.isalpha() for c in template.format(**dict.fromkeys(names, "")))
    inner = words(template, **dict.fromkeys(names, "7"))
    outer = joined("; ", [inner])
    assert core_text("anything", outer) == shown


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
