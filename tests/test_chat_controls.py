"""The chat pane's controls on the real engine: regenerate, edit, copy, presets, chat format, context meter and
overflow."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_engine import FakeEngine
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QAbstractSlider,
    QAbstractSpinBox,
    QComboBox,
    QPlainTextEdit,
    QScrollBar,
)
from window_kit import load, open_window

from gui.core import protocol as p
from gui.core.params import LoadSettings
from gui.ui.main_window import MainWindow

TIMEOUT = 120_000


def open_loaded(
    qtbot, demo_model: Path, n_ctx: int = 1024, engine: FakeEngine | None = None, threads: int = 2
) -> MainWindow:
    """Loaded on the CPU; the real engine unless a test's subject is the pane alone."""
    settings = LoadSettings(n_threads=threads, n_ctx=n_ctx)
    win = open_window(qtbot, demo_model.parent, demo_model, settings, engine=engine)
    win.plan_panel.select_target("cpu")
    load(qtbot, win)
    win.chat.sampling_panel.preset.setCurrentText("Deterministic")
    return win


def ask(qtbot, win: MainWindow, text: str, max_tokens: int = 24) -> p.ReplyStats:
    win.chat.max_tokens = max_tokens
    win.chat.input.setPlainText(text)
    with qtbot.waitSignal(win.chat.reply_finished, timeout=TIMEOUT) as done:
        QTest.keyClick(win.chat.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    return done.args[0]


def test_presets_fill_the_sampler_and_edits_make_it_custom(qtbot, demo_model: Path) -> None:
    win = open_loaded(qtbot, demo_model, engine=FakeEngine())
    panel = win.chat.sampling_panel
    assert win.chat.sampling.temperature == 0.0 and win.chat.sampling.seed == 0
    panel.preset.setCurrentText("Creative")
    assert win.chat.sampling.temperature == 1.0 and win.chat.sampling.top_k == 100
    panel.boxes["temperature"].setValue(0.55)
    assert panel.preset.currentText() == "Custom" and win.chat.sampling.temperature == 0.55
    win.close()


def test_the_pane_says_which_chat_format_is_in_use_and_why(qtbot, demo_model: Path) -> None:
    engine = FakeEngine()
    why = "No chat template in this file: formatting as Gemma (the vocabulary has Gemma's turn markers)."
    engine.chat_format = ("gemma", why)
    win = open_loaded(qtbot, demo_model, engine=engine)
    chat = win.chat
    assert not chat.format_note.isHidden() and chat.format_note.text() == why
    assert "chat format: Gemma." in win.load_bar.status.text()
    assert "From the model: Gemma." in chat.format_box.toolTip()
    chat.format_box.setCurrentIndex(chat.format_box.findData("chatml"))  # the user's own pick needs no reason
    assert chat.format_note.isHidden()
    chat.format_box.setCurrentIndex(0)
    assert not chat.format_note.isHidden() and chat.format_note.text() == why
    # A new chat still says it: it is about the model, not the conversation.
    QTest.keyClick(chat.input, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert not chat.format_note.isHidden()
    win.close()


@pytest.mark.engine
def test_regenerate_edit_and_copy(qtbot, demo_model: Path) -> None:
    win = open_loaded(qtbot, demo_model)
    chat = win.chat
    stats = ask(qtbot, win, "Name a colour.")
    first = chat.conversation.turns[-1].text
    assert first and chat.context_meter.value() == stats.n_prompt + stats.n_gen
    assert f"{stats.n_prompt + stats.n_gen:,} of 1,024 tokens" in chat.context_meter.format()
    # Regenerate: the last reply is replaced, not added to (deterministic preset: the same words again).
    with qtbot.waitSignal(chat.reply_finished, timeout=TIMEOUT):
        qtbot.mouseClick(chat.regenerate_button, Qt.MouseButton.LeftButton)
    assert [t.role for t in chat.conversation.turns] == ["user", "assistant"]
    assert chat.conversation.turns[-1].text == first
    # Copy puts the reply on the clipboard.
    qtbot.mouseClick(chat.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == first
    # Edit last: the message comes back into the box and the exchange leaves the transcript.
    qtbot.mouseClick(chat.edit_button, Qt.MouseButton.LeftButton)
    assert chat.input.toPlainText() == "Name a colour."
    assert chat.conversation.turns == []
    ask(qtbot, win, "Name two colours.")
    assert chat.conversation.turns[0].text == "Name two colours."
    win.close()


@pytest.mark.engine
def test_escape_stops_and_ctrl_n_starts_a_new_chat_keeping_the_system_prompt(qtbot, demo_model: Path) -> None:
    win = open_loaded(qtbot, demo_model)
    chat = win.chat
    chat.system_prompt.setPlainText("Answer in French.")
    chat.max_tokens = 400
    chat.ignore_eos = True
    chat.input.setPlainText("Tell me a long story.")
    with qtbot.waitSignal(chat.reply_finished, timeout=TIMEOUT) as done:
        chat.send()
        qtbot.waitUntil(lambda: len(chat.arrivals) >= 1, timeout=TIMEOUT)
        QTest.keyClick(chat.input, Qt.Key.Key_Escape)
    assert done.args[0].finish_reason == "cancelled" and done.args[0].n_gen < 400
    assert chat.conversation.turns[-1].note == "stopped"
    assert chat.conversation.messages()[0] == p.ChatMessage("system", "Answer in French.")
    QTest.keyClick(chat.input, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert chat.conversation.turns == [] and chat.conversation.system_prompt == "Answer in French."
    win.close()


@pytest.mark.engine
def test_a_full_context_offers_to_drop_the_oldest_turns(qtbot, demo_model: Path) -> None:
    win = open_loaded(qtbot, demo_model, n_ctx=256)
    chat = win.chat
    ask(qtbot, win, "Describe the sea " + "and the waves " * 20, max_tokens=40)
    chat.input.setPlainText("Now describe the mountains " + "and the snow " * 55)
    qtbot.mouseClick(chat.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: chat.notice_button.isVisible(), timeout=TIMEOUT)
    assert "no longer fits the context (256)" in chat.notice.text()
    assert chat.notice_button.text() == "Drop oldest turns and resend"
    assert [t.role for t in chat.conversation.turns] == ["user", "assistant", "user"]  # nothing lost yet
    with qtbot.waitSignal(chat.reply_finished, timeout=TIMEOUT):
        qtbot.mouseClick(chat.notice_button, Qt.MouseButton.LeftButton)
    assert chat.conversation.turns[0].text.startswith("Now describe the mountains")
    assert chat.conversation.turns[-1].role == "assistant" and chat.conversation.turns[-1].text
    win.close()


def test_every_control_has_an_accessible_name_or_text(qtbot, demo_model: Path) -> None:
    win = open_loaded(qtbot, demo_model, engine=FakeEngine())
    kinds = (QAbstractButton, QAbstractSpinBox, QComboBox, QAbstractSlider, QPlainTextEdit)
    unnamed = [
        type(w).__name__
        for kind in kinds
        for w in win.findChildren(kind)
        if w.isVisibleTo(win)
        and not (w.accessibleName() or (isinstance(w, QAbstractButton) and w.text()))
        and not isinstance(w.parent(), QAbstractSpinBox | QComboBox)  # their inner parts
        and not (isinstance(w, QScrollBar) and isinstance(w.parent().parent(), QAbstractScrollArea))
    ]
    assert unnamed == []
    win.close()


@pytest.mark.engine
def test_a_long_streamed_reply_arrives_complete(qtbot, demo_model: Path) -> None:
    # One engine thread: the subject is that every token arrives, and two threads on two busy cores make
    # llama.cpp's spinning threads wait on each other far longer than the reply takes.
    win = open_loaded(qtbot, demo_model, n_ctx=2048, threads=1)
    chat = win.chat
    chat.max_tokens = 1200
    chat.ignore_eos = True
    received: list[str] = []
    original = win.features.bridge.take_tokens  # tap what the bridge hands the pane

    def tap() -> list:
        tokens = original()
        received.extend(t.text for t, _ in tokens)
        return tokens

    win.features.bridge.take_tokens = tap  # type: ignore[method-assign]
    chat.input.setPlainText("Write a very long story about the sea.")
    with qtbot.waitSignal(chat.reply_finished, timeout=TIMEOUT) as done:
        chat.send()
        qtbot.waitUntil(lambda: len(chat.arrivals) >= 1, timeout=TIMEOUT)
        assert chat.streaming  # it streamed: the first tokens were in the pane before the reply ended
    stats: p.ReplyStats = done.args[0]
    reply = chat.conversation.turns[-1].text
    assert stats.n_gen == 1200 and stats.finish_reason == "length"
    assert sum(n for _, n in chat.arrivals) >= 1200  # every token reached the pane
    assert reply == "".join(received)  # in order, nothing dropped or doubled
    win.close()
