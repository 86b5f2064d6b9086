"""The load settings column says a value that will hurt, and scrolling it does not change what it holds."""

from __future__ import annotations

from pathlib import Path

from fake_engine import FakeEngine
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QScrollArea, QToolTip, QWidget
from window_kit import open_window

from gui.core.params import LoadSettings
from tests.i18n_kit import chinese, english_words

__all__ = ["chinese"]  # a fixture, used by name


def type_into(spin: QWidget, text: str) -> None:
    spin.lineEdit().selectAll()  # type: ignore[attr-defined]
    QTest.keyClicks(spin, text)
    QTest.keyClick(spin, Qt.Key.Key_Return)


def test_more_threads_than_cores_is_taken_and_said_beside_the_box(qtbot, demo_model: Path) -> None:
    win = open_window(qtbot, demo_model.parent, demo_model, engine=FakeEngine())
    win.params.logical_cores = 2  # the machine of the report: two logical cores
    threads = win.params.rows["n_threads"]
    type_into(threads.spin, "64")
    said = "Threads: this machine has 2 logical cores; more threads than cores slows decoding."
    assert threads.value() == 64  # taken: settings move between machines
    assert win.params.note.text() == said and win.params.note.isVisible()
    assert QToolTip.isVisible() and said in QToolTip.text()  # beside the box, where the user looks
    assert win.params.settings().n_threads == 64
    type_into(threads.spin, "2")  # back within the cores: the warning goes
    assert not win.params.note.isVisible()
    win.close()


def test_more_threads_than_cores_is_said_in_chinese(qtbot, demo_model: Path, chinese: None) -> None:
    win = open_window(qtbot, demo_model.parent, demo_model, engine=FakeEngine())
    win.params.logical_cores = 2
    type_into(win.params.rows["n_threads"].spin, "64")
    said = win.params.note.text()
    assert "2 个逻辑核心" in said and english_words(said) == [], said
    win.close()


def wheel(widget: QWidget, notches: int = -1) -> None:
    """The mouse wheel turned over the middle of ``widget`` (negative: towards the user, scrolling down)."""
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(
        centre,
        QPointF(widget.mapToGlobal(centre.toPoint())),
        QPoint(0, 0),
        QPoint(0, 120 * notches),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)


def column_of(widget: QWidget) -> QScrollArea:
    parent = widget.parentWidget()
    while not isinstance(parent, QScrollArea):
        assert parent is not None, "the settings are not in a scrolling column"
        parent = parent.parentWidget()
    return parent


def test_the_wheel_over_a_setting_scrolls_the_column_unless_the_setting_has_focus(qtbot, demo_model: Path) -> None:
    win = open_window(
        qtbot, demo_model.parent, demo_model, LoadSettings(n_threads=2, n_ctx=1024, n_batch=512), engine=FakeEngine()
    )
    win.resize(1000, 560)  # short: the column scrolls
    batch = win.params.rows["n_batch"]
    column = column_of(batch.slider)
    bar = column.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    win.chat.input.setFocus()
    for widget in (batch.slider, batch.spin, win.params.choices["cache_type_k"]):
        before = bar.value()
        assert not widget.hasFocus()
        wheel(widget)
        assert batch.value() == 512 and win.params.choices["cache_type_k"].currentText() == "f16"
        assert bar.value() > before or bar.value() == bar.maximum()  # the column scrolled instead
        bar.setValue(0)
    assert bar.value() == 0
    # Clicked or tabbed to, the setting takes the wheel: that is how it is turned on purpose.
    batch.slider.setFocus()
    qtbot.waitUntil(batch.slider.hasFocus)
    wheel(batch.slider, notches=1)
    assert batch.value() != 512
    win.close()
