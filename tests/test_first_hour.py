"""What a new user meets in the first hour: the window says what it does, and does what it says."""

from __future__ import annotations

import os
from pathlib import Path

from fake_engine import FakeEngine
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget
from window_kit import TIMEOUT, load, open_window

from gui.core import protocol as p
from gui.core.chat import format_stats
from gui.core.params import LoadSettings


def test_settings_moved_after_a_load_ask_for_a_reload_and_the_library_marks_the_loaded_file(
    qtbot, demo_model: Path
) -> None:
    win = open_window(qtbot, demo_model.parent, demo_model, engine=FakeEngine())
    assert win.load_bar.load_button.text() == "&Load"
    load(qtbot, win)
    item = win.picker.topLevelItem(0).child(0)
    assert item.font(0).bold() and not item.icon(0).isNull()
    win.params.rows["n_ctx"].set_value(2048)
    assert (
        win.load_bar.load_button.text() == "Re&load to apply"
        and "changed since the load" in win.load_bar.load_button.toolTip()
    )
    win.params.rows["n_ctx"].set_value(1024)  # back to what is loaded
    assert win.load_bar.load_button.text() == "&Load"
    win.features.load.unload()
    assert not item.font(0).bold() and item.icon(0).isNull()
    win.close()


def test_the_load_line_counts_layers_as_the_slider_does(qtbot, demo_model: Path) -> None:
    win = open_window(qtbot, demo_model.parent, demo_model, engine=FakeEngine())
    load(qtbot, win)
    # The test engine is a CPU build, as the default llama-cpp-python is.
    assert (
        "context 1,024, all 31 layers on the CPU (this engine build has no GPU offload)" in win.load_bar.status.text()
    )
    win.close()


def test_a_reply_stopped_before_its_first_token_has_no_first_token_time() -> None:
    stats = p.ReplyStats(40, 40, 0, 0.0, 120.0, 0.0, 0.0, "cancelled")
    line = format_stats(stats)
    assert line == "0 tokens · prompt 333.3 tok/s (40 of 40 computed) · stopped"


def test_the_keyboard_alone_is_enough(qtbot, demo_model: Path) -> None:
    win = open_window(qtbot, demo_model.parent, demo_model, engine=FakeEngine())
    win.activateWindow()
    qtbot.waitUntil(lambda: win.chat.input.hasFocus(), timeout=5000)  # typing first is typing a message

    # Tab leaves the system prompt instead of typing a tab into it; stray whitespace is never sent.
    win.chat.system_prompt.setFocus()
    QTest.keyClicks(win.chat.system_prompt, "  Be brief. ")
    QTest.keyClick(win.chat.system_prompt, Qt.Key.Key_Tab)
    assert not win.chat.system_prompt.hasFocus() and "\t" not in win.chat.system_prompt.toPlainText()
    assert win.chat.conversation.messages()[0].content == "Be brief."

    with qtbot.waitSignal(win.features.load.model_loaded, timeout=TIMEOUT):
        QTest.keyClick(win, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    assert win.chat.input.hasFocus()  # loaded: ready to type
    QTest.keyClick(win, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert win.history.search.hasFocus()
    QTest.keyClick(win, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert win.tabs.currentWidget() is win.monitor
    QTest.keyClick(win, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClick(win.chat, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert win.chat.input.hasFocus()

    # Tab walks the window from the library down the left column, then through the chat.
    order: list[QWidget] = []
    win.picker.setFocus()
    for _ in range(80):
        widget = QApplication.focusWidget()
        if widget is not None and widget not in order:
            order.append(widget)
        QTest.keyClick(widget or win, Qt.Key.Key_Tab)
    wanted = [
        win.picker,
        win.params.rows["n_ctx"].spin,
        win.plan_panel.margin,
        win.load_bar.load_button,
        win.chat.input,
    ]
    assert all(w in order for w in wanted), [type(w).__name__ for w in order]
    positions = [order.index(w) for w in wanted]
    assert positions == sorted(positions)
    win.close()


def test_auto_fit_says_what_it_changed_and_the_empty_chat_says_what_to_do(qtbot, tmp_path: Path) -> None:
    from model_shapes import SHAPES, write_shape

    folder = tmp_path / "models"
    folder.mkdir()
    model = write_shape(folder / "Qwen3.5-27B-Q4_K_M.gguf", SHAPES["qwen35-27b"])
    win = open_window(qtbot, folder, model, LoadSettings(n_threads=2, n_ctx=8192), engine=FakeEngine())
    assert "Load a model" in win.chat.transcript.toPlainText()
    win.plan_panel.select_target("v100-16gb")
    qtbot.mouseClick(win.plan_panel.auto_fit_button, Qt.MouseButton.LeftButton)
    note = win.params.note.text()
    assert note.startswith("Auto-fit: GPU layers 65 → ") and win.params.note.isVisible()
    win.plan_panel.select_target("custom")
    labels = [label.text() for label in win.plan_panel.custom_labels if label.isVisible()]
    assert labels == ["Card memory", "Memory bandwidth"]
    win.close()


def test_a_reply_far_below_the_ceiling_gets_a_hint_once(qtbot, demo_model: Path) -> None:
    engine = FakeEngine(reply=" ".join(["word"] * 40))
    engine.decode_tok_s = 1.0  # far below what this model could do here
    cores = os.cpu_count() or 1
    win = open_window(
        qtbot, demo_model.parent, demo_model, LoadSettings(n_threads=cores, n_ctx=1024), engine=engine,
        also=lambda w: [w.features.machine.ram_measured],
    )  # fmt: skip
    load(qtbot, win)
    hints: list[str] = []
    for _ in range(2):
        win.chat.input.setPlainText("go")
        with qtbot.waitSignal(win.chat.reply_finished, timeout=TIMEOUT):
            win.chat.send()
        hints.append(win.chat.notice.text())
        win.chat.show_notice("")  # dismissed: the second reply does not bring it back
    first, second = hints
    assert first.startswith("Slower than it could be: 1.0 tok/s is ") and f"{cores} threads use every logical" in first
    assert second == ""
    win.close()


def test_the_window_opens_no_larger_than_the_screen(qtbot, demo_model: Path) -> None:
    """On a screen shorter than 900 px (here the offscreen one, 800x800) Load is not left below its edge."""
    win = open_window(qtbot, demo_model.parent, demo_model, engine=FakeEngine())
    room = win.screen().availableGeometry()
    assert win.width() <= room.width() and win.height() <= room.height()
    load_button = win.load_bar.load_button.mapTo(win, win.load_bar.load_button.rect().bottomRight())
    assert win.rect().contains(load_button)
