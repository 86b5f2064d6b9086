"""A preference bound to its widget (gui/ui/preference_binding.py): the stored value is shown, each change the
user makes is kept, through the store that writes behind; the kind of widget follows from the declaration.
Real widgets, a real settings file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_engine import FakeEngine
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QPushButton, QSlider, QSpinBox
from window_kit import open_window

from gui.core.preferences import (
    ALERT_C,
    CAP,
    CAP_WATTS,
    GPU_EXPORTERS,
    INTERVAL_S,
    LANGUAGE,
    MARGIN_MIB,
    SAMPLE_INTERVAL,
    SERVE_HOST,
    SERVE_PORT_NUMBER,
    SERVE_REMOTE,
    THEME,
)
from gui.core.theme import ThemeChoice
from gui.services.history import HistoryStore
from gui.services.settings_store import SettingsStore
from gui.ui.i18n import LanguageBox
from gui.ui.preference_binding import Kind, bind, kind_of, restore
from gui.ui.spec_widgets import float_box, int_box
from gui.ui.theme import ThemeBox, theme

LONG_S = 60.0  # the store's coalescing window: nothing reaches the file before a flush


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "settings.json"


def behind(path: Path) -> SettingsStore:
    return SettingsStore(path, write_behind=True, delay_s=LONG_S)


def kept(path: Path) -> dict[str, object]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_kind_of_widget_follows_from_the_declaration() -> None:
    assert kind_of(CAP_WATTS) is Kind.WHOLE and kind_of(MARGIN_MIB) is Kind.WHOLE
    assert kind_of(ALERT_C) is Kind.NUMBER and kind_of(INTERVAL_S) is Kind.NUMBER
    assert kind_of(SERVE_REMOTE) is Kind.SWITCH and kind_of(SERVE_HOST) is Kind.TEXT
    assert kind_of(THEME) is Kind.CHOICE and kind_of(LANGUAGE) is Kind.CHOICE
    assert CAP_WATTS.spec is CAP and (CAP_WATTS.key, CAP_WATTS.default) == (CAP.key, CAP.default)
    with pytest.raises(TypeError, match="gpu_exporters"):
        kind_of(GPU_EXPORTERS)  # a list has a view of its own, bound by hand


def test_a_spin_box_shows_the_stored_value_and_keeps_each_step(qtbot, path: Path) -> None:
    SettingsStore(path).write(CAP_WATTS, 180)
    store = behind(path)
    spin = int_box(CAP)
    qtbot.addWidget(spin)
    bind(store, CAP_WATTS, spin)
    assert spin.value() == 180 and not store.pending  # showing the stored value writes nothing
    for _ in range(5):
        spin.stepUp()
    assert store.read(CAP_WATTS) == 185 and kept(path)["cap_watts"] == 180  # held, not yet written
    assert store.flush()
    assert SettingsStore(path).read(CAP_WATTS) == 185


def test_a_double_spin_box_keeps_the_number(qtbot, path: Path) -> None:
    store = behind(path)
    box = float_box(SAMPLE_INTERVAL)
    qtbot.addWidget(box)
    bind(store, INTERVAL_S, box)
    assert box.value() == INTERVAL_S.default
    box.setValue(2.5)
    assert store.flush() and SettingsStore(path).read(INTERVAL_S) == 2.5


def test_a_slider_keeps_a_whole_number(qtbot, path: Path) -> None:
    store = behind(path)
    store.write(MARGIN_MIB, 512)
    slider = QSlider(Qt.Orientation.Horizontal)
    qtbot.addWidget(slider)
    slider.setRange(0, 8192)
    bind(store, MARGIN_MIB, slider)
    assert slider.value() == 512
    slider.setValue(2048)
    assert store.flush() and SettingsStore(path).read(MARGIN_MIB) == 2048


def test_a_check_box_keeps_the_switch(qtbot, path: Path) -> None:
    store = behind(path)
    box = QCheckBox("Allow other machines")
    qtbot.addWidget(box)
    bind(store, SERVE_REMOTE, box)
    assert not box.isChecked()
    box.click()  # as the user does
    assert store.read(SERVE_REMOTE) is True
    assert store.flush() and SettingsStore(path).read(SERVE_REMOTE) is True


def test_a_line_is_kept_when_editing_ends_and_a_refused_one_is_not(qtbot, path: Path) -> None:
    store = behind(path)
    store.write(SERVE_HOST, "0.0.0.0")
    line = QLineEdit()
    qtbot.addWidget(line)
    bind(store, SERVE_HOST, line)
    assert line.text() == "0.0.0.0"
    line.setText("192.168.1.5")
    assert store.read(SERVE_HOST) == "0.0.0.0"  # still typing
    line.editingFinished.emit()
    assert store.read(SERVE_HOST) == "192.168.1.5"
    line.setText("bad\0host")
    line.editingFinished.emit()
    assert store.read(SERVE_HOST) == "192.168.1.5"  # the declaration refuses a NUL
    assert store.flush() and SettingsStore(path).read(SERVE_HOST) == "192.168.1.5"


def test_a_list_keeps_what_the_user_picks_not_what_is_shown_from_elsewhere(qtbot, path: Path) -> None:
    store = behind(path)
    store.write(LANGUAGE, "en")
    box = QComboBox()
    qtbot.addWidget(box)
    for code in ("system", "en", "zh_CN"):
        box.addItem(code.upper(), code)
    bind(store, LANGUAGE, box)
    assert box.currentData() == "en"
    box.setCurrentIndex(box.findData("system"))  # shown by code, not picked
    assert store.read(LANGUAGE) == "en"
    box.activated.emit(box.findData("zh_CN"))  # as a click on it does
    assert store.flush() and SettingsStore(path).read(LANGUAGE) == "zh_CN"


def test_restore_only_shows(qtbot, path: Path) -> None:
    """The address the API listens on is kept once listening worked, not as it is typed."""
    SettingsStore(path).write_many({SERVE_PORT_NUMBER: 8123})
    store = behind(path)
    port = QSpinBox()
    qtbot.addWidget(port)
    port.setRange(0, 65535)
    restore(store, SERVE_PORT_NUMBER, port)
    assert port.value() == 8123
    port.setValue(9000)
    assert store.read(SERVE_PORT_NUMBER) == 8123 and not store.pending


def test_a_widget_that_cannot_show_the_preference_is_refused(qtbot, path: Path) -> None:
    store = behind(path)
    line, spin, button = QLineEdit(), QDoubleSpinBox(), QPushButton()
    for widget in (line, spin, button):
        qtbot.addWidget(widget)
    with pytest.raises(TypeError, match="cap_watts is a whole number"):
        bind(store, CAP_WATTS, line)
    with pytest.raises(TypeError, match="cap_watts"):
        bind(store, CAP_WATTS, spin)  # a whole number in a box that takes fractions
    with pytest.raises(TypeError, match="not checkable"):
        bind(store, SERVE_REMOTE, button)
    missing = QComboBox()
    qtbot.addWidget(missing)
    missing.addItem("System", "system")
    missing.addItem("English", "en")
    with pytest.raises(ValueError, match="zh_CN"):
        bind(store, LANGUAGE, missing)  # the list and the declaration must name the same choices
    assert not store.pending


def test_the_theme_and_language_choosers_keep_their_choice_through_the_binding(qtbot, path: Path) -> None:
    store = behind(path)
    themes, languages = ThemeBox(store), LanguageBox(store)
    qtbot.addWidget(themes)
    qtbot.addWidget(languages)
    try:
        themes.activated.emit(themes.findData("dark"))
        languages.activated.emit(languages.findData("zh_CN"))
        assert theme().choice is ThemeChoice.DARK
        assert store.flush()
        again = SettingsStore(path)
        assert again.read(THEME) is ThemeChoice.DARK and again.read(LANGUAGE) == "zh_CN"
        theme().set_choice(ThemeChoice.LIGHT)  # a change made elsewhere is shown, not kept
        assert themes.currentData() == "light" and store.read(THEME) is ThemeChoice.DARK
        assert LanguageBox(SettingsStore(path)).currentData() == "zh_CN"
    finally:
        theme().set_choice(ThemeChoice.SYSTEM)


def test_the_window_closing_right_after_a_change_loses_nothing(qtbot, demo_model: Path, tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    store = behind(path)
    win = open_window(
        qtbot, demo_model.parent, demo_model, engine=FakeEngine(), history=HistoryStore(tmp_path / "h.sqlite3"),
        store=store,
    )  # fmt: skip
    win.monitor.interval_spin.setValue(2.5)
    win.monitor.threshold_spin.setValue(76)
    assert store.pending  # held: the coalescing window is a minute
    win.close()
    assert not store.pending
    stored = kept(path)  # the file itself, as the next start reads it
    assert stored["interval_s"] == 2.5 and stored["alert_c"] == 76
