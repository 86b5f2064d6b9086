"""The window by keyboard: each Alt+letter names one thing among what is shown at once (in English and in
Chinese), and the load settings are a shortcut away from the message box."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_engine import FakeEngine
from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QApplication, QGroupBox, QLabel, QTabBar, QTabWidget, QWidget
from window_kit import TIMEOUT, load, open_window

from gui.ui.main_window import MainWindow
from tests.i18n_kit import chinese, english

__all__ = ["chinese", "english"]  # fixtures, used by name


def mnemonic(text: str) -> str | None:
    """The letter Alt takes to this text ("&Rescan" -> "r"); "&&" is an ampersand shown as it is."""
    found = re.search(r"&([^&])", text.replace("&&", ""))
    return found.group(1).lower() if found else None


def shown_texts(window: QWidget) -> Iterator[tuple[str, str]]:
    """What Alt can reach in the window as it is now: visible buttons, tabs, labels naming a box, group boxes
    with a check box, each as (kind, text)."""
    for widget in [window, *window.findChildren(QWidget)]:
        if not widget.isVisible():
            continue
        if isinstance(widget, QAbstractButton):
            yield "button", widget.text()
        elif isinstance(widget, QLabel) and widget.buddy() is not None:
            yield "label", widget.text()
        elif isinstance(widget, QGroupBox) and widget.isCheckable():
            yield "group box", widget.title()
        elif isinstance(widget, QTabBar):
            for i in range(widget.count()):
                if widget.isTabVisible(i):
                    yield "tab", widget.tabText(i)


def clashes(window: QWidget) -> dict[str, list[str]]:
    by_key: dict[str, list[str]] = {}
    for kind, text in shown_texts(window):
        key = mnemonic(text)
        if key is not None:
            by_key.setdefault(key, []).append(f"{kind} {text!r}")
    return {key: named for key, named in by_key.items() if len(named) > 1}


def every_page(win: MainWindow) -> Iterator[str]:
    """Show each page of the window in turn (and each page of a page's own tabs); yields where it is."""
    app = QApplication.instance()
    assert app is not None
    for i in range(win.tabs.count()):
        win.tabs.setCurrentIndex(i)
        app.processEvents()
        inner = [t for t in win.tabs.currentWidget().findChildren(QTabWidget) if t.isVisible()]
        if not inner:
            yield win.tabs.tabText(i)
        for tabs in inner:
            for j in range(tabs.count()):
                tabs.setCurrentIndex(j)
                app.processEvents()
                yield f"{win.tabs.tabText(i)} / {tabs.tabText(j)}"


def walk(qtbot, folder: Path, model: Path) -> dict[str, dict[str, list[str]]]:
    """Every page, in the states that show more buttons: as it opens, then with a model loaded and a setting
    moved since (Load reads "Reload to apply"), a chat written and deleted (Undo), a reply being written."""
    engine = FakeEngine()
    win = open_window(qtbot, folder, model, engine=engine)
    found = {}

    def look(state: str) -> None:
        for where in every_page(win):
            if clash := clashes(win):
                found[f"{state}: {where}"] = clash
        win.tabs.setCurrentIndex(0)

    look("opened")
    load(qtbot, win)
    win.chat.input.setPlainText("hello")
    with qtbot.waitSignal(win.chat.reply_finished, timeout=TIMEOUT):
        win.chat.send()
    context = win.params.rows["n_ctx"]
    context.set_value(context.value() // 2)
    qtbot.waitUntil(lambda: win.load_bar.load_button.text() != tr_load())
    qtbot.waitUntil(lambda: win.history.current_id is not None)
    win.history.delete(win.history.current_id)
    qtbot.waitUntil(win.history.undo_box.isVisible)
    look("loaded, settings moved, a chat deleted")
    win.close()
    return found


def tr_load() -> str:
    return QCoreApplication.translate("load_bar", "&Load")


def test_no_two_things_shown_at_once_share_an_alt_letter(qtbot, demo_model: Path, english: None) -> None:
    assert walk(qtbot, demo_model.parent, demo_model) == {}


def test_no_two_things_shown_at_once_share_an_alt_letter_in_chinese(qtbot, demo_model: Path, chinese: None) -> None:
    assert walk(qtbot, demo_model.parent, demo_model) == {}


@pytest.mark.parametrize("language", ["english", "chinese"])
def test_the_load_settings_are_one_shortcut_from_the_message_box(
    qtbot, demo_model: Path, language: str, request: pytest.FixtureRequest
) -> None:
    request.getfixturevalue(language)
    win = open_window(qtbot, demo_model.parent, demo_model, engine=FakeEngine())
    win.activateWindow()
    win.chat.input.setFocus()
    qtbot.waitUntil(win.chat.input.hasFocus)
    QTest.keyClick(
        win.chat.input, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    first = win.params.rows["n_gpu_layers"].slider
    qtbot.waitUntil(first.hasFocus)
    assert "Ctrl+Shift+L" in first.toolTip()  # the shortcut is said where the user finds the slider
    # From there the settings follow in order: each slider, then its box, then the next setting.
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is win.params.rows["n_gpu_layers"].spin
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)  # past the pin button
    assert QApplication.focusWidget() is win.params.rows["n_ctx"].slider
    win.close()
